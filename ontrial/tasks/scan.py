"""`ontrial tasks scan`: contamination — does anything an agent can see give the answer away?

An agent sees the app (manifests: names, labels, annotations, env, commands, image names), what
the fault leaves behind, the alert it is handed, the alerting rules, the runbooks, and what the
images do (workload profiles: log lines, image tags, the settings and files they ask for, metric
names). None of it may contain the task id, a ground-truth root-cause label, or a distinctive
phrase of the mitigation text. Per-trial names (namespaces, artifact paths) must be opaque.

Every finding names the file and the field (or line) that holds the text, so it can be fixed.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..graders.diagnosis import normalize_label
from .loader import collect_many
from .model import Task
from .problems import TaskProblem
from .yamlpos import format_path

MIN_LABEL_CHARS = 5  # shorter labels ("oom") are ordinary words in logs and names
NGRAM = 4  # mitigation phrases: runs of this many words...
MIN_CONTENT_WORDS = 3  # ...with at least this many that are not stop words
STOP_WORDS = frozenset("""a an and are as at be back by do does for from has have if in into is it its not of
on or so than that the then this to up was were which while with without""".split())
OPAQUE_NAMESPACE = re.compile(r"^ot-[0-9a-f]{10}$")


@dataclass(frozen=True)
class Visible:
    """One piece of text an agent can see: the file holding it and where in that file.

    ``path`` locates it in the task file: the field itself, or the ``app`` list naming its file."""

    file: str
    field: str
    text: str
    path: tuple = ()


@dataclass(frozen=True, order=True)
class Finding:
    task_id: str
    file: str
    field: str
    kind: str  # task-id | root-cause-label | mitigation-text | trial-name
    match: str
    path: tuple = field(default=(), compare=False)  # where the task file refers to it (see Visible)

    @property
    def what(self) -> str:
        return {"task-id": "the task id", "root-cause-label": f"root-cause label {self.match!r}",
                "mitigation-text": f"mitigation phrase {self.match!r}",
                "trial-name": f"a non-opaque per-trial name {self.match!r}"}[self.kind]

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: contains {self.what} (task {self.task_id})"


# -- what an agent can see ----------------------------------------------------------------------------

def _strings(value: Any, path: tuple = (), keys: bool = True) -> Iterator[tuple[tuple, str]]:
    """Every string in ``value`` with its path; mapping keys too when ``keys`` (labels are keys)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if keys:
                yield path + (str(key),), str(key)
            yield from _strings(item, path + (str(key),), keys)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, path + (index,), keys)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield path, str(value)


def _shown(task: Task, rel: str) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(str(task.source_path)), rel))


