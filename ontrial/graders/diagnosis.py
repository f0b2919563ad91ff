"""Root-cause diagnosis scoring: the agent's labels against the task's accepted labels.

Rules (pure, deterministic):
- Labels match case-, space-, '-', '_', '.' and '/'-insensitively ("Memory limit" == "memory_limit").
- A task's ``ground_truth.root_cause`` lists *accepted* labels: naming any one of them is right.
- All of the agent's labels right → 1.0; some right plus wrong extras → 0.5 (extras listed);
  none right (or no answer) → 0.0.
- Free-text fallback: when the agent gave no labels, its ``summary`` is searched for the accepted
  labels (separators optional, so "OOM killed" finds "oomkilled"). Extras in free text are the
  labels of *other* root-cause families from ``ROOT_CAUSE_FAMILIES`` mentioned in the summary, so
  listing every possible cause in prose scores 0.5, not 1.0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..models.trial import Diagnosis

_SEPARATORS = re.compile(r"[\s\-_./]+")
_SEP_CLASS = r"[\s\-_./]*"

# Label families of the root causes the catalogue knows. Used only to spot wrong causes named in
# free text; structured labels are judged against the task's own accepted list. Symptoms that many
# causes share ("OOMKilled", "out of memory") are deliberately absent: describing them is not
# naming a wrong cause.
ROOT_CAUSE_FAMILIES: Mapping[str, tuple[str, ...]] = {
    "memory-limit-too-low": ("memory-limit-too-low", "memory-limit-cut", "insufficient-memory-limit",
                             "memory-limit-lowered", "limitrange-default-limit",
                             "default-memory-limit"),
    "memory-leak": ("memory-leak", "leaking-memory", "unbounded-memory-growth"),
    "bad-image": ("bad-image-tag", "image-not-found", "nonexistent-image-tag", "image-pull-error",
                  "image-pull-backoff", "err-image-pull", "wrong-image-tag", "invalid-image"),
    "missing-configmap": ("missing-configmap", "configmap-deleted", "configmap-not-found",
                          "create-container-config-error"),
    "configmap-drift": ("configmap-drift", "configmap-key-missing", "missing-configmap-key", "wrong-config-value",
                        "truncated-schedule-window"),
    "missing-secret": ("missing-secret", "secret-deleted", "secret-not-found"),
    "missing-env-var": ("missing-env-var", "missing-environment-variable", "env-var-removed"),
    "wrong-env-value": ("wrong-env-value", "incorrect-env-value", "wrong-endpoint-config", "wrong-port",
                        "port-mismatch"),
    "wrong-currency": ("wrong-currency", "currency-mismatch"),
    "duplicate-writes": ("duplicate-writes", "duplicate-records", "non-idempotent-retry"),
    "missing-config-file": ("missing-config-file", "missing-file", "config-file-not-mounted"),
    "service-port-mismatch": ("wrong-target-port", "service-port-mismatch", "target-port-misconfigured"),
    "service-selector": ("wrong-service-selector", "service-selector-mismatch", "no-endpoints", "selector-typo"),
    "readiness-probe": ("readiness-probe-misconfigured", "bad-readiness-probe", "readiness-probe-failure",
                        "wrong-probe-path", "health-endpoint-moved"),
    "liveness-probe": ("liveness-probe-misconfigured", "bad-liveness-probe", "liveness-probe-failure",
                       "liveness-probe-too-aggressive"),
    "scaled-to-zero": ("scaled-to-zero", "zero-replicas", "replicas-scaled-down"),
    "network-policy": ("network-policy-block", "network-policy-blocking-traffic"),
    "resource-quota": ("resource-quota-exceeded", "quota-exceeded", "resource-request-too-large",
                       "leftover-debug-pod"),
    "unschedulable": ("node-selector-mismatch", "unschedulable", "insufficient-node-resources", "no-matching-node"),
    "cpu-limit-too-low": ("cpu-limit-too-low", "cpu-throttling"),
    "dns-failure": ("dns-failure", "dns-resolution-failure"),
    "code-defect": ("code-defect", "application-bug", "buggy-release", "renamed-setting", "config-key-renamed"),
    "no-fault": ("no-fault", "no-incident", "false-alarm", "false-positive", "noisy-alert"),
}


@dataclass(frozen=True)
class DiagnosisScore:
    score: float
    matched: tuple[str, ...] = ()  # accepted labels the agent named
    extras: tuple[str, ...] = ()  # what the agent named that is not accepted
    source: Literal["labels", "summary", "none"] = "none"


def normalize_label(text: str) -> str:
    """'Memory Limit_too-low' -> 'memorylimittoolow'."""
    return _SEPARATORS.sub("", text.strip().lower())


def mentions(text: str, label: str) -> bool:
    """Whether ``label`` appears in ``text`` as a whole word, separators between its characters optional."""
    chars = normalize_label(label)
    if not chars:
        return False
    pattern = r"(?<![a-z0-9])" + _SEP_CLASS.join(re.escape(c) for c in chars) + r"(?![a-z0-9])"
    return re.search(pattern, text.lower()) is not None


def _score(right: Sequence[str], wrong: Sequence[str], source: Literal["labels", "summary"]) -> DiagnosisScore:
    if not right:
        return DiagnosisScore(0.0, (), tuple(wrong), source)
    return DiagnosisScore(1.0 if not wrong else 0.5, tuple(right), tuple(wrong), source)


def score_diagnosis(accepted: Sequence[str], diagnosis: Diagnosis | None,
                    families: Mapping[str, Iterable[str]] = ROOT_CAUSE_FAMILIES) -> DiagnosisScore:
    """Score ``diagnosis`` against the ``accepted`` root-cause labels (see the module rules)."""
    if diagnosis is None:
        return DiagnosisScore(0.0)
    accepted_norm = {normalize_label(a): a for a in accepted}
    labels = _dedupe(l for l in diagnosis.root_cause if normalize_label(l))
    if labels:
        right = [accepted_norm[normalize_label(l)] for l in labels if normalize_label(l) in accepted_norm]
        wrong = [l for l in labels if normalize_label(l) not in accepted_norm]
        return _score(_dedupe(right), wrong, "labels")
    if not diagnosis.summary.strip():
        return DiagnosisScore(0.0)
    text = diagnosis.summary
    right = [a for a in accepted if mentions(text, a)]
    wrong = []
    for family, members in families.items():
        members = tuple(members)
        if any(normalize_label(m) in accepted_norm for m in (family, *members)):
            continue  # the right family: its synonyms are not wrong answers
        if any(mentions(text, m) for m in members):
            wrong.append(family)
    return _score(right, wrong, "summary")


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = normalize_label(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
