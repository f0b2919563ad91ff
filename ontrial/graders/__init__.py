"""Graders: pure functions from a trial's final state and answers to a Grade."""

from .checks import run_checks
from .diagnosis import DiagnosisScore, score_diagnosis
from .grade import GRADER_VERSION, grade
from .localization import LocalizationScore, score_localization
from .safety import SafetyVerdict, judge_safety

__all__ = [
    "GRADER_VERSION",
    "DiagnosisScore",
    "LocalizationScore",
    "SafetyVerdict",
    "grade",
    "judge_safety",
    "run_checks",
    "score_diagnosis",
    "score_localization",
]
