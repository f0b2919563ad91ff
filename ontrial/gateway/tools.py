"""The declarative tool registry: names, parameters (JSON Schema), the Kubernetes action each call
makes (for audit and invariants, computed before it runs) and the handler.

The in-process gateway, an MCP server and a kubectl audit proxy all read this one table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal

from ..sandbox.kinds import resource_name
from . import observability, reads, writes
from .context import ToolContext, ToolError
from .invariants import Action

Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[str]]
Planner = Callable[[dict[str, Any], str], Action]


@dataclass(frozen=True)
class ToolParam:
    name: str
    type: Literal["string", "integer", "boolean", "object", "any"]
    description: str
    required: bool = False

    def schema(self) -> dict[str, Any]:
        if self.type == "any":
            return {"description": self.description}
        if self.type == "object":
            return {"type": "object", "description": self.description}
        return {"type": self.type, "description": self.description}


NAMESPACE = ToolParam("namespace", "string", "namespace (defaults to the trial's own namespace)")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[ToolParam, ...]
    plan: Planner
    handler: Handler
    mutating: bool = False
    keep: Literal["head", "tail"] = "head"

    def input_schema(self) -> dict[str, Any]:
        params = (*self.params, NAMESPACE)
        return {"type": "object", "properties": {p.name: p.schema() for p in params},
                "required": [p.name for p in params if p.required], "additionalProperties": False}

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        """Arguments checked and coerced ("3" → 3); ToolError names what is wrong."""
        if not isinstance(args, dict):
            raise ToolError(f"{self.name}: arguments must be an object")
        known = {p.name: p for p in (*self.params, NAMESPACE)}
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise ToolError(f"{self.name}: unknown argument(s) {', '.join(unknown)}; expected {', '.join(known)}")
        out: dict[str, Any] = {}
        for p in known.values():
            value = args.get(p.name)
            if value is None or value == "":
                if p.required:
                    raise ToolError(f"{self.name}: missing required argument '{p.name}'")
                continue
            out[p.name] = _coerce(self.name, p, value)
        return out


def _coerce(tool: str, p: ToolParam, value: Any) -> Any:
    try:
        if p.type == "integer":
            if isinstance(value, bool):
                raise ValueError
            return int(value)
        if p.type == "boolean":
            if isinstance(value, str):
                if value.lower() not in ("true", "false"):
                    raise ValueError
                return value.lower() == "true"
            return bool(value)
        if p.type == "string":
            if isinstance(value, (dict, list)):
                raise ValueError
            return str(value)
    except (TypeError, ValueError):
        raise ToolError(f"{tool}: argument '{p.name}' must be {p.type}, got {value!r}") from None
    return value


def _ns(args: dict[str, Any], default: str) -> str:
    return args.get("namespace") or default


def _on(verb: str, kind_arg: str | None = None, kind: str | None = None, name_arg: str | None = "name",
        sub: str | None = None) -> Planner:
    def plan(args: dict[str, Any], namespace: str) -> Action:
        resource = resource_name(kind or args.get(kind_arg or "kind") or "")
        if sub:
            resource = f"{resource}/{sub}"
        name = args.get(name_arg) if name_arg else None
        the_verb = "list" if verb == "get" and not name else verb
        return Action(the_verb, resource, _ns(args, namespace), name)
    return plan


def _plan_get(args: dict[str, Any], namespace: str) -> Action:
    kind = str(args.get("kind") or "")
    resource = ",".join(reads.ALL_KINDS) if kind.lower() == "all" else resource_name(kind)
    return Action("get" if args.get("name") else "list", resource, _ns(args, namespace), args.get("name"))


def _plan_logs(args: dict[str, Any], namespace: str) -> Action:
    return Action("get", "pods/log", _ns(args, namespace), args.get("pod"))


def _plan_apply(args: dict[str, Any], namespace: str) -> Action:
    try:
        doc = writes.manifest_of(args)
    except ToolError:
        return Action("patch", "", _ns(args, namespace))
    meta = doc.get("metadata") or {}
    return Action("patch", resource_name(doc["kind"]), meta.get("namespace") or _ns(args, namespace), meta.get("name"))


def _p(name: str, type_: str, description: str, required: bool = False) -> ToolParam:
    return ToolParam(name, type_, description, required)  # type: ignore[arg-type]


KIND = _p("kind", "string", "resource kind, e.g. pods, deployment, svc, configmap, events, all", True)
NAME = _p("name", "string", "object name", True)
DEPLOYMENT = _p("deployment", "string", "deployment name", True)

TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("get_resources", "List objects of a kind as a table (like kubectl get), or one object as YAML "
             "when name is given.",
             (KIND, _p("name", "string", "object name (returns its YAML)"),
              _p("label_selector", "string", "label selector, e.g. app=api")), _plan_get, reads.get_resources),
    ToolSpec("describe", "Describe one object like kubectl describe: container state, last state, exit codes, "
             "restarts, conditions and recent events.", (KIND, NAME), _on("get"), reads.describe),
    ToolSpec("get_events", "Recent events in the namespace, oldest first, optionally only those about objects "
             "named name (or name-*) and/or of one type (Warning or Normal).",
             (_p("name", "string", "object name prefix"), _p("type", "string", "Warning or Normal")),
             _on("list", kind="events", name_arg=None), reads.get_events, keep="tail"),
    ToolSpec("get_logs", "Logs of a pod's container (or of a pod of deployment/NAME); previous=true gives the "
             "last terminated container's logs.",
             (_p("pod", "string", "pod name, or kind/name such as deployment/api", True),
              _p("container", "string", "container name"),
              _p("previous", "boolean", "logs of the previous (crashed) container"),
              _p("tail", "integer", "only the last N lines")), _plan_logs, reads.get_logs, keep="tail"),
    ToolSpec("scale", "Set the replica count of a deployment (or statefulset/replicaset).",
             (KIND, NAME, _p("replicas", "integer", "desired replicas", True)),
             _on("patch", sub="scale"), writes.scale, mutating=True),
    ToolSpec("rollout_undo", "Roll a deployment back to its previous revision (or to_revision), like "
             "kubectl rollout undo.", (DEPLOYMENT, _p("to_revision", "integer", "revision to roll back to")),
             _on("patch", kind="deployments", name_arg="deployment"), writes.rollout_undo, mutating=True),
    ToolSpec("rollout_restart", "Restart a deployment's pods with a rolling update (kubectl rollout restart).",
             (DEPLOYMENT,), _on("patch", kind="deployments", name_arg="deployment"), writes.rollout_restart,
             mutating=True),
    ToolSpec("set_image", "Set a container's image in a deployment (kubectl set image).",
             (DEPLOYMENT, _p("container", "string", "container name ('*' for all)", True),
              _p("image", "string", "new image, e.g. shop/api:1.0", True)),
             _on("patch", kind="deployments", name_arg="deployment"), writes.set_image, mutating=True),
    ToolSpec("set_env", "Set or remove environment variables of a deployment's containers (kubectl set env); "
             "a null value removes the variable.",
             (DEPLOYMENT, _p("container", "string", "container name (default: all containers)"),
              _p("env", "object", "NAME: value pairs; null removes NAME", True)),
             _on("patch", kind="deployments", name_arg="deployment"), writes.set_env, mutating=True),
    ToolSpec("patch", "Patch an object (kubectl patch); patch_type strategic (default), merge or json.",
             (KIND, NAME, _p("patch", "any", "the patch: an object (strategic/merge) or a list of operations (json)",
                             True),
              _p("patch_type", "string", "strategic | merge | json")), _on("patch"), writes.patch, mutating=True),
    ToolSpec("delete", "Delete an object (kubectl delete).", (KIND, NAME), _on("delete"), writes.delete,
             mutating=True),
    ToolSpec("apply", "Create or update one object from a manifest (kubectl apply).",
             (_p("manifest", "any", "the object, as a mapping or a YAML/JSON string", True),),
             _plan_apply, writes.apply, mutating=True),
)

# Beyond the cluster objects: metrics, alerts, runbooks (offered when the trial has a source for them).
EXTRA_TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("query_metrics", "Run a PromQL query against the cluster's metrics (Prometheus HTTP API): an "
             "instant query, or a range query over the last range_minutes. Examples: "
             "sum by (service, code) (rate(http_requests_total[5m])), "
             "container_memory_working_set_bytes, kube_pod_container_status_restarts_total.",
             (_p("query", "string", "the PromQL expression", True),
              _p("range_minutes", "integer", "make it a range query over the last N minutes"),
              _p("step_seconds", "integer", "range query resolution (default: about 60 points)")),
             lambda args, ns: Action("get", "prometheus/query", _ns(args, ns)), observability.query_metrics),
    ToolSpec("get_alerts", "The alerts that fired for this incident, plus any currently firing.", (),
             lambda args, ns: Action("list", "alerts", _ns(args, ns)), observability.get_alerts),
    ToolSpec("get_runbook", "List the team's runbooks, or read one by name.",
             (_p("name", "string", "runbook name (omit to list them)"),),
             lambda args, ns: Action("get", "runbooks", _ns(args, ns), args.get("name")), observability.get_runbook),
)

TOOLS: dict[str, ToolSpec] = {t.name: t for t in TOOL_SPECS}  # the Kubernetes tools every trial has
ALL_TOOLS: dict[str, ToolSpec] = {t.name: t for t in (*TOOL_SPECS, *EXTRA_TOOL_SPECS)}


def tool_definitions(names: Any = None) -> list[dict[str, Any]]:
    """Name, description and JSON Schema of each tool (all, or those in ``names``, in registry order),
    for model tool-calling and MCP listings."""
    wanted = set(names) if names is not None else None
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema()}
            for t in ALL_TOOLS.values() if wanted is None or t.name in wanted]
