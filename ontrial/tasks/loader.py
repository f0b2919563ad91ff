"""Load task files: YAML with positions → Task, referenced files resolved, every problem with a line.

``load_task`` raises ``TaskFileError`` (one line: ``file:line: field: message``); ``collect`` returns
the problems instead, for ``ontrial tasks validate``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .model import Task
from .problems import TaskFileError, TaskProblem
from .semantics import check_manifest, check_profile, check_rule_file, check_task
from .yamlpos import Located, YamlSyntaxError, format_path, load_all_located, load_located

TASK_FILE_NAME = "task.yaml"


def load_task(path: str | os.PathLike[str]) -> Task:
    """Load and fully validate one task file."""
    task, problems = collect(path)
    if problems:
        raise TaskFileError(problems)
    assert task is not None
    return task


def load_tasks(path: str | os.PathLike[str]) -> list[Task]:
    """Load one task file, or every ``task.yaml`` under a directory (sorted by path; ids must be unique)."""
    tasks, problems = collect_many(path)
    if problems:
        raise TaskFileError(problems)
    return tasks


def task_files(path: str | os.PathLike[str]) -> list[Path]:
    root = Path(path)
    if root.is_dir():
        return sorted(root.rglob(TASK_FILE_NAME))
    return [root]


def collect_many(path: str | os.PathLike[str]) -> tuple[list[Task], list[TaskProblem]]:
    """Every task under ``path`` and every problem found, duplicate ids included."""
    files = task_files(path)
    if Path(path).is_dir() and not files:
        return [], [TaskProblem(str(path), None, "", f"no {TASK_FILE_NAME} files found")]
    tasks: list[Task] = []
    problems: list[TaskProblem] = []
    seen: dict[str, Task] = {}
    for file in files:
        task, found = collect(file)
        problems += found
        if task is None:
            continue
        if task.id in seen:
            first = seen[task.id].source_path
            message = f"duplicate task id {task.id!r} (also in {first})"
            problems.append(TaskProblem(str(file), _id_line(file), "id", message))
            continue
        seen[task.id] = task
        tasks.append(task)
    return tasks, problems


def _id_line(file: Path) -> int | None:
    try:
        return load_located(file.read_text(encoding="utf-8")).line_of(("id",))
    except (OSError, YamlSyntaxError, UnicodeDecodeError):
        return None


def collect(path: str | os.PathLike[str]) -> tuple[Task | None, list[TaskProblem]]:
    """Load one task file; return the task (None if invalid) and every problem found."""
    display = str(path)
    source = Path(path)
    try:
        raw = source.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return None, [TaskProblem(display, None, "", "file not found")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [TaskProblem(display, None, "", f"cannot read file: {exc}")]
    try:
        located = load_located(text)
    except YamlSyntaxError as exc:
        return None, [TaskProblem(display, exc.line, format_path(exc.path), exc.message)]
    if not isinstance(located.data, dict):
        return None, [TaskProblem(display, located.line_of(()), "", "a task file must be a YAML mapping")]
    try:
        task = Task.model_validate(located.data)
    except ValidationError as exc:
        found = [_from_pydantic(display, located, err) for err in exc.errors()]
        return None, sorted(set(found), key=lambda p: (p.line or 0, p.field, p.message))

    files = {source.name: raw}
    manifest_problems: list[TaskProblem] = []
    profile_problems: list[TaskProblem] = []
    objects = _load_refs(task, source, display, located, "manifests", check_manifest, files, manifest_problems)
    profiles = _load_refs(task, source, display, located, "profiles", check_profile, files, profile_problems)
    rule_problems: list[TaskProblem] = []
    groups = _load_refs(task, source, display, located, "alert_rules", check_rule_file, files, rule_problems)
    groups = [g for doc in groups for g in doc.get("groups") or []]
    runbooks = _load_runbooks(task, source, display, located, files, rule_problems)
    ref_problems = manifest_problems + profile_problems + rule_problems
    findings = check_task(task, None if manifest_problems else objects, groups)
    own = [TaskProblem(display, located.line_of(path), format_path(path), msg) for path, msg in findings]
    problems = sorted(own, key=lambda p: (p.line or 0, p.field)) + ref_problems
    if problems:
        return None, problems
    task._source = source
    task._objects = objects
    task._profiles = profiles
    task._rule_groups = groups
    task._runbooks = runbooks
    task._files = files
    return task, []


def _load_refs(task: Task, source: Path, display: str, located: Located, field: str, check,
               files: dict[str, bytes], problems: list[TaskProblem]) -> list[dict[str, Any]]:
    """Read the files listed under ``app.<field>``; documents are flattened (a top-level list counts as many)."""
    out: list[dict[str, Any]] = []
    for index, rel in enumerate(getattr(task.app, field)):
        path = ("app", field, index)
        line = located.line_of(path)
        if os.path.isabs(rel):
            problems.append(TaskProblem(display, line, format_path(path), "must be a path relative to the task file"))
            continue
        target = source.parent / rel
        shown = os.path.normpath(os.path.join(os.path.dirname(display), rel))
        try:
            raw = target.read_bytes()
            docs = _parsed(raw.decode("utf-8"))
        except FileNotFoundError:
            problems.append(TaskProblem(display, line, format_path(path), f"file not found: {shown}"))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(TaskProblem(display, line, format_path(path), f"cannot read {shown}: {exc}"))
            continue
        except YamlSyntaxError as exc:
            problems.append(TaskProblem(shown, exc.line, format_path(exc.path), exc.message))
            continue
        files[os.path.normpath(rel)] = raw
        if not docs:
            problems.append(TaskProblem(display, line, format_path(path), f"{shown} holds no documents"))
        for doc in docs:
            data = doc.data
            items = [((i,), item) for i, item in enumerate(data)] if isinstance(data, list) else [((), data)]
            for prefix, item in items:
                found = check(item)
                problems += [TaskProblem(shown, doc.line_of(prefix + p), format_path(prefix + p), m) for p, m in found]
                if not found:
                    out.append(item)
    return out


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> list[Located]:
    """Shared app files are read by every task that uses them: parse each distinct text once.
    The documents are shared, so nothing may mutate them (Task hands out deep copies)."""
    return load_all_located(text)


def _load_runbooks(task: Task, source: Path, display: str, located: Located, files: dict[str, bytes],
                   problems: list[TaskProblem]) -> dict[str, str]:
    """``app.runbooks`` files as name (file name without extension) → text."""
    out: dict[str, str] = {}
    for index, rel in enumerate(task.app.runbooks):
        path = ("app", "runbooks", index)
        line = located.line_of(path)
        target = source.parent / rel
        if os.path.isabs(rel):
            problems.append(TaskProblem(display, line, format_path(path), "must be a path relative to the task file"))
            continue
        try:
            raw = target.read_bytes()
            text = raw.decode("utf-8")
        except FileNotFoundError:
            shown = os.path.normpath(os.path.join(os.path.dirname(display), rel))
            problems.append(TaskProblem(display, line, format_path(path), f"file not found: {shown}"))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(TaskProblem(display, line, format_path(path), f"cannot read {rel}: {exc}"))
            continue
        name = target.stem
        if name in out:
            problems.append(TaskProblem(display, line, format_path(path), f"a second runbook named {name!r}"))
            continue
        files[os.path.normpath(rel)] = raw
        out[name] = text
    return out


# -- pydantic errors → one line each ---------------------------------------------------------------

def _from_pydantic(display: str, located: Located, err: dict[str, Any]) -> TaskProblem:
    loc = tuple(part for part in err["loc"] if isinstance(part, int) or not str(part).startswith("function-"))
    if err["type"] in ("check_type", "step_type"):  # point at the offending key, not the list item
        loc += (err["ctx"]["name"],)
    return TaskProblem(display, located.line_of(loc), format_path(loc), _message(loc, err))


def _message(loc: tuple, err: dict[str, Any]) -> str:
    kind, msg, value = err["type"], err["msg"], err.get("input")
    if kind == "missing":
        return "required field missing"
    if kind == "extra_forbidden":
        model = _model_at(Task, loc[:-1])
        allowed = f" (allowed: {', '.join(model.model_fields)})" if model else ""
        return f"unknown field{allowed}"
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    msg = msg[:1].lower() + msg[1:]
    if kind.endswith(("_type", "_parsing", "literal_error", "string_pattern_mismatch")) and _is_scalar(value):
        msg += f", got {value!r}"
    return msg


def _is_scalar(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int, float, bool)) and len(repr(value)) <= 60)


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    """The model class that validated the mapping at ``loc`` (to list its allowed fields)."""
    annotation: Any = model
    for part in loc:
        annotation = _unwrap(annotation, part)
        if annotation is None:
            return None
    annotation = _unwrap_optional(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return options[0] if len(options) == 1 else None
    return annotation


def _unwrap(annotation: Any, part: str | int) -> Any:
    annotation = _unwrap_optional(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(part, int):
        return typing.get_args(annotation)[0] if origin is list else None
    if origin is dict:
        return typing.get_args(annotation)[1]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(part)
        return field.annotation if field else None
    return None


def task_hash(task: Task) -> str:
    """A stable content hash over the task file and every file it references (not their location)."""
    digest = hashlib.sha256()
    for name, content in sorted(task.referenced_files().items()):
        digest.update(name.replace(os.sep, "/").encode())
        digest.update(b"\0%d\0" % len(content))
        digest.update(content)
    return "sha256:" + digest.hexdigest()[:16]
