"""Formatting helpers shared by the table printers, ported from the apiserver's printers so
cells read exactly as a real cluster prints them (ages, label selectors, container lists)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

Obj = dict[str, Any]
Cell = Any


@dataclass(frozen=True)
class Column:
    """One meta.k8s.io/v1 TableColumnDefinition."""

    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description, "priority": self.priority}


@dataclass(frozen=True)
class Printer:
    """Column definitions plus the function that turns one object into its row cells."""

    columns: tuple[Column, ...]
    cells: Callable[[Obj, datetime], list[Cell]]
    conditions: Callable[[Obj], list[dict[str, str]] | None] | None = None


NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some "
            "resources may allow a client to request the generation of an appropriate name automatically. "
            "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
            "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
AGE_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
           "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
           "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
           "Null for lists. More info: "
           "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")

NAME = Column("Name", "string", "name", NAME_DOC)
AGE = Column("Age", "string", "", AGE_DOC)
CONTAINERS = Column("Containers", priority=1, description="Names of each container in the template.")
IMAGES = Column("Images", priority=1, description="Images referenced by each container in the template.")


def col(name: str, description: str = "", type_: str = "string", priority: int = 0) -> Column:
    return Column(name, type_, "", description, priority)


def wide(name: str, description: str = "", type_: str = "string") -> Column:
    return Column(name, type_, "", description, 1)


# -- time ------------------------------------------------------------------------------------
def parse_time(value: Any) -> datetime | None:
    """An RFC3339 (or RFC3339Micro) timestamp, or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt


_NS_PER_S = 1_000_000_000


def human_duration(seconds: float) -> str:
    """apimachinery duration.HumanDuration: ~2-3 significant figures ("5s", "3m20s", "2d4h")."""
    whole = int(seconds)  # Go truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 60 * 2:
        return f"{whole}s"
    ns = int(round(seconds * _NS_PER_S))
    minutes = ns // (60 * _NS_PER_S)
    if minutes < 10:
        s = (ns // _NS_PER_S) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // (3600 * _NS_PER_S)
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: Any, now: datetime) -> str:
    """translateTimestampSince: the age of a timestamp, "<unknown>" when it is unset."""
    t = value if isinstance(value, datetime) else parse_time(value)
    if t is None:
        return "<unknown>"
    return human_duration((now - t).total_seconds())


def age(obj: Obj, now: datetime) -> str:
    return since(meta(obj).get("creationTimestamp"), now)


def created_at(obj: Obj) -> str:
    """The default table convertor's "Created At" cell: RFC3339 in UTC."""
    t = parse_time(meta(obj).get("creationTimestamp"))
    if t is None:
        return "0001-01-01T00:00:00Z"
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- object access ---------------------------------------------------------------------------
def meta(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def name(obj: Obj) -> str:
    return str(meta(obj).get("name", ""))


def dig(obj: Any, *path: str, default: Any = None) -> Any:
    """obj[path[0]][path[1]]...; ``default`` when any step is missing or not a mapping."""
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return default
        cur = cur.get(key)
        if cur is None:
            return default
    return cur


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return default


# -- labels and selectors -------------------------------------------------------------------
def label_string(labels: Any) -> str:
    """labels.Set.String(): sorted "k=v" pairs joined by commas."""
    d = as_dict(labels)
    return ",".join(f"{k}={d[k]}" for k in sorted(d))


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: like label_string, "<none>" when empty."""
    return label_string(labels) or "<none>"


def selector_string(selector: Any) -> str:
    """metav1.LabelSelectorAsSelector(...).String(); "" for an empty or missing selector."""
    sel = as_dict(selector)
    reqs: list[tuple[str, str]] = []
    for k, v in as_dict(sel.get("matchLabels")).items():
        reqs.append((str(k), f"{k}={v}"))
    for expr in as_list(sel.get("matchExpressions")):
        if not isinstance(expr, dict):
            continue
        key = str(expr.get("key", ""))
        op = expr.get("operator")
        values = sorted(str(v) for v in as_list(expr.get("values")))
        if op == "In":
            reqs.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            reqs.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            reqs.append((key, key))
        elif op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
    reqs.sort(key=lambda r: r[0])
    return ",".join(text for _, text in reqs)


def format_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: like selector_string, "<none>" when empty."""
    return selector_string(selector) or "<none>"


def container_cells(containers: Any) -> tuple[str, str]:
    """layoutContainerCells: container names and images, each comma-joined."""
    cs = [c for c in as_list(containers) if isinstance(c, dict)]
    return ",".join(str(c.get("name", "")) for c in cs), ",".join(str(c.get("image", "")) for c in cs)


def template_containers(obj: Obj) -> Any:
    return dig(obj, "spec", "template", "spec", "containers", default=[])


def bool_cell(value: Any) -> str:
    """printBoolPtr: "True"/"False", "<unset>" when nil."""
    if value is None:
        return "<unset>"
    return "True" if value else "False"
