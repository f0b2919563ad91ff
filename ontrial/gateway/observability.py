"""Read tools beyond cluster objects: PromQL metrics, the alerts, the task's runbooks.

PromQL goes to a Prometheus HTTP API the harness chose for the trial (``TrialExtras.prometheus``):
on kubesim its namespace-scoped API for the trial namespace (so an agent sees its trial's series
only), elsewhere a configured URL. No source answering is a clear tool error, not a failure of
the agent.
"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx

from ..sandbox.rest import KubeError
from .context import ToolContext, ToolError

PROMETHEUS_TIMEOUT = 20.0
MAX_POINTS = 30


def _prom_error(text: str) -> str:
    try:
        doc = json.loads(text)
    except ValueError:
        return text[:300]
    if isinstance(doc, dict) and doc.get("status") == "error":
        return f"{doc.get('errorType', 'error')}: {doc.get('error', '')}"
    return text[:300]


async def _prom_get(ctx: ToolContext, endpoint: str, params: dict[str, Any]) -> Any:
    """GET <source>/api/v1/<endpoint> on the first source that serves it; the ``data`` field."""
    sources = list(ctx.extras.prometheus)
    rest = ctx.extras.metrics_rest or ctx.rest
    if "prometheus" in ctx.cache:
        sources = [ctx.cache["prometheus"]]
    if not sources:
        raise ToolError("metrics are not available in this trial (no Prometheus source configured)")
    tried = []
    for source in sources:
        path = f"{source.rstrip('/')}/api/v1/{endpoint}"
        try:
            if source.startswith(("http://", "https://")):
                async with httpx.AsyncClient(timeout=PROMETHEUS_TIMEOUT) as client:
                    resp = await client.get(path, params={k: v for k, v in params.items() if v is not None})
                if resp.status_code == 404:
                    tried.append(path)
                    continue
                if resp.status_code >= 400:
                    raise ToolError(f"PromQL error ({resp.status_code}): {_prom_error(resp.text)}")
                doc = resp.json()
            else:
                doc = (await rest.request("GET", path, query=params)).json()
        except KubeError as e:
            if e.status in (404, 405):
                tried.append(path)
                continue
            if e.status in (400, 422):
                raise ToolError(f"PromQL error ({e.status}): {_prom_error(e.message)}") from e
            raise
        except httpx.HTTPError as e:
            raise ToolError(f"metrics source {source} unreachable: {type(e).__name__}: {e}") from e
        if not isinstance(doc, dict) or doc.get("status") != "success":
            raise ToolError(f"unexpected answer from {path}: {str(doc)[:200]}")
        ctx.cache["prometheus"] = source
        return doc.get("data")
    raise ToolError("metrics are not available on this cluster: no Prometheus HTTP API answered "
                    f"({', '.join('GET ' + t for t in tried)} → 404)")


def _labels(metric: dict[str, str]) -> str:
    name = metric.get("__name__", "")
    inner = ", ".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k != "__name__")
    return f"{name}{{{inner}}}"


def _num(value: Any) -> str:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(f) or math.isinf(f):
        return str(value)
    return f"{f:.6g}"


def render_result(data: Any) -> str:
    """A Prometheus ``data`` object as lines an agent can read."""
    if not isinstance(data, dict):
        return str(data)
    kind, result = data.get("resultType"), data.get("result")
    if kind in ("scalar", "string"):
        return f"{kind}: {_num(result[1]) if isinstance(result, list) else result}"
    if not result:
        return f"(empty {kind or 'result'}: no series matched)"
    lines = []
    for series in result:
        metric = _labels(series.get("metric") or {})
        if kind == "vector":
            lines.append(f"{metric} => {_num((series.get('value') or [None, None])[1])}")
        else:
            values = [_num(v[1]) for v in series.get("values") or []]
            shown = values if len(values) <= MAX_POINTS else values[:5] + ["..."] + values[-(MAX_POINTS - 6):]
            lines.append(f"{metric} => [{' '.join(shown)}] ({len(values)} points, oldest first)")
    return "\n".join(sorted(lines))


async def query_metrics(ctx: ToolContext, args: dict[str, Any]) -> str:
    query = args["query"]
    minutes = args.get("range_minutes")
    if minutes:
        if minutes <= 0 or minutes > 24 * 60:
            raise ToolError("range_minutes must be between 1 and 1440")
        now = await _prom_now(ctx)
        step = args.get("step_seconds") or max(15, int(minutes * 60 / 60))
        data = await _prom_get(ctx, "query_range", {"query": query, "start": now - minutes * 60, "end": now,
                                                    "step": step})
    else:
        data = await _prom_get(ctx, "query", {"query": query})
    return render_result(data)


async def _prom_now(ctx: ToolContext) -> float:
    """The metrics source's "now" (kubesim's clock is simulated): the time of ``vector(0)``."""
    data = await _prom_get(ctx, "query", {"query": "vector(0)"})
    try:
        return float(data["result"][0]["value"][0])
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ToolError("could not read the metrics source's current time") from e


def _alert_line(alert: dict[str, Any]) -> str:
    labels = dict(alert.get("labels") or {})
    name = alert.get("name") or labels.pop("alertname", "?")
    ann = alert.get("annotations") or {}
    state = alert.get("state") or alert.get("status") or "firing"
    text = ann.get("summary") or ann.get("description") or ""
    label_text = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return f"{name} [{state}] {{{label_text}}}" + (f": {text}" if text else "")


async def get_alerts(ctx: ToolContext, args: dict[str, Any]) -> str:
    lines = [_alert_line(a) for a in ctx.extras.alerts]
    note = ""
    try:
        data = await _prom_get(ctx, "alerts", {})
        for alert in (data or {}).get("alerts") or []:
            line = _alert_line(alert)
            if line not in lines:
                lines.append(line)
    except (ToolError, KubeError) as e:
        note = f"\n(no live alert source: {e})" if not lines else ""
    if not lines:
        return "No alerts." + note
    return "\n".join(lines) + note


async def get_runbook(ctx: ToolContext, args: dict[str, Any]) -> str:
    books = ctx.extras.runbooks
    name = args.get("name")
    if not books:
        raise ToolError("this trial has no runbooks")
    if not name:
        return "Runbooks: " + ", ".join(sorted(books)) + "\n(call get_runbook with name to read one)"
    if name not in books:
        raise ToolError(f"no runbook named {name!r}; runbooks: {', '.join(sorted(books))}")
    return books[name]
