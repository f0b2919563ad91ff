"""Cross-reference checks a schema cannot express: targets exist, tools exist, names line up.

Each finding is ``(path in the task file, message)``; the loader turns the path into a line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .kinds import KINDS
from .model import Task
from .yamlpos import Path

# The agent tool boundary: tool -> (required args, optional args). ``namespace`` is accepted by
# every tool. The gateway's own catalogue wins when it is importable (see ``tool_signatures``).
TOOL_ARGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "get_resources": (("kind",), ("name", "label_selector")),
    "describe": (("kind", "name"), ()),
    "get_events": ((), ("name", "type")),
    "get_logs": (("pod",), ("container", "previous", "tail")),
    "scale": (("kind", "name", "replicas"), ()),
    "rollout_undo": (("deployment",), ("to_revision",)),
    "rollout_restart": (("deployment",), ()),
    "set_image": (("deployment", "container", "image"), ()),
    "set_env": (("deployment", "env"), ("container",)),
    "patch": (("kind", "name", "patch"), ("patch_type",)),
    "delete": (("kind", "name"), ()),
    "apply": (("manifest",), ()),
    "query_metrics": (("query",), ("range_minutes", "step_seconds")),
    "get_alerts": ((), ()),
    "get_runbook": ((), ("name",)),
}
COMMON_TOOL_ARGS = ("namespace",)

Finding = tuple[Path, str]


def tool_signatures() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """The tools agents get, from the gateway's catalogue (or the table above without it)."""
    try:
        from ..gateway.tools import ALL_TOOLS as TOOLS
    except ImportError:
        try:
            from ..gateway.tools import TOOLS
        except ImportError:
            return TOOL_ARGS
    return {name: (tuple(p.name for p in spec.params if p.required),
                   tuple(p.name for p in spec.params if not p.required and p.name not in COMMON_TOOL_ARGS))
            for name, spec in TOOLS.items()}

_NAMESPACE_SET = "must not be set: each trial gets its own namespace"


def object_keys(objects: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(o.get("kind", ""), (o.get("metadata") or {}).get("name", "")) for o in objects}


def check_task(task: Task, objects: list[dict[str, Any]] | None,
               rule_groups: list[dict[str, Any]] | None = None) -> list[Finding]:
    """Cross-reference findings for a schema-valid task whose app objects are ``objects``.

    ``objects`` None means the manifests could not be read: only the checks that need no app run.
    ``rule_groups``: the groups of the app's alert rule files (the trigger must name one of their alerts).
    """
    findings: list[Finding] = []
    if task.category != "no_fault" and not task.fault.steps and not task.fault.chaos_mesh:
        findings.append((("fault", "steps"), "empty: only no_fault tasks may inject nothing"))
    alerts = [r.get("alert") for g in rule_groups or [] for r in g.get("rules") or [] if r.get("alert")]
    if alerts and task.trigger.alert.name not in alerts:
        findings.append((("trigger", "alert", "name"), f"no alerting rule named {task.trigger.alert.name!r} in "
                         f"app.alert_rules (rules: {', '.join(sorted(set(alerts)))})"))
    if objects is None:
        return findings + _reference_tools(task)
    known = object_keys(objects)
    findings += _fault_targets(task, known)
    findings += _check_targets(task, known)
    findings += _ground_truth(task, known)
    findings += _reference_tools(task)
    return findings


def _describe_missing(kind: str, name: str) -> str:
    return f"no {kind} {name!r} in the app manifests"


def _fault_targets(task: Task, known: set[tuple[str, str]]) -> list[Finding]:
    out: list[Finding] = []
    available = set(known)
    for index, step in enumerate(task.fault.steps):
        action, spec = step.action
        path: Path = ("fault", "steps", index, action)
        if action == "apply":
            manifest = spec.manifest
            available.add((manifest["kind"], manifest["metadata"]["name"]))
            if "namespace" in manifest["metadata"]:
                out.append((path + ("manifest", "metadata", "namespace"), _NAMESPACE_SET))
            continue
        name = getattr(spec, "name", None)
        if name is None or spec.kind == "Pod":  # selectors and generated pod names are resolved at run time
            continue
        if (spec.kind, name) not in available:
            out.append((path + ("name",), _describe_missing(spec.kind, name)))
    return out


def _check_targets(task: Task, known: set[tuple[str, str]]) -> list[Finding]:
    out: list[Finding] = []
    for index, check in enumerate(task.checks.outcome):
        path: Path = ("checks", "outcome", index, check.type)
        spec = check.spec
        if check.type in ("rollout_complete", "replicas_at_least"):
            if ("Deployment", spec.deployment) not in known:
                out.append((path + ("deployment",), _describe_missing("Deployment", spec.deployment)))
        elif check.type in ("field_equals", "field_set", "quantity_at_least", "field_in", "field_not_in"):
            if (spec.kind, spec.name) not in known:
                out.append((path + ("name",), _describe_missing(spec.kind, spec.name)))
    return out


