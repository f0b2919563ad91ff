"""Outcome checks, judged on the converged final cluster state through the Kubernetes API.

Uses the official client's transport (auth, TLS, proxies) with raw JSON GETs, so a task's field
paths are the camelCase JSON an author sees in ``kubectl get -o yaml``. A check that cannot reach
the API raises ``InfraError`` (the grader failed, not the agent); everything else is a CheckResult.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from kubernetes.client import ApiClient
from kubernetes.utils import parse_quantity

from ..errors import InfraError
from ..models.trial import CheckResult
from ..tasks.checks_model import CheckSpec, OutcomeCheck, parse_field_path
from ..tasks.kinds import KINDS, kind_info

# Container states that mean "this pod is not going to serve": crash loops and start failures.
BAD_WAITING = frozenset({"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
                         "CreateContainerError", "InvalidImageName", "RunContainerError", "ErrImageNeverPull"})
REVISION = "deployment.kubernetes.io/revision"
_MISSING = object()


class _Api:
    """Raw JSON GETs over an ApiClient; 404 is None, transport and 5xx failures are InfraError."""

    def __init__(self, client: ApiClient, namespace: str, timeout: float = 30.0):
        self.client = client
        self.namespace = namespace
        self.timeout = timeout
        self.prometheus = KUBESIM_PROMETHEUS.format(namespace=namespace)

    def get(self, kind: str, name: str) -> dict[str, Any] | None:
        return self._get(kind_info(kind).path(self.namespace, quote(name, safe="")))

    def list(self, kind: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        query = [("labelSelector", label_selector)] if label_selector else []
        body = self._get(KINDS[kind].path(self.namespace), query)
        return list((body or {}).get("items") or [])

    def query(self, promql: str) -> tuple[int, dict[str, Any] | None]:
        """(HTTP status, body) of an instant query; 4xx answers are returned, not raised."""
        return self._get(f"{self.prometheus}/api/v1/query", [("query", promql)], keep_client_errors=True)

    def _get(self, path: str, query: list[tuple[str, str]] | None = None, keep_client_errors: bool = False) -> Any:
        try:
            request = self.client.param_serialize("GET", path, query_params=query or [],
                                                  header_params={"Accept": "application/json"},
                                                  auth_settings=["BearerToken"])
            response = self.client.call_api(*request, _request_timeout=self.timeout)
            response.read()
        except Exception as exc:  # urllib3/ssl/socket errors all mean the same here
            raise InfraError(f"checks: GET {path} failed: {exc}", transient=True) from exc
        if keep_client_errors and 400 <= response.status < 500:
            try:
                return response.status, json.loads(response.data)
            except ValueError:
                return response.status, None
        if response.status == 404:
            return None
        if not 200 <= response.status < 300:
            raise InfraError(f"checks: GET {path} answered {response.status}", transient=response.status >= 500)
        try:
            body = json.loads(response.data)
        except ValueError as exc:
            raise InfraError(f"checks: GET {path} returned malformed JSON", transient=True) from exc
        return (response.status, body) if keep_client_errors else body


KUBESIM_PROMETHEUS = "/kubesim/v1/namespaces/{namespace}/prometheus"


def run_checks(api_client: ApiClient, namespace: str, checks: Iterable[OutcomeCheck | Mapping[str, Any]],
               *, prometheus: str | None = None) -> list[CheckResult]:
    """Evaluate each check against ``namespace``; results keep the task's order.

    ``prometheus``: the Prometheus HTTP API prefix ``metric`` checks query, a path on the API server
    (default: kubesim's namespace-scoped API, ``{namespace}`` is filled in)."""
    api = _Api(api_client, namespace)
    api.prometheus = (prometheus or KUBESIM_PROMETHEUS).format(namespace=namespace)
    results = []
    for check in checks:
        check = check if isinstance(check, OutcomeCheck) else OutcomeCheck.model_validate(check)
        passed, detail = _EVALUATORS[check.type](api, check.spec)
        results.append(CheckResult(name=check.name, passed=passed, detail=detail))
    return results


# -- field paths ---------------------------------------------------------------------------------

def resolve_path(obj: Any, path: str) -> Any:
    """The value at a dotted JSON path, or ``_MISSING``. ``[k=v]`` picks the list item whose k is v."""
    current = obj
    for part in parse_field_path(path):
        if isinstance(part, tuple):
            key, value = part
            items = current if isinstance(current, list) else []
            current = next((i for i in items if isinstance(i, dict) and str(i.get(key)) == value), _MISSING)
        elif isinstance(part, int):
            current = current[part] if isinstance(current, list) and part < len(current) else _MISSING
        else:
            current = current.get(part, _MISSING) if isinstance(current, dict) else _MISSING
        if current is _MISSING:
            return _MISSING
    return current


# -- pod health ----------------------------------------------------------------------------------

def pod_ready(pod: dict[str, Any]) -> bool:
    if pod.get("metadata", {}).get("deletionTimestamp"):
        return False
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def pod_trouble(pod: dict[str, Any]) -> str | None:
    """Why this pod is crash-looping or failing to start, or None if it is not."""
    statuses = pod.get("status", {}).get("containerStatuses") or []
    statuses = statuses + (pod.get("status", {}).get("initContainerStatuses") or [])
    for status in statuses:
        state = status.get("state") or {}
        waiting = (state.get("waiting") or {}).get("reason")
        if waiting in BAD_WAITING:
            return f"{status.get('name')}: {waiting}"
        terminated = state.get("terminated")
        if terminated and pod.get("spec", {}).get("restartPolicy", "Always") == "Always":
            return f"{status.get('name')}: terminated ({terminated.get('reason') or terminated.get('exitCode')})"
    return None


def _owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    uid = owner.get("metadata", {}).get("uid")
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return any(ref.get("uid") == uid and ref.get("controller") for ref in refs)


# -- evaluators ----------------------------------------------------------------------------------

def _rollout_complete(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    deploy = api.get("Deployment", spec.deployment)
    if deploy is None:
        return False, f"deployment {spec.deployment} not found"
    meta, dspec, status = deploy.get("metadata", {}), deploy.get("spec", {}), deploy.get("status", {})
    want = dspec.get("replicas", 1)
    if want < 1:
        return False, "scaled to zero replicas"
    if status.get("observedGeneration", 0) < meta.get("generation", 0):
        return False, "latest spec not yet observed by the controller"
    counts = {k: status.get(k, 0) for k in ("replicas", "updatedReplicas", "availableReplicas")}
    if any(v != want for v in counts.values()):
        shown = ", ".join(f"{k}={v}" for k, v in counts.items())
        return False, f"want {want} replicas, have {shown}"
    revision = meta.get("annotations", {}).get(REVISION)
    current = [rs for rs in api.list("ReplicaSet") if _owned_by(rs, deploy)
               and rs.get("metadata", {}).get("annotations", {}).get(REVISION) == revision]
    pods = api.list("Pod") if current else []
    for rs in current:
        for pod in pods:
            trouble = _owned_by(pod, rs) and pod_trouble(pod)
            if trouble:
                return False, f"pod {pod['metadata']['name']} {trouble}"
    return True, f"{want}/{want} updated and available"


def _pods_ready(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    pods = api.list("Pod", spec.selector)
    ready = sum(1 for p in pods if pod_ready(p))
    return ready >= spec.min, f"{ready} of {len(pods)} pods ready (need {spec.min})"


def _no_crashloop(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    pods = api.list("Pod", spec.selector)
    troubled = [f"{p['metadata']['name']} {t}" for p in pods if (t := pod_trouble(p))]
    if troubled:
        return False, "; ".join(troubled[:3]) + (f" (+{len(troubled) - 3} more)" if len(troubled) > 3 else "")
    return True, f"{len(pods)} pods, none crash-looping" if pods else "no pods match the selector"


def _replicas_at_least(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    deploy = api.get("Deployment", spec.deployment)
    if deploy is None:
        return False, f"deployment {spec.deployment} not found"
    want = deploy.get("spec", {}).get("replicas", 1)
    available = deploy.get("status", {}).get("availableReplicas", 0)
    return min(want, available) >= spec.n, f"spec.replicas={want}, available={available} (need {spec.n})"


def _field(api: _Api, spec: CheckSpec) -> tuple[Any, str | None]:
    obj = api.get(spec.kind, spec.name)
    if obj is None:
        return _MISSING, f"{spec.kind} {spec.name} not found"
    value = resolve_path(obj, spec.path)
    return value, None if value is not _MISSING else f"{spec.path} is not set"


def _field_equals(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    value, problem = _field(api, spec)
    if problem:
        return False, problem
    return value == spec.value, f"{spec.path} = {value!r}" + ("" if value == spec.value else f", want {spec.value!r}")


def _field_set(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    value, problem = _field(api, spec)
    if problem:
        return False, problem
    empty = value is None or value == "" or value == [] or value == {}
    return not empty, f"{spec.path} is empty" if empty else f"{spec.path} is set"


def _quantity_at_least(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    value, problem = _field(api, spec)
    if problem:
        return False, problem
    try:
        have = parse_quantity(value)
    except (ValueError, TypeError):
        return False, f"{spec.path} = {value!r} is not a quantity"
    ok = have >= parse_quantity(spec.value)
    return ok, f"{spec.path} = {value}" + ("" if ok else f", want at least {spec.value}")


def _field_in(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    value, problem = _field(api, spec)
    if problem:
        return False, problem
    ok = value in spec.values
    return ok, f"{spec.path} = {value!r}" + ("" if ok else f", want one of {spec.values!r}")


def _field_not_in(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    obj = api.get(spec.kind, spec.name)
    if obj is None:
        return False, f"{spec.kind} {spec.name} not found"
    value = resolve_path(obj, spec.path)
    if value is _MISSING:
        return True, f"{spec.path} is not set"
    ok = value not in spec.values
    return ok, f"{spec.path} = {value!r}" + ("" if ok else " (one of the values it must not be)")


def _samples(data: dict[str, Any]) -> list[tuple[str, float]]:
    """(series, value) pairs of an instant query's ``data`` (scalar or vector)."""
    kind, result = data.get("resultType"), data.get("result")
    if kind == "scalar" and isinstance(result, list) and len(result) == 2:
        return [("scalar", float(result[1]))]
    out = []
    for item in (result or []) if kind == "vector" else []:
        labels = item.get("metric") or {}
        inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
        name = labels.get("__name__", "") + (f"{{{inner}}}" if inner else "")
        out.append((name or "the result", float(item["value"][1])))
    return out


def _metric(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    status, body = api.query(spec.query)
    if status == 404 or body is None:
        if spec.unavailable == "skip":
            return True, f"skipped: no metrics source answered ({api.prometheus})"
        return False, f"no metrics source answered ({api.prometheus})"
    if status >= 400 or body.get("status") != "success":
        return False, f"query failed: {body.get('errorType', status)}: {body.get('error', '')}".rstrip(": ")
    try:
        samples = _samples(body.get("data") or {})
    except (KeyError, TypeError, ValueError, IndexError):
        return False, "query returned a malformed result"
    if not samples:
        return spec.empty == "pass", "the query returned no sample"
    low = spec.min if spec.min is not None else float("-inf")
    high = spec.max if spec.max is not None else float("inf")
    bad = [(name, v) for name, v in samples if not low <= v <= high]
    if bad:
        name, v = bad[0]
        return False, f"{name} = {v:g}, want within [{low:g}, {high:g}]" + (
            f" (+{len(bad) - 1} more)" if len(bad) > 1 else "")
    return True, f"{len(samples)} sample(s) within [{low:g}, {high:g}]"


def _exists(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    found = api.get(spec.kind, spec.name) is not None
    return found, f"{spec.kind} {spec.name} {'exists' if found else 'not found'}"


def _not_exists(api: _Api, spec: CheckSpec) -> tuple[bool, str]:
    found, detail = _exists(api, spec)
    return not found, detail


_EVALUATORS = {
    "rollout_complete": _rollout_complete,
    "pods_ready": _pods_ready,
    "field_equals": _field_equals,
    "field_set": _field_set,
    "quantity_at_least": _quantity_at_least,
    "field_in": _field_in,
    "field_not_in": _field_not_in,
    "metric": _metric,
    "exists": _exists,
    "not_exists": _not_exists,
    "no_crashloop": _no_crashloop,
    "replicas_at_least": _replicas_at_least,
}
