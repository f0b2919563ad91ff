"""Localization scoring: did the agent name the causal service (or an accepted alias)?

Names compare case-insensitively after dropping a kind prefix ("deployment/fares", "svc/fares")
and a DNS suffix ("fares.ns.svc.cluster.local"). The structured ``causal_service`` decides when
given. Free-text fallback (no ``causal_service``): the causal service or an alias named in the
summary as a whole word scores 1.0 (a good explanation also names the alerting, symptomatic
services, so naming those is not penalised). For no-fault tasks (no causal service) naming no
service is right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..models.trial import Diagnosis
from ..tasks.model import GroundTruth

_KIND_PREFIX = re.compile(r"^(deployments?|deploy|services?|svc|statefulsets?|sts|daemonsets?|ds|pods?|po|"
                          r"replicasets?|rs|configmaps?|cm|secrets?|apps)/", re.IGNORECASE)


@dataclass(frozen=True)
class LocalizationScore:
    score: float
    answer: str | None = None
    source: Literal["field", "summary", "none"] = "none"


def normalize_service(name: str) -> str:
    text = name.strip().lower()
    while _KIND_PREFIX.match(text):
        text = _KIND_PREFIX.sub("", text, count=1)
    text = text.split("/")[-1]
    return text.split(".", 1)[0].strip()


def accepted_names(truth: GroundTruth) -> set[str]:
    if not truth.causal_service:
        return set()
    names = [truth.causal_service, *truth.service_aliases.get(truth.causal_service, [])]
    return {normalize_service(n) for n in names if normalize_service(n)}


def _named_in(text: str, name: str) -> bool:
    return re.search(rf"(?<![a-z0-9\-]){re.escape(name)}(?![a-z0-9\-])", text.lower()) is not None


def score_localization(truth: GroundTruth, diagnosis: Diagnosis | None) -> LocalizationScore:
    accepted = accepted_names(truth)
    answer = (diagnosis.causal_service or "").strip() if diagnosis else ""
    if not accepted:  # no fault: the right answer is to blame nothing
        return LocalizationScore(1.0 if not answer else 0.0, answer or None, "field" if answer else "none")
    if answer:
        return LocalizationScore(1.0 if normalize_service(answer) in accepted else 0.0, answer, "field")
    summary = diagnosis.summary if diagnosis else ""
    hit = next((n for n in sorted(accepted) if _named_in(summary, n)), None)
    return LocalizationScore(1.0, hit, "summary") if hit else LocalizationScore(0.0)