def _ground_truth(task: Task, known: set[tuple[str, str]]) -> list[Finding]:
    gt = task.ground_truth
    names = {name for _, name in known}
    for step in task.fault.steps:  # an object the fault brings in (a stray pod, a policy) can be the cause
        action, spec = step.action
        if action == "apply":
            names.add(spec.manifest["metadata"]["name"])
    out: list[Finding] = []
    if task.category != "no_fault" and not gt.causal_service:
        out.append((("ground_truth", "causal_service"), "required unless category is no_fault"))
    if gt.causal_service and gt.causal_service not in names:
        out.append((("ground_truth", "causal_service"), f"{gt.causal_service!r} names no object in the app"))
    for index, svc in enumerate(gt.symptomatic_services):
        if svc not in names:
            out.append((("ground_truth", "symptomatic_services", index), f"{svc!r} names no object in the app"))
    listed = {gt.causal_service, *gt.symptomatic_services}
    for svc in gt.service_aliases:
        if svc not in listed:
            out.append((("ground_truth", "service_aliases", svc), "aliases given for a service that is neither causal"
                        " nor symptomatic"))
    return out


def _reference_tools(task: Task) -> list[Finding]:
    if task.reference_solution is None:
        return []
    out: list[Finding] = []
    tools = tool_signatures()
    for index, call in enumerate(task.reference_solution.actions):
        path: Path = ("reference_solution", "actions", index)
        if call.tool not in tools:
            out.append((path + ("tool",), f"unknown tool {call.tool!r} (known: {', '.join(tools)})"))
            continue
        required, optional = tools[call.tool]
        allowed = set(required) | set(optional) | set(COMMON_TOOL_ARGS)
        for arg in call.args:
            if arg not in allowed:
                out.append((path + ("args", arg), f"unknown argument for {call.tool} (allowed: "
                            f"{', '.join([*required, *optional, *COMMON_TOOL_ARGS])})"))
        for arg in required:
            if arg not in call.args:
                out.append((path + ("args",), f"{call.tool} needs argument {arg!r}"))
        manifest = call.args.get("manifest") if call.tool == "apply" else None
        if isinstance(manifest, dict) and "namespace" in (manifest.get("metadata") or {}):
            out.append((path + ("args", "manifest", "metadata", "namespace"), _NAMESPACE_SET))
    return out


def check_manifest(doc: Any) -> list[Finding]:
    """Shape of one app manifest document (paths are inside that document)."""
    if not isinstance(doc, dict):
        return [((), "a manifest document must be a mapping")]
    out: list[Finding] = []
    kind, api_version = doc.get("kind"), doc.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        out.append((("kind",), "required"))
    elif kind not in KINDS:
        out.append((("kind",), f"unsupported kind {kind!r}"))
    elif api_version != KINDS[kind].api_version:
        out.append((("apiVersion",), f"{kind} is served as {KINDS[kind].api_version}, got {api_version!r}"))
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        out.append((("metadata", "name"), "required"))
    elif "namespace" in meta:
        out.append((("metadata", "namespace"), _NAMESPACE_SET))
    return out


def check_profile(doc: Any) -> list[Finding]:
    """A kubesim workload profile, validated by kubesim's own parsers when they are importable
    (the workload part, and the ``telemetry`` section by kubesim's telemetry)."""
    if not isinstance(doc, dict):
        return [((), "a workload profile must be a mapping")]
    try:
        from kubesim.workloads.profiles import ProfileError, parse_profile
    except ImportError:  # a real-cluster install without kubesim: the images must exist there anyway
        return [] if isinstance(doc.get("image"), str) and doc.get("image") else [(("image",), "required")]
    workload = {k: v for k, v in doc.items() if k != "telemetry"}
    try:
        profile = parse_profile(workload)
    except ProfileError as exc:
        return [(_parse_field_path(exc.field), exc.problem)]
    if "telemetry" not in doc:
        return []
    try:
        from kubesim.telemetry.behaviour import parse_behaviour
    except ImportError:
        return []
    try:
        parse_behaviour(profile.image, profile.tags, doc["telemetry"], profile.ports)
    except ProfileError as exc:
        return [(_parse_field_path(exc.field), exc.problem)]
    return []


def check_rule_file(doc: Any) -> list[Finding]:
    """A Prometheus rule file (``groups: [...]``), validated by kubesim's rule parser when importable."""
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        return [((), 'a rule file must be a mapping with a "groups" list')]
    try:
        from kubesim.telemetry.rules import RuleError, parse_rule_file
    except ImportError:
        return []
    try:
        parse_rule_file(doc)
    except RuleError as exc:
        return [(("groups",), str(exc))]
    return []


def _parse_field_path(text: str) -> Path:
    """'requires_env[0].name' -> ('requires_env', 0, 'name'); '(document)' -> ()."""
    if text.startswith("("):
        return ()
    out: list[str | int] = []
    for part in text.split("."):
        name, _, rest = part.partition("[")
        if name:
            out.append(name)
        for index in filter(None, rest.replace("]", "").split("[")) if rest else ():
            out.append(int(index) if index.isdigit() else index)
    return tuple(out)