def _docs(path: Path) -> list[Any]:
    return _parse(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> list[Any]:
    """Documents of a YAML stream (a top-level list counts as many); parsed once per distinct text."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs: list[Any] = []
    for doc in yaml.load_all(text, Loader=loader):
        docs.extend(doc if isinstance(doc, list) else [doc])
    return [d for d in docs if d is not None]


def _manifests(task: Task) -> Iterator[Visible]:
    for index, rel in enumerate(task.app.manifests):
        for obj in _docs(task.base_dir / rel):
            if not isinstance(obj, dict):
                continue
            name = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
            for inner, text in _strings(obj):
                yield Visible(_shown(task, rel), f"{name} {format_path(inner)}", text, ("app", "manifests", index))


PROFILE_VISIBLE = ("image", "tags", "logs", "requires_env", "requires_files", "http_paths", "telemetry")


def _profiles(task: Task) -> Iterator[Visible]:
    """The parts of a workload profile that surface: log lines, image names and tags, the env vars
    and files an image asks for, served paths, metric and dependency names."""
    for index, rel in enumerate(task.app.profiles):
        for doc in _docs(task.base_dir / rel):
            if not isinstance(doc, dict):
                continue
            image = f"{doc.get('image')}:{','.join(str(t) for t in doc.get('tags') or [])}"
            for key in PROFILE_VISIBLE:  # values only: the profile's own field names never surface
                for inner, text in _strings(doc.get(key), (key,), keys=False):
                    yield Visible(_shown(task, rel), f"profile {image} {format_path(inner)}", text,
                                  ("app", "profiles", index))


def _rules(task: Task) -> Iterator[Visible]:
    for index, rel in enumerate(task.app.alert_rules):
        for doc in _docs(task.base_dir / rel):
            for inner, text in _strings(doc):
                yield Visible(_shown(task, rel), format_path(inner), text, ("app", "alert_rules", index))


def _runbooks(task: Task) -> Iterator[Visible]:
    for index, rel in enumerate(task.app.runbooks):
        text = (task.base_dir / rel).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield Visible(_shown(task, rel), f"line {number}", line, ("app", "runbooks", index))


def _task_file(task: Task) -> Iterator[Visible]:
    """What the task file itself puts in front of the agent: the fault's traces and the alert."""
    where = str(task.source_path)
    for index, step in enumerate(task.fault.steps):
        action, spec = step.action
        for inner, text in _strings(spec.model_dump(mode="json")):
            path = ("fault", "steps", index, action) + inner
            yield Visible(where, format_path(path), text, path)
    for inner, text in _strings(task.trigger.alert.model_dump(mode="json")):
        path = ("trigger", "alert") + inner
        yield Visible(where, format_path(path), text, path)


def visible_texts(task: Task) -> Iterator[Visible]:
    """Every string of a loaded task an agent can observe during a trial."""
    yield from _manifests(task)
    yield from _task_file(task)
    yield from _rules(task)
    yield from _runbooks(task)
    yield from _profiles(task)


# -- what must not be in it ---------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9](?:[a-z0-9_./:=@-]*[a-z0-9])?")


@functools.lru_cache(maxsize=1024)
def _mention_pattern(label: str) -> re.Pattern[str] | None:
    """``graders.diagnosis.mentions`` as one compiled pattern: the label as a whole word, separators
    between its characters optional."""
    chars = normalize_label(label)
    if not chars:
        return None
    return re.compile(r"(?<![a-z0-9])" + r"[\s\-_./]*".join(re.escape(c) for c in chars) + r"(?![a-z0-9])")


def mentions(text: str, label: str) -> bool:
    pattern = _mention_pattern(label)
    return pattern is not None and pattern.search(text.lower()) is not None


def _words(text: str) -> list[str]:
    """Words, keeping identifiers whole ("app.kubernetes.io/name=berths", "/etc/x.conf", "svc:8080")."""
    return _TOKEN.findall(text.lower())


def mitigation_ngrams(text: str, n: int = NGRAM, min_content: int = MIN_CONTENT_WORDS) -> set[tuple[str, ...]]:
    """Distinctive word n-grams of a mitigation text: ``n`` consecutive words, enough of them content."""
    words = _words(text)
    grams = set()
    for i in range(len(words) - n + 1):
        gram = tuple(words[i:i + n])
        if sum(w not in STOP_WORDS and not w.isdigit() for w in gram) >= min_content:
            grams.add(gram)
    return grams


def _has_gram(text: str, grams: set[tuple[str, ...]], n: int = NGRAM) -> tuple[str, ...] | None:
    words = _words(text)
    for i in range(len(words) - n + 1):
        gram = tuple(words[i:i + n])
        if gram in grams:
            return gram
    return None


def scan_task(task: Task) -> list[Finding]:
    """Contamination findings for one loaded task (empty: clean)."""
    labels = [lab for lab in task.ground_truth.root_cause if len(normalize_label(lab)) >= MIN_LABEL_CHARS]
    answer_texts = [task.ground_truth.mitigation]  # the fix, not the evidence a summary quotes
    if task.reference_solution is not None:
        answer_texts.append(task.reference_solution.diagnosis.mitigation or "")
    grams = set().union(*(mitigation_ngrams(t) for t in answer_texts if t))
    found: set[Finding] = set()
    for seen in visible_texts(task):
        if mentions(seen.text, task.id):
            found.add(Finding(task.id, seen.file, seen.field, "task-id", task.id, seen.path))
            continue
        label = next((lab for lab in labels if mentions(seen.text, lab)), None)
        if label is not None:
            found.add(Finding(task.id, seen.file, seen.field, "root-cause-label", label, seen.path))
            continue
        gram = _has_gram(seen.text, grams)
        if gram is not None:
            found.add(Finding(task.id, seen.file, seen.field, "mitigation-text", " ".join(gram), seen.path))
    return sorted(found)


def scan_trial_names(task_id: str, names: Iterable[str]) -> list[Finding]:
    """Per-trial names an agent can see (its namespace, artifact and kubeconfig paths): each must be
    free of the task id, and a namespace must have the opaque ``ot-<10 hex>`` form."""
    out = []
    for name in names:
        if mentions(name, task_id) or task_id in name:
            out.append(Finding(task_id, name, "per-trial name", "trial-name", task_id))
        elif "/" not in name and not OPAQUE_NAMESPACE.match(name):
            out.append(Finding(task_id, name, "namespace", "trial-name", name))
    return out


def scan_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Finding], list[TaskProblem]]:
    """Scan every task under ``paths``: (contamination findings, files that could not be loaded)."""
    findings: list[Finding] = []
    problems: list[TaskProblem] = []
    for path in paths:
        tasks, found = collect_many(path)
        problems += found
        for task in tasks:
            findings += scan_task(task)
    return findings, problems
