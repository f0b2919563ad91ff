"""Label and field selectors with apimachinery's grammar, matching rules and error wording.

``LabelSelector.parse("app=api,tier in (web,db),!canary")`` follows ``labels.Parse``;
``selector_from_spec`` follows ``metav1.LabelSelectorAsSelector``: ``None`` selects nothing, ``{}`` selects
everything. ``FieldSelector.parse`` follows ``fields.ParseSelector`` (``=``, ``==``, ``!=`` terms).
Malformed input raises ``ApiError(400)`` with the real server's message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from . import naming
from .errors import ApiError
from .fieldselectors import FieldRequirement, FieldSelector, SUPPORTED_FIELDS, field_value  # noqa: F401 (re-export)

IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "in", "notin", "=", "==", "!="
EXISTS, DOES_NOT_EXIST, GT, LT = "exists", "!", "gt", "lt"
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_SPECIAL = "=!(),<>"


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_EQUALS, NOT_IN):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels:
            return False
        try:
            have, want = int(labels[self.key]), int(self.values[0])
        except (TypeError, ValueError):
            return False
        return have > want if op == GT else have < want

    def __str__(self) -> str:
        op, k = self.operator, self.key
        if op == EXISTS:
            return k
        if op == DOES_NOT_EXIST:
            return "!" + k
        if op in (IN, NOT_IN):
            return f"{k} {op} ({','.join(sorted(self.values))})"
        if op in (GT, LT):
            return f"{k}{'>' if op == GT else '<'}{self.values[0]}"
        return f"{k}{op}{self.values[0]}"


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


def _requirement(key: str, op: str, values: list[str], value_checks: bool = True) -> Requirement:
    """``labels.NewRequirement``: arity and syntax checks (messages without the parse prefix)."""
    errs = [f'key: Invalid value: "{key}": {m}' for m in naming.qualified_name(key)]
    if errs:
        raise ValueError("; ".join(errs))
    if op in (IN, NOT_IN) and not values:
        raise ValueError("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
    if op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS) and len(values) != 1:
        raise ValueError("values: Invalid value: exact-match compatibility requires one single value")
    if op in (EXISTS, DOES_NOT_EXIST) and values:
        raise ValueError("values: Invalid value: values set must be empty for exists and does not exist")
    if op in (GT, LT):
        if len(values) != 1:
            raise ValueError("values: Invalid value: for 'Gt', 'Lt' operators, exactly one value is required")
        try:
            int(values[0])
        except ValueError:
            raise ValueError(f'values[0]: Invalid value: "{values[0]}": for \'Gt\', \'Lt\' operators, '
                             "the value must be an integer") from None
    if value_checks:
        for i, v in enumerate(values):
            for m in naming.label_value(v):
                raise ValueError(f'values[{i}][{key}]: Invalid value: "{v}": {m}')
    return Requirement(key, op, tuple(sorted(set(values))))


class _Lexer:
    """Tokens: identifiers, the special symbols, and "" at end of string."""

    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch.isspace():
                i += 1
            elif ch in _SPECIAL:
                two = text[i:i + 2]
                if two in ("==", "!="):
                    self.tokens.append((two, two))
                    i += 2
                else:
                    self.tokens.append((ch, ch))
                    i += 1
            else:
                j = i
                while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                    j += 1
                word = text[i:j]
                self.tokens.append(("id", word))
                i = j
        self.pos = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.pos += 1
        return tok


class LabelSelector:
    """A conjunction of requirements; ``matches`` is true when every requirement holds."""

    def __init__(self, requirements: tuple[Requirement, ...] = (), nothing: bool = False):
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self.nothing = nothing

    @classmethod
    def everything(cls) -> "LabelSelector":
        return cls()

    @classmethod
    def none(cls) -> "LabelSelector":
        return cls(nothing=True)

    @property
    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r}{', nothing' if self.nothing else ''})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LabelSelector) and self.nothing == other.nothing
                and self.requirements == other.requirements)

    def __hash__(self) -> int:
        return hash((self.requirements, self.nothing))

    @classmethod
    def parse(cls, text: str | None) -> "LabelSelector":
        if text is None or not text.strip():
            return cls()
        try:
            return cls(tuple(_parse_requirements(text)))
        except ValueError as exc:
            raise _bad(str(exc)) from None


def _parse_requirements(text: str) -> list[Requirement]:
    lx = _Lexer(text)
    out: list[Requirement] = []
    while True:
        tok, lit = lx.peek()
        if tok == "end":
            return out
        if tok not in ("id", "!"):
            raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
        try:
            out.append(_parse_requirement(lx))
        except ValueError as exc:
            raise ValueError(f"unable to parse requirement: {exc}") from None
        tok, lit = lx.take()
        if tok == "end":
            return out
        if tok != ",":
            raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
        if lx.peek()[0] not in ("id", "!"):
            raise ValueError(f"found '{lx.peek()[1]}', expected: identifier after ','")


def _parse_requirement(lx: _Lexer) -> Requirement:
    negate = False
    tok, lit = lx.take()
    if tok == "!":
        negate = True
        tok, lit = lx.take()
    if tok != "id":
        raise ValueError(f"found '{lit}', expected: identifier")
    key = lit
    if negate:
        return _requirement(key, DOES_NOT_EXIST, [])
    if lx.peek()[0] in ("end", ","):
        return _requirement(key, EXISTS, [])
    tok, lit = lx.take()
    ops = {"=": EQUALS, "==": DOUBLE_EQUALS, "!=": NOT_EQUALS, ">": GT, "<": LT}
    if tok == "id" and lit in (IN, NOT_IN):
        op = lit
    elif tok in ops:
        op = ops[tok]
    else:
        raise ValueError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
    values = _parse_values(lx) if op in (IN, NOT_IN) else _parse_exact_value(lx)
    return _requirement(key, op, values)


def _parse_values(lx: _Lexer) -> list[str]:
    tok, lit = lx.take()
    if tok != "(":
        raise ValueError(f"found '{lit}' expected: '('")
    tok, lit = lx.peek()
    if tok == ")":
        lx.take()
        return [""]
    if tok not in ("id", ","):
        raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
    values: list[str] = []
    while True:
        tok, lit = lx.take()
        if tok == "id":
            values.append(lit)
            nxt, nlit = lx.peek()
            if nxt == ",":
                lx.take()
                if lx.peek()[0] == ")":
                    values.append("")
                continue
            if nxt == ")":
                lx.take()
                return values
            raise ValueError(f"found '{nlit}', expected: ',' or ')'")
        if tok == ",":
            values.append("")
            if lx.peek()[0] == ")":
                lx.take()
                return values
            continue
        raise ValueError(f"found '{lit}', expected: ',', or identifier")


def _parse_exact_value(lx: _Lexer) -> list[str]:
    tok, lit = lx.peek()
    if tok in ("end", ","):
        return [""]
    tok, lit = lx.take()
    if tok == "id":
        return [lit]
    raise ValueError(f"found '{lit}', expected: identifier")


_SPEC_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def selector_from_spec(spec: Mapping[str, Any] | None) -> LabelSelector:
    """A ``metav1.LabelSelector`` object: None selects nothing, ``{}`` selects everything."""
    if spec is None:
        return LabelSelector.none()
    if not isinstance(spec, Mapping):
        raise _bad(f"invalid label selector: {spec!r}")
    reqs: list[Requirement] = []
    try:
        for k, v in (spec.get("matchLabels") or {}).items():
            reqs.append(_requirement(str(k), EQUALS, [str(v)]))
        for expr in spec.get("matchExpressions") or []:
            if not isinstance(expr, Mapping):
                raise ValueError(f"invalid label selector requirement: {expr!r}")
            op = _SPEC_OPERATORS.get(expr.get("operator"))
            if op is None:
                raise ValueError(f'"{expr.get("operator")}" is not a valid label selector operator')
            values = [str(x) for x in (expr.get("values") or [])]
            reqs.append(_requirement(str(expr.get("key", "")), op, values))
    except ValueError as exc:
        raise _bad(str(exc)) from None
    return LabelSelector(tuple(reqs))


def selector_from_map(labels: Mapping[str, str] | None) -> LabelSelector:
    """``labels.SelectorFromSet``: every pair must match; an empty map selects everything.

    A Service with no selector manages no endpoints; callers check for that before matching.
    """
    return LabelSelector(tuple(Requirement(str(k), EQUALS, (str(v),)) for k, v in (labels or {}).items()))


def format_label_selector(spec: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector`` as kubectl describe prints it ("<none>" when empty)."""
    try:
        text = str(selector_from_spec(spec))
    except ApiError:
        return "<error>"
    return text or "<none>"
