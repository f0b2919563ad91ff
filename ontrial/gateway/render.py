"""Text renderings agents read: server-side tables (like ``kubectl get``) and concise
``kubectl describe``-like views of pods, deployments, services and anything else."""

from __future__ import annotations

from typing import Any

import yaml


def columns(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["   ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_table(doc: dict[str, Any], kind: str, namespace: str) -> str:
    """A meta.k8s.io Table (priority-0 columns), or a NAME/CREATED fallback for plain lists."""
    if doc.get("kind") == "Table":
        defs = doc.get("columnDefinitions") or []
        idx = [i for i, c in enumerate(defs) if not c.get("priority")]
        rows = [[_cell((r.get("cells") or [])[i] if i < len(r.get("cells") or []) else "") for i in idx]
                for r in doc.get("rows") or []]
        header = [defs[i].get("name", "").upper() for i in idx]
    else:
        header = ["NAME", "CREATED"]
        rows = [[(o.get("metadata") or {}).get("name", ""), (o.get("metadata") or {}).get("creationTimestamp", "")]
                for o in doc.get("items") or []]
    if not rows:
        return f"No resources found in {namespace} namespace."
    return columns(header, rows)


def to_yaml(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=120)


def strip_noise(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj.get("metadata") or {})
    meta.pop("managedFields", None)
    annotations = dict(meta.get("annotations") or {})
    annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return {**obj, "metadata": meta}


def _kv(mapping: dict[str, Any] | None, indent: int) -> str:
    if not mapping:
        return "<none>"
    pad = "\n" + " " * indent
    return pad.join(f"{k}={v}" for k, v in sorted(mapping.items()))


def _field(label: str, value: Any, width: int = 16) -> str:
    return f"{label + ':':<{width}}{value}"


def render_events(events: list[dict[str, Any]]) -> str:
    if not events:
        return "Events:          <none>"
    rows = []
    for ev in sorted(events, key=_event_time):
        count = ev.get("count") or 1
        when = _event_time(ev) + (f" (x{count})" if count > 1 else "")
        source = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
        rows.append([ev.get("type", ""), ev.get("reason", ""), when, source, ev.get("message", "")])
    table = columns(["Type", "Reason", "Last Seen", "From", "Message"],
                    [["----", "------", "---------", "----", "-------"], *rows])
    return "Events:\n" + "\n".join("  " + line for line in table.splitlines())


def _event_time(ev: dict[str, Any]) -> str:
    return str(ev.get("lastTimestamp") or ev.get("eventTime") or ev.get("firstTimestamp")
               or (ev.get("metadata") or {}).get("creationTimestamp") or "")


def _env_lines(container: dict[str, Any], pad: str) -> list[str]:
    lines = []
    for env in container.get("env") or []:
        value = env.get("value")
        src = env.get("valueFrom") or {}
        if "configMapKeyRef" in src:
            ref = src["configMapKeyRef"]
            value = f"<set to the key '{ref.get('key')}' of config map '{ref.get('name')}'>"
        elif "secretKeyRef" in src:
            ref = src["secretKeyRef"]
            value = f"<set to the key '{ref.get('key')}' in secret '{ref.get('name')}'>"
        elif "fieldRef" in src:
            value = f"({src['fieldRef'].get('fieldPath')})"
        elif src:
            value = f"<from {', '.join(src)}>"
        lines.append(f"{pad}  {env.get('name')}:  {value if value is not None else ''}")
    for ref in container.get("envFrom") or []:
        if "configMapRef" in ref:
            lines.append(f"{pad}  {ref['configMapRef'].get('name')}  ConfigMap")
        elif "secretRef" in ref:
            lines.append(f"{pad}  {ref['secretRef'].get('name')}  Secret")
    return [f"{pad}Environment:" + ("" if lines else "  <none>"), *lines]


def _state_lines(label: str, state: dict[str, Any] | None, pad: str) -> list[str]:
    if not state:
        return [f"{pad}{label + ':':<16}<none>"] if label == "State" else []
    name, detail = next(iter(state.items()))
    lines = [f"{pad}{label + ':':<16}{name.capitalize()}"]
    for key, title in (("reason", "Reason"), ("message", "Message"), ("exitCode", "Exit Code"),
                       ("startedAt", "Started"), ("finishedAt", "Finished")):
        if (detail or {}).get(key) is not None:
            lines.append(f"{pad}  {title + ':':<14}{detail[key]}")
    return lines


def _container_lines(c: dict[str, Any], status: dict[str, Any] | None, pad: str) -> list[str]:
    lines = [f"{pad}{c.get('name')}:", f"{pad}  {'Image:':<16}{c.get('image')}"]
    ports = ", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in c.get("ports") or [])
    if ports:
        lines.append(f"{pad}  {'Port:':<16}{ports}")
    if c.get("command") or c.get("args"):
        lines.append(f"{pad}  {'Command:':<16}{' '.join(map(str, (c.get('command') or []) + (c.get('args') or [])))}")
    if status is not None:
        lines += _state_lines("State", status.get("state"), pad + "  ")
        lines += _state_lines("Last State", status.get("lastState"), pad + "  ")
        lines.append(f"{pad}  {'Ready:':<16}{status.get('ready', False)}")
        lines.append(f"{pad}  {'Restart Count:':<16}{status.get('restartCount', 0)}")
    for key in ("limits", "requests"):
        res = (c.get("resources") or {}).get(key)
        if res:
            lines.append(f"{pad}  {key.capitalize()}:")
            lines += [f"{pad}    {k}:  {v}" for k, v in res.items()]
    for probe in ("livenessProbe", "readinessProbe"):
        if c.get(probe):
            get = (c[probe].get("httpGet") or {})
            what = f"http-get :{get.get('port')}{get.get('path', '')}" if get else ", ".join(c[probe])
            lines.append(f"{pad}  {probe[:-5].capitalize() + ':':<16}{what}")
    lines += _env_lines(c, pad + "  ")
    return lines


def describe_pod(pod: dict[str, Any], events: list[dict[str, Any]]) -> str:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "Unknown")
    lines = [_field("Name", meta.get("name")), _field("Namespace", meta.get("namespace")),
             _field("Node", spec.get("nodeName") or "<none>"), _field("Start Time", status.get("startTime", "<none>")),
             _field("Labels", _kv(meta.get("labels"), 16)), _field("Status", phase)]
    if status.get("reason"):
        lines.append(_field("Reason", status["reason"]))
    if status.get("message"):
        lines.append(_field("Message", status["message"]))
    lines.append(_field("IP", status.get("podIP", "<none>")))
    if owner:
        lines.append(_field("Controlled By", f"{owner.get('kind')}/{owner.get('name')}"))
    statuses = {s.get("name"): s for s in status.get("containerStatuses") or []}
    init_statuses = {s.get("name"): s for s in status.get("initContainerStatuses") or []}
    if spec.get("initContainers"):
        lines.append("Init Containers:")
        for c in spec["initContainers"]:
            lines += _container_lines(c, init_statuses.get(c.get("name"), {}), "  ")
    lines.append("Containers:")
    for c in spec.get("containers") or []:
        lines += _container_lines(c, statuses.get(c.get("name"), {}), "  ")
    conds = status.get("conditions") or []
    if conds:
        lines.append("Conditions:")
        lines += ["  " + r for r in columns(["Type", "Status"], [[c.get("type", ""), c.get("status", "")]
                                                                for c in conds]).splitlines()]
    lines.append(render_events(events))
    return "\n".join(lines)


def describe_deployment(dep: dict[str, Any], replicasets: list[dict[str, Any]], events: list[dict[str, Any]]) -> str:
    meta, spec, status = dep.get("metadata") or {}, dep.get("spec") or {}, dep.get("status") or {}
    strategy = spec.get("strategy") or {}
    want = spec.get("replicas", 1)
    replicas = (f"{want} desired | {status.get('updatedReplicas', 0)} updated | {status.get('replicas', 0)} total | "
                f"{status.get('availableReplicas', 0)} available | {status.get('unavailableReplicas', 0)} unavailable")
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k != "kubectl.kubernetes.io/last-applied-configuration"}
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    lines = [_field("Name", meta.get("name"), 24), _field("Namespace", meta.get("namespace"), 24),
             _field("CreationTimestamp", meta.get("creationTimestamp"), 24),
             _field("Labels", _kv(meta.get("labels"), 24), 24),
             _field("Annotations", "\n".join(f"{' ' * 24 if i else ''}{k}: {v}"
                                             for i, (k, v) in enumerate(sorted(annotations.items())))
                    or "<none>", 24),
             _field("Selector", ",".join(f"{k}={v}" for k, v in selector.items()), 24),
             _field("Replicas", replicas, 24), _field("StrategyType", strategy.get("type", "RollingUpdate"), 24)]
    if spec.get("paused"):
        lines.append(_field("Paused", "true", 24))
    rolling = strategy.get("rollingUpdate")
    if rolling:
        lines.append(_field("RollingUpdateStrategy", f"{rolling.get('maxUnavailable')} max unavailable, "
                                                     f"{rolling.get('maxSurge')} max surge", 24))
    template = spec.get("template") or {}
    lines += ["Pod Template:", f"  Labels:  {_kv((template.get('metadata') or {}).get('labels'), 11)}"]
    tpl_ann = (template.get("metadata") or {}).get("annotations")
    if tpl_ann:
        lines.append(f"  Annotations:  {_kv(tpl_ann, 16)}")
    lines.append("  Containers:")
    for c in (template.get("spec") or {}).get("containers") or []:
        lines += _container_lines(c, None, "   ")
    conds = status.get("conditions") or []
    if conds:
        lines.append("Conditions:")
        rows = [[c.get("type", ""), c.get("status", ""), c.get("reason", "")] for c in conds]
        lines += ["  " + r for r in columns(["Type", "Status", "Reason"], rows).splitlines()]
    revision = (meta.get("annotations") or {}).get("deployment.kubernetes.io/revision")
    new = [rs for rs in replicasets if (rs["metadata"].get("annotations") or {})
           .get("deployment.kubernetes.io/revision") == revision]
    old = [rs for rs in replicasets if rs not in new and ((rs.get("spec") or {}).get("replicas") or 0) > 0]

    def rs_line(rs: dict[str, Any]) -> str:
        created, wanted = (rs.get("status") or {}).get("replicas", 0), (rs.get("spec") or {}).get("replicas", 0)
        return f"{rs['metadata']['name']} ({created}/{wanted} replicas created)"

    lines.append(_field("OldReplicaSets", ", ".join(rs_line(r) for r in old) or "<none>"))
    lines.append(_field("NewReplicaSet", ", ".join(rs_line(r) for r in new) or "<none>"))
    lines.append(render_events(events))
    return "\n".join(lines)


