"""Reading an agent's final answer leniently: structured JSON if there is some, free text always.

A chat agent is not punished for not emitting JSON: its text is kept as the diagnosis summary
(the diagnosis grader searches summaries for root-cause labels). When the text contains a JSON
object with diagnosis fields (bare, in a ```json fence, or embedded in prose), the last such
object supplies the structured fields. Accepted field spellings:

``root_cause`` (string or list; also ``root_causes``), ``causal_service`` (also ``service``),
``mitigation``, ``mitigation_applied``, ``evidence`` (string or list), ``summary``; optionally
wrapped as ``{"diagnosis": {...}}``; ``usage`` ({input_tokens, output_tokens, tokens, cost_usd}).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..models.trial import Diagnosis, Usage
from .protocol import AgentOutput

FIELDS = ("root_cause", "root_causes", "causal_service", "service", "mitigation", "mitigation_applied", "evidence",
          "summary")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in re.split(r"[,;\n]", value) if v.strip()] if value.strip() else []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "applied")
    return bool(value)


def diagnosis_from_dict(doc: Any, fallback_summary: str = "") -> Diagnosis | None:
    """A Diagnosis from a loosely shaped mapping (None when it carries no diagnosis field)."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("diagnosis"), dict):
        doc = {**doc, **doc["diagnosis"]}
    if not any(k in doc for k in FIELDS):
        return None
    service = doc.get("causal_service", doc.get("service"))
    summary = doc.get("summary")
    return Diagnosis(
        root_cause=_strings(doc.get("root_cause", doc.get("root_causes"))),
        causal_service=str(service).strip() if service not in (None, "") else None,
        mitigation=str(doc["mitigation"]) if doc.get("mitigation") not in (None, "") else None,
        mitigation_applied=_bool(doc.get("mitigation_applied", False)),
        evidence=[str(e) for e in doc["evidence"]] if isinstance(doc.get("evidence"), list)
        else _strings(doc.get("evidence")),
        summary=str(summary) if isinstance(summary, str) and summary.strip() else fallback_summary)


def usage_from_dict(doc: Any) -> Usage | None:
    usage = doc.get("usage") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return None
    try:
        tokens = int(usage.get("tokens") or 0) or int(usage.get("input_tokens") or 0) + int(
            usage.get("output_tokens") or 0)
        return Usage(tokens=tokens, cost_usd=float(usage.get("cost_usd") or 0.0))
    except (TypeError, ValueError):
        return None


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text``: fenced blocks first, then objects embedded in prose."""
    found: list[dict[str, Any]] = []
    for block in _FENCE.findall(text):
        try:
            doc = json.loads(block)
        except ValueError:
            continue
        if isinstance(doc, dict):
            found.append(doc)
    if found:
        return found
    i = 0
    while (i := text.find("{", i)) != -1:
        try:
            doc, end = _DECODER.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(doc, dict):
            found.append(doc)
        i = end
    return found


def parse_answer(text: str) -> AgentOutput:
    """An agent's final text → AgentOutput: structured fields when present, the text kept either way."""
    text = (text or "").strip()
    structured = [d for d in json_objects(text) if diagnosis_from_dict(d) is not None]
    if structured:
        doc = structured[-1]
        prose = _FENCE.sub("", text).strip()
        return AgentOutput(diagnosis=diagnosis_from_dict(doc, fallback_summary=prose or text),
                           usage=usage_from_dict(doc), text=text)
    if not text:
        return AgentOutput()
    return AgentOutput(diagnosis=Diagnosis(summary=text), text=text)


def output_from_result(doc: Any) -> AgentOutput:
    """A result object (HTTP agent, result file) → AgentOutput. Strings are parsed as answers."""
    if isinstance(doc, str):
        return parse_answer(doc)
    if not isinstance(doc, dict):
        return AgentOutput(text="" if doc is None else json.dumps(doc))
    text = next((str(doc[k]) for k in ("text", "answer", "output", "final_answer") if doc.get(k)), "")
    diagnosis = diagnosis_from_dict(doc, fallback_summary=text)
    if diagnosis is None:
        if text:
            parsed = parse_answer(text)
            return AgentOutput(diagnosis=parsed.diagnosis, usage=usage_from_dict(doc) or parsed.usage, text=text)
        return AgentOutput(usage=usage_from_dict(doc))
    return AgentOutput(diagnosis=diagnosis, usage=usage_from_dict(doc), text=text or diagnosis.summary)
