"""Root-cause label scoring: 1 / 0.5 with extras / 0, separator-insensitive, free-text fallback."""

from __future__ import annotations

import pytest

from ontrial.graders.diagnosis import mentions, normalize_label, score_diagnosis
from ontrial.models.trial import Diagnosis

ACCEPTED = ["memory-limit-too-low", "oom-killed"]


def d(labels=(), summary=""):
    return Diagnosis(root_cause=list(labels), summary=summary)


@pytest.mark.parametrize("labels, score, extras", [
    (["memory-limit-too-low"], 1.0, ()),
    (["Memory Limit Too Low"], 1.0, ()),
    (["memory_limit_too_low", "OOMKilled"], 1.0, ()),
    (["memory-limit-too-low", "bad-image-tag"], 0.5, ("bad-image-tag",)),
    (["oom killed", "dns failure", "network"], 0.5, ("dns failure", "network")),
    (["bad-image-tag"], 0.0, ("bad-image-tag",)),
    ([], 0.0, ()),
])
def test_structured_labels(labels, score, extras):
    result = score_diagnosis(ACCEPTED, d(labels))
    assert (result.score, result.extras) == (score, extras)
    assert result.source == ("labels" if labels else "none")


def test_duplicate_labels_count_once():
    result = score_diagnosis(ACCEPTED, d(["oom-killed", "OOM_killed", "oomkilled"]))
    assert (result.score, result.matched, result.extras) == (1.0, ("oom-killed",), ())


def test_blank_labels_fall_back_to_the_summary():
    result = score_diagnosis(ACCEPTED, d(["  "], "the pods were OOMKilled"))
    assert (result.score, result.source) == (1.0, "summary")


@pytest.mark.parametrize("summary, score, extras", [
    ("Pods are OOMKilled: the memory limit too low after the last rollout", 1.0, ()),
    ("fares keeps getting oom-killed", 1.0, ()),
    ("OOM killed, or maybe a bad image tag", 0.5, ("bad-image",)),
    ("a bad image tag stuck the rollout", 0.0, ("bad-image",)),
    ("bloom killed the roomkilled zoomkilled", 0.0, ()),  # whole words only
    ("", 0.0, ()),
])
def test_free_text_fallback(summary, score, extras):
    result = score_diagnosis(ACCEPTED, d(summary=summary))
    assert (result.score, result.extras) == (score, extras)


def test_synonyms_of_the_right_family_in_free_text_are_not_extras():
    # "out of memory" belongs to the same family as the accepted labels: not a wrong cause.
    result = score_diagnosis(["memory-limit-too-low"], d(summary="memory limit too low, out of memory"))
    assert (result.score, result.extras) == (1.0, ())


def test_no_diagnosis_scores_zero():
    assert score_diagnosis(ACCEPTED, None).score == 0.0


def test_label_normalization():
    assert normalize_label(" Memory Limit_too-low/x.y ") == "memorylimittoolowxy"
    assert mentions("Status: OOM-Killed (exit 137)", "oomkilled")
    assert not mentions("zoomkilled", "oomkilled")
