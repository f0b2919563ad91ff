"""The tool boundary: budgets, invariants, audit and bounded output around every agent action."""

from .audit import AuditEntry, AuditLog
from .budget import Budget, BudgetExceeded
from .context import ToolError, TrialExtras
from .gateway import ToolCallRecorder, ToolGateway, ToolResult
from .invariants import Action, ForbiddenRule, Invariants
from .output import MAX_OUTPUT_BYTES, bound
from .tools import TOOL_SPECS, TOOLS, ToolParam, ToolSpec, tool_definitions

__all__ = [
    "Action", "AuditEntry", "AuditLog", "Budget", "BudgetExceeded", "ForbiddenRule", "Invariants",
    "MAX_OUTPUT_BYTES", "TOOLS", "TOOL_SPECS", "ToolCallRecorder", "ToolError", "ToolGateway", "ToolParam",
    "ToolResult", "ToolSpec", "TrialExtras", "bound", "tool_definitions",
]
