"""Field selectors (``fields.ParseSelector``): ``=``, ``==`` and ``!=`` terms on dotted paths.

Missing fields compare as "" and booleans as "true"/"false", as the registries' field sets do.
``check_supported`` raises the real server's 400 for field labels a kind does not index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import ApiError


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


_FIELD_OPERATORS = ("!=", "==", "=")

# Field labels each kind accepts besides metadata.name / metadata.namespace (registry field sets).
SUPPORTED_FIELDS: dict[str, frozenset[str]] = {
    "Pod": frozenset({"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                      "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
                      "status.nominatedNodeName"}),
    "Event": frozenset({"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}),
    "Secret": frozenset({"type"}),
    "Namespace": frozenset({"status.phase"}),
    "Node": frozenset({"spec.unschedulable"}),
    "Job": frozenset({"status.successful"}),
    "ReplicaSet": frozenset({"status.replicas"}),
    "ReplicationController": frozenset({"status.replicas"}),
    "CertificateSigningRequest": frozenset({"spec.signerName"}),
}
_FIELD_ALIASES = {("Event", "source"): "source.component", ("Event", "reportingComponent"): "reportingController"}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    operator: str  # "=" or "!="
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{self.value}"


def _split_terms(text: str) -> list[str]:
    terms, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if ch == ",":
            terms.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    terms.append("".join(cur))
    return terms


def _unescape(value: str) -> str:
    out, i = [], 0
    while i < len(value):
        ch = value[i]
        if ch == "\\":
            nxt = value[i + 1:i + 2]
            if nxt not in ("\\", ",", "="):
                raise _bad(f"invalid field selector: invalid escape sequence: \\{nxt}")
            out.append(nxt)
            i += 2
            continue
        if ch in ",=":
            raise _bad(f"invalid field selector: unescaped character '{ch}'")
        out.append(ch)
        i += 1
    return "".join(out)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string a field selector compares against: missing is "", booleans are "true"/"false"."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if isinstance(cur, (dict, list)):
        return ""
    return str(cur)


class FieldSelector:
    def __init__(self, requirements: tuple[FieldRequirement, ...] = ()):
        self.requirements = requirements

    @classmethod
    def parse(cls, text: str | None) -> "FieldSelector":
        if text is None or not text.strip():
            return cls()
        reqs = []
        for term in sorted(_split_terms(text)):
            if not term:
                continue
            for i in range(len(term)):
                op = next((o for o in _FIELD_OPERATORS if term.startswith(o, i)), None)
                if op:
                    lhs, rhs = term[:i], term[i + len(op):]
                    break
            else:
                raise _bad(f"invalid selector: '{text}'; can't understand '{term}'")
            reqs.append(FieldRequirement(lhs.strip(), "!=" if op == "!=" else "=", _unescape(rhs)))
        return cls(tuple(reqs))

    @property
    def empty(self) -> bool:
        return not self.requirements

    def fields(self) -> list[str]:
        return [r.field for r in self.requirements]

    def check_supported(self, kind: str) -> None:
        """Raise 400 ``field label not supported`` like the real registry for this kind."""
        allowed = SUPPORTED_FIELDS.get(kind, frozenset())
        for r in self.requirements:
            if r.field not in ("metadata.name", "metadata.namespace") and r.field not in allowed:
                raise _bad(f"field label not supported: {r.field}")

    def matches(self, obj: Mapping[str, Any]) -> bool:
        kind = obj.get("kind", "")
        for r in self.requirements:
            have = field_value(obj, _FIELD_ALIASES.get((kind, r.field), r.field))
            if (have == r.value) != (r.operator == "="):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"