def describe_service(svc: dict[str, Any], endpoints: dict[str, Any] | None, events: list[dict[str, Any]]) -> str:
    meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
    addrs = []
    for subset in (endpoints or {}).get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for a in subset.get("addresses") or []:
            addrs += [f"{a.get('ip')}:{p}" if p else a.get("ip") for p in ports]
    ports = [f"{p.get('name') or '<unset>'}  {p.get('port')}/{p.get('protocol', 'TCP')} -> "
             f"{p.get('targetPort', p.get('port'))}" for p in spec.get("ports") or []]
    lines = [_field("Name", meta.get("name"), 19), _field("Namespace", meta.get("namespace"), 19),
             _field("Labels", _kv(meta.get("labels"), 19), 19),
             _field("Selector", ",".join(f"{k}={v}" for k, v in (spec.get("selector") or {}).items()) or "<none>", 19),
             _field("Type", spec.get("type", "ClusterIP"), 19), _field("IP", spec.get("clusterIP", "<none>"), 19),
             _field("Port", ("\n" + " " * 19).join(ports) or "<none>", 19),
             _field("Endpoints", ",".join(addrs) or "<none>", 19), render_events(events)]
    return "\n".join(lines)


def describe_generic(obj: dict[str, Any], events: list[dict[str, Any]]) -> str:
    obj = strip_noise(obj)
    meta = obj.get("metadata") or {}
    body = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    lines = [_field("Name", meta.get("name")), _field("Namespace", meta.get("namespace", "<none>")),
             _field("Labels", _kv(meta.get("labels"), 16)),
             _field("Annotations", _kv(meta.get("annotations"), 16)), "", to_yaml(body).rstrip(),
             "", render_events(events)]
    return "\n".join(lines)
