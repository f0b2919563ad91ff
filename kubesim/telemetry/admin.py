"""Telemetry's admin endpoints (admin token only, like the rest of ``/kubesim/v1/``).

- ``PUT|POST /kubesim/v1/namespaces/<ns>/rules``: a Prometheus rule file (YAML or JSON), or an
  envelope ``{"rules": <rule file or YAML text>, "receiver": {"url", "group_by", "group_wait",
  "group_interval", "repeat_interval", "send_resolved"}}``; ``?webhook=<url>`` also sets the
  receiver URL. Replaces the namespace's rules; answers a summary.
- ``GET`` of the same path: the registered groups and receiver; ``DELETE`` removes them.
- ``GET /kubesim/v1/namespaces/<ns>/notifications``: the Alertmanager payloads sent so far.
- ``POST /kubesim/v1/telemetry/profiles``: workload profiles that may carry ``telemetry`` sections.
- ``/kubesim/v1/namespaces/<ns>/prometheus/api/v1/...``: the namespace's Prometheus API.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

import yaml

from ..errors import ApiError
from ..resources import NAMESPACES
from ..workloads.fields import ProfileError
from . import prom_api
from .alertmanager import Receiver
from .prom_api import Answer, _pairs
from .rules import RuleError, parse_duration, parse_rule_file

_NS_PATH = re.compile(r"^/kubesim/v1/namespaces/(?P<ns>[^/]+)/(?P<what>rules|notifications|prometheus)(?P<rest>/.*)?$")
PROFILES_PATH = "/kubesim/v1/telemetry/profiles"
MAX_RULE_BYTES = 1024 * 1024


def _json(status: int, obj: Any) -> Answer:
    return status, [("Content-Type", "application/json")], json.dumps(obj, separators=(",", ":")).encode()


def _fail(err: ApiError) -> Answer:
    return _json(err.code, err.status())


def handles(path: str) -> bool:
    """Whether ``path`` is one of telemetry's admin routes (for the server's routing)."""
    return path.rstrip("/") == PROFILES_PATH or _NS_PATH.match(path) is not None


def _decode(body: bytes) -> Any:
    if len(body) > MAX_RULE_BYTES:
        raise ApiError(413, f"Request entity too large: limit is {MAX_RULE_BYTES}", "RequestEntityTooLarge")
    if not body.strip():
        raise ApiError(400, "the request body is empty; expected a rule file", "BadRequest")
    try:
        return yaml.safe_load(body.decode("utf-8", "replace"))
    except yaml.YAMLError as e:
        raise ApiError(400, f"cannot parse the request body: {str(e).splitlines()[0]}", "BadRequest") from None


def _seconds(value: Any, default: float, field: str) -> float:
    if value is None:
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return parse_duration(str(value))
    except ValueError:
        raise ApiError(400, f"receiver.{field}: not a valid duration: {value!r}", "BadRequest") from None


def receiver_from(spec: Any, webhook: str | None) -> Receiver:
    d = Receiver()
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise ApiError(400, "receiver must be a mapping", "BadRequest")
    url = webhook or spec.get("url")
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ApiError(400, f"receiver.url must be an http(s) URL, got {url!r}", "BadRequest")
    group_by = spec.get("group_by", list(d.group_by))
    if not isinstance(group_by, list) or not all(isinstance(x, str) for x in group_by):
        raise ApiError(400, "receiver.group_by must be a list of label names", "BadRequest")
    return Receiver(url=url, name=str(spec.get("name") or d.name), group_by=tuple(group_by),
                    group_wait=_seconds(spec.get("group_wait"), d.group_wait, "group_wait"),
                    group_interval=_seconds(spec.get("group_interval"), d.group_interval, "group_interval"),
                    repeat_interval=_seconds(spec.get("repeat_interval"), d.repeat_interval, "repeat_interval"),
                    send_resolved=bool(spec.get("send_resolved", True)))


def _receiver_json(r: Receiver) -> dict[str, Any]:
    return {"name": r.name, "url": r.url, "group_by": list(r.group_by), "group_wait": r.group_wait,
            "group_interval": r.group_interval, "repeat_interval": r.repeat_interval,
            "send_resolved": r.send_resolved}


def _rules(cluster: Any, method: str, ns: str, params: dict[str, str], body: bytes) -> Answer:
    tel = cluster.telemetry
    if method == "DELETE":
        removed = tel.remove_rules(ns)
        return _json(200, {"namespace": ns, "removed": removed})
    if method == "GET":
        nr = tel.rules.get(ns)
        if nr is None:
            raise ApiError(404, f'no rules registered for namespace "{ns}"', "NotFound")
        groups = [{"name": gs.group.name, "interval": gs.group.interval,
                   "rules": [{"type": rs.rule.kind, "name": rs.rule.name, "expr": rs.rule.expr,
                              "for": rs.rule.for_seconds} for rs in gs.rules]} for gs in nr.groups]
        return _json(200, {"namespace": ns, "groups": groups, "receiver": _receiver_json(tel.receivers[ns])})
    if method not in ("PUT", "POST"):
        raise ApiError(405, "the server does not allow this method on the requested resource", "MethodNotAllowed")
    doc = _decode(body)
    receiver_spec = None
    if isinstance(doc, Mapping) and "rules" in doc and "groups" not in doc:
        receiver_spec = doc.get("receiver")
        if doc.get("webhook_url") and not receiver_spec:
            receiver_spec = {"url": doc["webhook_url"]}
        doc = doc["rules"]
    try:
        groups = parse_rule_file(doc, tel.interval)
    except RuleError as e:
        raise ApiError(400, f"invalid rule file: {e}", "BadRequest") from None
    receiver = receiver_from(receiver_spec, params.get("webhook"))
    tel.set_rules(ns, groups, receiver)
    return _json(200, {"namespace": ns, "groups": len(groups), "rules": sum(len(g.rules) for g in groups),
                       "receiver": _receiver_json(receiver)})


def _notifications(cluster: Any, ns: str) -> Answer:
    items = [{"simTime": n.sim_time, "url": n.url, "delivered": n.delivered, "error": n.error,
              "attempts": n.attempts, "payload": n.payload}
             for n in cluster.telemetry.alertmanager.sent.get(ns, ())]
    return _json(200, {"namespace": ns, "notifications": items})


def _profiles(cluster: Any, body: bytes) -> Answer:
    doc = _decode(body)
    if isinstance(doc, Mapping):
        doc = doc.get("profiles")
    if not isinstance(doc, list) or not all(isinstance(p, Mapping) for p in doc):
        raise ApiError(400, 'body must be a list of profile objects (or {"profiles": [...]})', "BadRequest")
    for p in doc:
        try:
            cluster.telemetry.register_profile(p)
        except (ProfileError, ValueError, TypeError) as e:
            raise ApiError(422, f"invalid workload profile: {e}", "Invalid") from None
    return _json(200, {"registered": len(doc)})


def handle(cluster: Any, method: str, path: str, query: Any = None, body: bytes | None = None) -> Answer:
    """Serve one telemetry admin request; returns ``(status, headers, body_bytes)``."""
    body = body or b""
    try:
        if getattr(cluster, "telemetry", None) is None:
            raise ApiError(503, "telemetry is not attached to this cluster", "ServiceUnavailable")
        if path.rstrip("/") == PROFILES_PATH:
            if method != "POST":
                raise ApiError(405, "the server does not allow this method on the requested resource",
                               "MethodNotAllowed")
            return _profiles(cluster, body)
        m = _NS_PATH.match(path)
        if m is None:
            raise ApiError(404, "the server could not find the requested resource", "NotFound")
        ns, what = m.group("ns"), m.group("what")
        if what == "prometheus":
            return prom_api.handle(cluster, method, path, query, body)
        if cluster.store.find(NAMESPACES, "", ns) is None:
            raise ApiError(404, f'namespaces "{ns}" not found', "NotFound", {"name": ns, "kind": "namespaces"})
        if what == "notifications":
            if method != "GET":
                raise ApiError(405, "the server does not allow this method on the requested resource",
                               "MethodNotAllowed")
            return _notifications(cluster, ns)
        params = dict(_pairs(query, None))
        return _rules(cluster, method, ns, params, body)
    except ApiError as e:
        return _fail(e)
