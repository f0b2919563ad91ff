"""The task statement external and model-backed agents receive, and the answer format they are asked for.

Agents are never told the task id, the ground truth or the fault; they get the alert, their
namespace, their budgets and how to reach the tools.
"""

from __future__ import annotations

import json
from typing import Any

from .protocol import Budgets

ANSWER_FORMAT = """\
When you are done, reply with a short explanation followed by one JSON object:
```json
{"root_cause": ["a-short-kebab-case-label"], "causal_service": "the service/deployment at fault",
 "mitigation": "what you did or propose", "mitigation_applied": true,
 "evidence": ["the observations that support it"], "summary": "one or two sentences"}
```
Every field is optional; a plain-text answer is accepted too."""


def alert_text(alert: dict[str, Any] | None) -> str:
    if not alert:
        return "(no alert payload)"
    return json.dumps(alert, indent=2, sort_keys=True, default=str)


def budget_text(budgets: Budgets) -> str:
    parts = []
    if budgets.steps is not None:
        parts.append(f"{budgets.steps} tool calls")
    if budgets.tokens is not None:
        parts.append(f"{budgets.tokens} model tokens")
    if budgets.wall_seconds is not None:
        parts.append(f"{budgets.wall_seconds:g} seconds")
    return ", ".join(parts) if parts else "no explicit limits"


def system_prompt(namespace: str) -> str:
    return (
        "You are the on-call site reliability engineer for an application running in the Kubernetes namespace "
        f"'{namespace}'. An alert fired. Investigate with the tools you are given (read objects, events, logs and "
        "metrics), find the root cause and the service that causes it (it may not be the one alerting), and "
        "mitigate it if you can do so safely. Work only in your namespace; do not delete the application's "
        "workloads or namespace, and do not read Secrets. Every tool call counts against your budget and is "
        "audited.")


def task_prompt(alert: dict[str, Any] | None, namespace: str, budgets: Budgets, access: str = "") -> str:
    """The user message: the alert, the budgets, how to reach the tools, the answer format."""
    lines = [f"Alert received for namespace {namespace}:", alert_text(alert), "",
             f"Budget: {budget_text(budgets)}."]
    if access:
        lines += ["", access]
    lines += ["", ANSWER_FORMAT]
    return "\n".join(lines)
