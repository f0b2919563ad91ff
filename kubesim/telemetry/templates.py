"""The part of Prometheus's alert templating that rule annotations use in practice:
``{{ $labels.x }}``, ``{{ $value }}``, ``{{ .Labels.x }}``, ``{{ .Value }}``, ``{{ $externalURL }}``,
``printf "%.2f"`` and the pipes ``humanize``, ``humanizePercentage``, ``humanizeDuration``,
``toUpper``, ``toLower``, ``title``. Anything else is left as written."""

from __future__ import annotations

import math
import re
from typing import Any, Callable

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)


def humanize(v: float) -> str:
    if v == 0 or math.isnan(v) or math.isinf(v):
        return f"{v:.4g}"
    if abs(v) >= 1:
        for prefix in ("", "k", "M", "G", "T", "P", "E", "Z"):
            if abs(v) < 1000:
                return f"{v:.4g}{prefix}"
            v /= 1000
        return f"{v:.4g}Y"
    for prefix in ("", "m", "u", "n", "p", "f", "a", "z"):
        if abs(v) >= 1:
            return f"{v:.4g}{prefix}"
        v *= 1000
    return f"{v:.4g}y"


def humanize_duration(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return f"{v:.4g}"
    if v == 0 or abs(v) >= 1:
        sign = "-" if v < 0 else ""
        v = abs(v)
        d, rem = divmod(int(v), 86400)
        h, rem = divmod(rem, 3600)
        m, s = divmod(rem, 60)
        if d:
            return f"{sign}{d}d {h}h {m}m {s}s"
        if h:
            return f"{sign}{h}h {m}m {s}s"
        if m:
            return f"{sign}{m}m {s}s"
        return f"{sign}{v:.4g}s"
    return f"{v * 1000:.4g}ms"


PIPES: dict[str, Callable[[Any], str]] = {
    "humanize": lambda v: humanize(float(v)),
    "humanizePercentage": lambda v: f"{float(v) * 100:.4g}%",
    "humanizeDuration": lambda v: humanize_duration(float(v)),
    "toUpper": lambda v: str(v).upper(),
    "toLower": lambda v: str(v).lower(),
    "title": lambda v: str(v).title(),
}


def _term(term: str, labels: dict[str, str], value: float, external_url: str) -> Any:
    term = term.strip()
    for prefix in ("$labels.", ".Labels."):
        if term.startswith(prefix):
            return labels.get(term[len(prefix):], "")
    if term in ("$value", ".Value"):
        return value
    if term == "$externalURL":
        return external_url
    if len(term) >= 2 and term[0] == term[-1] == '"':
        return term[1:-1]
    raise KeyError(term)


def _go_value(v: Any) -> str:
    """fmt's %v: floats in shortest form ("5", "0.25", "1e+21")."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        text = repr(v)
        return text[:-2] if text.endswith(".0") else text
    return str(v)


def _action(body: str, labels: dict[str, str], value: float, external_url: str) -> str:
    stages = [s.strip() for s in body.split("|")]
    head = stages[0]
    if head.startswith("printf "):
        parts = re.findall(r'"(?:[^"\\]|\\.)*"|\S+', head[len("printf "):])
        fmt = parts[0][1:-1] if parts and parts[0].startswith('"') else "%v"
        args = [_term(p, labels, value, external_url) for p in parts[1:]]
        current: Any = re.sub(r"%v", "%s", fmt) % tuple(args)
    else:
        current = _term(head, labels, value, external_url)
    for stage in stages[1:]:
        current = PIPES[stage](current)
    return _go_value(current)


def expand(template: str, labels: dict[str, str], value: float, external_url: str = "") -> str:
    def one(m: re.Match[str]) -> str:
        try:
            return _action(m.group(1), labels, value, external_url)
        except (KeyError, ValueError, TypeError, IndexError):
            return m.group(0)

    return _ACTION.sub(one, template)
