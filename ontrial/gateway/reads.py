"""Read-only tools: get_resources, describe, get_events, get_logs."""

from __future__ import annotations

from typing import Any

from ..sandbox.kinds import KindInfo, lookup_kind
from ..sandbox.rest import TABLE
from .context import ToolContext, ToolError
from .render import describe_deployment, describe_generic, describe_pod, describe_service, render_events, \
    render_table, strip_noise, to_yaml

ALL_KINDS = ("pods", "services", "deployments", "replicasets")
EVENTS = lookup_kind("Event")


def label_selector(spec_selector: dict[str, Any] | None) -> str:
    """A LabelSelector (matchLabels + matchExpressions) as the query-string form."""
    sel = spec_selector or {}
    parts = [f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items()]
    for expr in sel.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def owned_by(obj: dict[str, Any], uid: str) -> bool:
    return any(o.get("controller") and o.get("uid") == uid
               for o in (obj.get("metadata") or {}).get("ownerReferences") or [])


async def _get(ctx: ToolContext, info: KindInfo, name: str) -> dict[str, Any]:
    return await ctx.rest.get(info, ctx.namespace, name)


def qualified_name(info: KindInfo) -> str:
    return f"{info.plural}.{info.group}" if info.group else info.plural


async def events_for(ctx: ToolContext, obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = obj.get("metadata") or {}
    assert EVENTS is not None
    events = await ctx.rest.list(EVENTS, ctx.namespace)
    return [e for e in events
            if (e.get("involvedObject") or {}).get("name") == meta.get("name")
            and (e.get("involvedObject") or {}).get("kind") in (None, obj.get("kind"))]


async def get_resources(ctx: ToolContext, args: dict[str, Any]) -> str:
    kind, name, selector = args["kind"], args.get("name"), args.get("label_selector")
    if kind.lower() == "all":
        if name:
            raise ToolError("name cannot be given with kind 'all'")
        parts = []
        for k in ALL_KINDS:
            info = await ctx.kind(k)
            parts.append(f"# {qualified_name(info)}\n" + await _table(ctx, info, selector))
        return "\n\n".join(parts)
    info = await ctx.kind(kind)
    if name:
        return to_yaml(strip_noise(await _get(ctx, info, name)))
    return await _table(ctx, info, selector)


async def _table(ctx: ToolContext, info: KindInfo, selector: str | None) -> str:
    resp = await ctx.rest.request("GET", info.collection_path(ctx.namespace), accept=TABLE,
                                  query={"labelSelector": selector, "limit": 500})
    return render_table(resp.json() or {}, info.kind, ctx.namespace)


async def describe(ctx: ToolContext, args: dict[str, Any]) -> str:
    info = await ctx.kind(args["kind"])
    obj = await _get(ctx, info, args["name"])
    obj.setdefault("kind", info.kind)
    events = await events_for(ctx, obj)
    if info.kind == "Pod":
        return describe_pod(obj, events)
    if info.kind == "Deployment":
        rs_info = await ctx.kind("ReplicaSet")
        rsets = await ctx.rest.list(rs_info, ctx.namespace,
                                    label_selector=label_selector((obj.get("spec") or {}).get("selector")))
        rsets = [r for r in rsets if owned_by(r, obj["metadata"].get("uid", ""))]
        return describe_deployment(obj, rsets, events)
    if info.kind == "Service":
        ep_info = await ctx.kind("Endpoints")
        endpoints = await ctx.rest.get_or_none(ep_info, ctx.namespace, args["name"])
        return describe_service(obj, endpoints, events)
    return describe_generic(obj, events)


async def get_events(ctx: ToolContext, args: dict[str, Any]) -> str:
    assert EVENTS is not None
    events = await ctx.rest.list(EVENTS, ctx.namespace)
    name = args.get("name")
    if name:
        events = [e for e in events
                  if (n := (e.get("involvedObject") or {}).get("name", "")) == name or n.startswith(name + "-")]
    kind = str(args.get("type") or "")
    if kind:
        events = [e for e in events if str(e.get("type", "")).lower() == kind.lower()]
    if not events:
        what = " ".join(x for x in (kind, f"for {name}" if name else "") if x)
        return f"No events found in {ctx.namespace} namespace" + (f" ({what})." if what else ".")
    for e in events:
        obj = e.get("involvedObject") or {}
        e["message"] = f"{obj.get('kind', '')}/{obj.get('name', '')}: {e.get('message', '')}"
    return render_events(events)


async def _pod_for(ctx: ToolContext, ref: str) -> tuple[str, str]:
    """"deploy/api" (or any kind/name with a selector) → a pod of it, like ``kubectl logs deploy/api``."""
    kind, _, name = ref.partition("/")
    info = await ctx.kind(kind)
    if info.kind == "Pod":
        return name, ""
    owner = await _get(ctx, info, name)
    selector = label_selector((owner.get("spec") or {}).get("selector"))
    if not selector:
        raise ToolError(f"{info.kind.lower()}/{name} has no pod selector")
    pods = await ctx.rest.list(await ctx.kind("Pod"), ctx.namespace, label_selector=selector)
    if not pods:
        raise ToolError(f"no pods found for {info.kind.lower()}/{name}")
    pods.sort(key=lambda p: ((p.get("status") or {}).get("phase") != "Running", p["metadata"]["name"]))
    note = f"Found {len(pods)} pods, using pod/{pods[0]['metadata']['name']}\n" if len(pods) > 1 else ""
    return pods[0]["metadata"]["name"], note


async def get_logs(ctx: ToolContext, args: dict[str, Any]) -> str:
    pod, note = args["pod"], ""
    if "/" in pod:
        pod, note = await _pod_for(ctx, pod)
    tail = args.get("tail")
    query = {"container": args.get("container"), "previous": True if args.get("previous") else None,
             "tailLines": int(tail) if tail is not None else None}
    resp = await ctx.rest.request("GET", f"/api/v1/namespaces/{ctx.namespace}/pods/{pod}/log", query=query,
                                  accept="text/plain, */*")
    text = resp.text()
    return note + (text if text else "(no log lines)")
