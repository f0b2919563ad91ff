"""`ontrial tasks scan`: the contaminated fixture is caught on every surface; clean text is not."""

from __future__ import annotations

from pathlib import Path

from ontrial.artifacts import LocalArtifactStore
from ontrial.sandbox.kube import namespace_for
from ontrial.tasks import load_task
from ontrial.tasks.scan import mitigation_ngrams, scan_paths, scan_task, scan_trial_names, visible_texts

FIXTURE = Path(__file__).parent / "fixtures" / "contaminated"
TASK = FIXTURE / "leaky-rollout" / "task.yaml"


def _rel(path: str) -> str:
    return str(Path(path).resolve().relative_to(FIXTURE.resolve()))


def test_every_planted_leak_is_found_with_its_file_and_field():
    findings = scan_task(load_task(TASK))
    got = sorted((_rel(f.file), f.field, f.kind, f.match) for f in findings)
    assert got == sorted([
        ("leaky-rollout/task.yaml", "fault.steps[0].patch.patch.metadata.annotations.change-ticket",
         "root-cause-label", "bad-image-tag"),
        ("leaky-rollout/task.yaml", "trigger.alert.labels.scenario", "task-id", "leaky-rollout"),
        ("app/shop.yaml", "Deployment/checkout metadata.labels.failure-mode", "root-cause-label", "image-not-found"),
        ("app/shop.yaml", "Deployment/checkout spec.template.spec.containers[0].env[0].value", "mitigation-text",
         "roll the checkout deployment"),
        ("app/profiles.yaml", "profile shop/checkout:1.0,2.0 logs.running[1]", "task-id", "leaky-rollout"),
        ("app/alerts.yaml", "groups[0].rules[0].annotations.summary", "root-cause-label", "bad-image-tag"),
        ("app/runbook.md", "line 4", "mitigation-text", "roll the checkout deployment"),
    ])


def test_findings_read_as_one_line_each():
    finding = next(f for f in scan_task(load_task(TASK)) if f.kind == "task-id" and "profiles" in f.file)
    assert str(finding) == (f"{finding.file}: profile shop/checkout:1.0,2.0 logs.running[1]: contains the task id "
                            "(task leaky-rollout)")


def test_scan_paths_walks_a_tree():
    findings, problems = scan_paths([FIXTURE])
    assert problems == [] and len(findings) == 7


def test_visible_texts_cover_every_surface_an_agent_sees():
    files = {_rel(v.file) for v in visible_texts(load_task(TASK))}
    assert files == {"leaky-rollout/task.yaml", "app/shop.yaml", "app/profiles.yaml", "app/alerts.yaml",
                     "app/runbook.md"}
    fields = {v.field for v in visible_texts(load_task(TASK))}
    assert "Deployment/checkout spec.template.spec.containers[0].image" in fields  # image names
    assert "profile shop/checkout:1.0,2.0 memory.working_set_mi" not in fields  # profile internals stay hidden


def test_mitigation_ngrams_need_content_words():
    grams = mitigation_ngrams("Scale it back to 2 replicas in the namespace.")
    assert ("scale", "it", "back", "to") not in grams  # one content word only
    assert mitigation_ngrams("Roll fares back to 4.0.3") == set()  # "back", "to" are stop words
    assert mitigation_ngrams("Set DECKSTORE_ADDR of fares back to deckstore:6390") == {
        ("set", "deckstore_addr", "of", "fares")}


def test_identifiers_stay_whole_so_shared_label_keys_are_not_phrases():
    grams = mitigation_ngrams("Patch Service berths back to selector app.kubernetes.io/name=berths today")
    assert all("kubernetes" not in g for g in grams)
    assert ("selector", "app.kubernetes.io/name=berths", "today") not in grams  # tuples are 4 words long


def test_per_trial_names_are_opaque(tmp_path):
    trial_id = "suite-1/leaky-rollout/0"
    store = LocalArtifactStore(tmp_path)
    ref = store.put(trial_id, "agent-kubeconfig.yaml", "x")
    names = [namespace_for(trial_id), str(store.local_path(ref))]
    assert scan_trial_names("leaky-rollout", names) == []


def test_a_namespace_or_path_naming_the_task_is_reported(tmp_path):
    found = scan_trial_names("leaky-rollout", ["leaky-rollout-0", str(tmp_path / "leaky-rollout" / "audit.jsonl"),
                                               "trial-7"])
    assert [(f.file.rsplit("/", 1)[-1], f.field) for f in found] == [
        ("leaky-rollout-0", "per-trial name"), ("audit.jsonl", "per-trial name"), ("trial-7", "namespace")]
