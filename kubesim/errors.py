"""Kubernetes ``Status`` errors: the one exception type every handler raises."""

from __future__ import annotations

from typing import Any

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """An error answered as a ``kind: Status`` body with the given HTTP code."""

    def __init__(self, code: int, message: str, reason: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "Unknown")
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def not_found(group: str, plural: str, name: str) -> ApiError:
    qualified = f"{plural}.{group}" if group else plural
    return ApiError(404, f'{qualified} "{name}" not found', "NotFound", {"name": name, "group": group, "kind": plural})


def already_exists(group: str, plural: str, name: str) -> ApiError:
    qualified = f"{plural}.{group}" if group else plural
    return ApiError(
        409, f'{qualified} "{name}" already exists', "AlreadyExists", {"name": name, "group": group, "kind": plural}
    )


def conflict(group: str, plural: str, name: str) -> ApiError:
    qualified = f"{plural}.{group}" if group else plural
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        "Conflict",
        {"name": name, "group": group, "kind": plural},
    )


def invalid(kind: str, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """422 with one cause per (field path, message)."""
    text = "; ".join(f"{field}: {msg}" for field, msg in causes)
    return ApiError(
        422,
        f'{kind} "{name}" is invalid: {text}',
        "Invalid",
        {
            "name": name,
            "kind": kind,
            "causes": [{"reason": "FieldValueInvalid", "message": msg, "field": field} for field, msg in causes],
        },
    )
