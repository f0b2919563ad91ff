"""A minimal client for OpenAI-compatible ``POST /chat/completions`` with provider-error handling.

Provider trouble is not the agent's failure: connection errors, timeouts, 429 and 5xx are retried
with back-off and then raised as ``ModelApiError`` (an infra outcome, ``model_api``), as are 401/403/404
(a wrong key, model or URL is the harness configuration's problem). Other 4xx — typically a
request the agent's conversation made invalid, such as an overlong context — are the agent's own
failure (``ChatRequestRejected``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx

from ..protocol import ModelApiError

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
PROVIDER_STATUSES = frozenset({401, 403, 404})


class ChatRequestRejected(Exception):
    """The provider rejected the request the agent built (4xx other than auth/not-found/rate limits)."""


@dataclass(frozen=True)
class ChatReply:
    message: dict[str, Any]
    finish_reason: str | None
    input_tokens: int
    output_tokens: int
    model: str | None


class ChatClient:
    def __init__(self, base_url: str, api_key: str | None, *, timeout: float = 120.0, max_retries: int = 2,
                 backoff_seconds: float = 0.5, headers: dict[str, str] | None = None):
        self.url = base_url.rstrip("/") + "/chat/completions"
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            hdrs["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=10.0), headers=hdrs)
        self.max_retries = max_retries
        self.backoff_seconds = backoff_seconds

    async def close(self) -> None:
        await self._client.aclose()

    async def complete(self, payload: dict[str, Any]) -> ChatReply:
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff_seconds * 2 ** (attempt - 1))
            try:
                resp = await self._client.post(self.url, json=payload)
            except httpx.HTTPError as e:
                last = f"{type(e).__name__}: {e}"
                continue
            if resp.status_code in RETRY_STATUSES:
                last = f"HTTP {resp.status_code}: {resp.text[:300]}"
                continue
            if resp.status_code in PROVIDER_STATUSES:
                raise ModelApiError(f"model API {self.url} answered {resp.status_code}: {resp.text[:300]}")
            if resp.status_code >= 400:
                raise ChatRequestRejected(f"model API rejected the request ({resp.status_code}): {resp.text[:500]}")
            return _reply(resp)
        raise ModelApiError(f"model API {self.url} failed after {self.max_retries + 1} attempts: {last}")


def _reply(resp: httpx.Response) -> ChatReply:
    try:
        doc = resp.json()
        choice = doc["choices"][0]
        message = choice["message"]
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise ModelApiError(f"model API answered an unreadable completion: {e}: {resp.text[:300]}") from e
    usage = doc.get("usage") or {}
    return ChatReply(message=message, finish_reason=choice.get("finish_reason"),
                     input_tokens=int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0),
                     output_tokens=int(usage.get("completion_tokens") or usage.get("output_tokens") or 0),
                     model=doc.get("model"))
