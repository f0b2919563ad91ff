"""Localization: the causal service or an alias, kind prefixes and DNS suffixes ignored."""

from __future__ import annotations

import pytest

from ontrial.graders.localization import normalize_service, score_localization
from ontrial.models.trial import Diagnosis
from ontrial.tasks.model import GroundTruth

TRUTH = GroundTruth(root_cause=["missing-configmap"], causal_service="timetable",
                    service_aliases={"timetable": ["timetable-settings", "schedules"]},
                    symptomatic_services=["gangway"])


@pytest.mark.parametrize("answer, score", [
    ("timetable", 1.0),
    ("Timetable", 1.0),
    ("deployment/timetable", 1.0),
    ("deploy/timetable", 1.0),
    ("svc/timetable", 1.0),
    ("timetable.ot-1a2b3c4d5e.svc.cluster.local", 1.0),
    ("configmap/timetable-settings", 1.0),
    ("schedules", 1.0),
    ("gangway", 0.0),
    ("timetable-v2", 0.0),
])
def test_structured_answer(answer, score):
    assert score_localization(TRUTH, Diagnosis(causal_service=answer)).score == score


@pytest.mark.parametrize("summary, score", [
    ("gangway 5xx come from timetable pods failing to start", 1.0),
    ("the schedules service lost its settings", 1.0),
    ("gangway is broken", 0.0),
    ("timetable-v2 is broken", 0.0),
    ("", 0.0),
])
def test_free_text_fallback(summary, score):
    result = score_localization(TRUTH, Diagnosis(summary=summary))
    assert result.score == score
    assert result.source == ("summary" if score else "none")


def test_structured_answer_wins_over_the_summary():
    result = score_localization(TRUTH, Diagnosis(causal_service="gangway", summary="timetable is broken"))
    assert (result.score, result.answer, result.source) == (0.0, "gangway", "field")


def test_no_fault_task_wants_no_service_named():
    truth = GroundTruth(root_cause=["no-fault"])
    assert score_localization(truth, Diagnosis()).score == 1.0
    assert score_localization(truth, Diagnosis(causal_service="gangway")).score == 0.0


def test_normalize_service():
    assert normalize_service(" StatefulSets/DB.ns.svc ") == "db"
