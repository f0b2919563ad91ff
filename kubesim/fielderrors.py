"""Field error lists worded like apimachinery's ``field.ErrorList`` and the 422 they become."""

from __future__ import annotations

import json
from typing import Any

from .errors import ApiError, invalid

_REASONS = (
    ("Required value", "FieldValueRequired"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Forbidden", "FieldValueForbidden"),
    ("Not found", "FieldValueNotFound"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
)


def go_value(v: Any) -> str:
    """Approximately Go's ``%#v``/``%q`` rendering used in field error messages."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, dict) and all(isinstance(x, str) for x in v.values()):
        inner = ", ".join(f"{json.dumps(k)}:{json.dumps(x)}" for k, x in sorted(v.items()))
        return "map[string]string{" + inner + "}"
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "[]string{" + ", ".join(json.dumps(x) for x in v) + "}"
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def go_label_selector(sel: Any) -> str:
    sel = sel if isinstance(sel, dict) else {}
    labels = sel.get("matchLabels")
    exprs = sel.get("matchExpressions")
    ml = go_value(labels) if labels else "map[string]string(nil)"
    if exprs:
        items = ", ".join(
            f'v1.LabelSelectorRequirement{{Key:{json.dumps(e.get("key", ""))}, '
            f'Operator:{json.dumps(e.get("operator", ""))}, Values:{go_value(e.get("values") or [])}}}'
            for e in exprs if isinstance(e, dict))
        me = "[]v1.LabelSelectorRequirement{" + items + "}"
    else:
        me = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{ml}, MatchExpressions:{me}}}"


class FieldErrors:
    """Collects (field path, message) pairs; ``raise_if_any`` turns them into the 422 Status."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, path: str, message: str) -> None:
        self.items.append((path, message))

    def required(self, path: str, detail: str = "") -> None:
        self.add(path, "Required value" + (f": {detail}" if detail else ""))

    def invalid(self, path: str, value: Any, detail: str, rendered: str | None = None) -> None:
        self.add(path, f"Invalid value: {rendered if rendered is not None else go_value(value)}: {detail}")

    def unsupported(self, path: str, value: Any, supported: list[str] | tuple[str, ...]) -> None:
        allowed = ", ".join(json.dumps(s) for s in supported)
        self.add(path, f"Unsupported value: {go_value(value)}: supported values: {allowed}")

    def duplicate(self, path: str, value: Any) -> None:
        self.add(path, f"Duplicate value: {go_value(value)}")

    def forbidden(self, path: str, detail: str) -> None:
        self.add(path, f"Forbidden: {detail}")

    def not_found(self, path: str, value: Any) -> None:
        self.add(path, f"Not found: {go_value(value)}")

    def too_long(self, path: str, limit: int) -> None:
        self.add(path, f"Too long: must have at most {limit} bytes")

    def check(self, path: str, value: Any, messages: list[str]) -> None:
        """Attach each message of a syntax check (``naming.*``) as an Invalid value."""
        for m in messages:
            self.invalid(path, value, m)

    def non_negative(self, path: str, value: Any) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            self.invalid(path, value, "must be greater than or equal to 0")

    def raise_if_any(self, qualified_kind: str, name: str) -> None:
        if not self.items:
            return
        err: ApiError = invalid(qualified_kind, name, self.items)
        for cause in err.details["causes"]:
            cause["reason"] = next((r for p, r in _REASONS if cause["message"].startswith(p)), "FieldValueInvalid")
        if len(self.items) > 1:
            text = ", ".join(f"{f}: {m}" for f, m in self.items)
            err.message = f'{qualified_kind} "{name}" is invalid: [{text}]'
            err.args = (err.message,)
        raise err
