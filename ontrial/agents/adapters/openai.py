"""The ``openai`` adapter: a built-in tool-calling agent loop for any OpenAI-compatible endpoint.

Config: ``base_url`` (default https://api.openai.com/v1), ``model`` (or ``AgentSpec.model``),
``api_key_env`` (the environment variable holding the key, default ``OPENAI_API_KEY``; null for
endpoints without auth), ``max_turns`` (default 40), ``temperature``, ``max_tokens`` (per reply),
``request_timeout`` (default 120 s), ``max_retries`` (default 2), ``extra_body`` (merged into every
request), ``price_per_1k_input``/``price_per_1k_output`` (USD, for cost), ``system_prompt``.

The loop: system + task prompt → the model → each tool call through the gateway (one step each)
→ tool results back → … until the model answers without tool calls. Token usage comes from each
reply's ``usage`` and is charged to the token budget (exceeding it stops the agent); the step and
wall budgets stop it too. The final answer is parsed leniently (``ontrial.agents.answer``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ...errors import ConfigError
from ...gateway import ToolGateway
from ...gateway.budget import BudgetExceeded
from ...models.trial import BudgetKind
from ..answer import parse_answer
from ..prompt import system_prompt, task_prompt
from ..protocol import AgentOutput, Budgets, TrialContext
from .chat_client import ChatClient, ChatReply

DEFAULT_BASE_URL = "https://api.openai.com/v1"
ACCESS = "Use the tools you are given; each call is one step of your budget."


def _tools_payload(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": d["name"], "description": d["description"],
                                              "parameters": d["input_schema"]}} for d in definitions]


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append({"type": "tool_call", "id": call.get("id"), "name": fn.get("name"),
                      "arguments": fn.get("arguments")})
    return parts


class OpenAIAgent:
    def __init__(self, *, model: str, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None,
                 max_turns: int = 40, temperature: float | None = None, max_tokens: int | None = None,
                 request_timeout: float = 120.0, max_retries: int = 2, extra_body: dict[str, Any] | None = None,
                 price_per_1k_input: float = 0.0, price_per_1k_output: float = 0.0,
                 system_prompt: str | None = None, backoff_seconds: float = 0.5):
        if not model:
            raise ConfigError("openai agent needs a model (AgentSpec.model or config.model)")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.max_turns = max_turns
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.request_timeout = request_timeout
        self.max_retries = max_retries
        self.extra_body = dict(extra_body or {})
        self.prices = (price_per_1k_input, price_per_1k_output)
        self.system = system_prompt
        self.backoff_seconds = backoff_seconds
        self.ctx: TrialContext | None = None
        self.client: ChatClient | None = None

    @classmethod
    def from_spec(cls, config: dict[str, Any], model: str | None) -> "OpenAIAgent":
        key_env = config.get("api_key_env", "OPENAI_API_KEY")
        api_key = None
        if key_env:
            api_key = os.environ.get(str(key_env))
            if not api_key:
                raise ConfigError(f"openai agent: environment variable {key_env} (config.api_key_env) is not set")
        known = {"max_turns", "temperature", "max_tokens", "request_timeout", "max_retries", "extra_body",
                 "price_per_1k_input", "price_per_1k_output", "system_prompt", "backoff_seconds"}
        unknown = set(config) - known - {"api_key_env", "base_url", "model"}
        if unknown:
            raise ConfigError(f"openai agent: unknown config keys {sorted(unknown)}")
        return cls(model=str(config.get("model") or model or ""), base_url=str(config.get("base_url") or
                                                                             DEFAULT_BASE_URL),
                   api_key=api_key, **{k: v for k, v in config.items() if k in known})

    async def setup(self, ctx: TrialContext) -> None:
        self.ctx = ctx
        self.client = ChatClient(self.base_url, self.api_key, timeout=self.request_timeout,
                                 max_retries=self.max_retries, backoff_seconds=self.backoff_seconds)

    def _payload(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools, **self.extra_body}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return payload

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        assert self.ctx is not None and self.client is not None, "setup() first"
        transcript = self.ctx.transcript
        system = self.system or system_prompt(self.ctx.namespace)
        user = task_prompt(alert, self.ctx.namespace, budgets, ACCESS)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        transcript.message("system", system)
        transcript.message("user", user)
        tool_payload = _tools_payload(tools.definitions())
        last_text = ""
        for _ in range(self.max_turns):
            budget = tools.budget
            if budget.tokens is not None and budget.used_tokens >= budget.tokens:
                budget.exhausted = budget.exhausted or BudgetKind.tokens
                raise BudgetExceeded(BudgetKind.tokens, budget.used_tokens, budget.tokens)
            reply = await self.client.complete(self._payload(messages, tool_payload))
            message = {k: v for k, v in reply.message.items() if k in ("role", "content", "tool_calls")}
            message["role"] = "assistant"
            transcript.message("assistant", _parts(message), model=reply.model or self.model,
                               finish_reasons=[reply.finish_reason] if reply.finish_reason else None)
            self._charge(tools, reply)
            messages.append(message)
            last_text = message.get("content") or last_text
            calls = message.get("tool_calls") or []
            if not calls:
                return parse_answer(message.get("content") or "")
            for call in calls:
                messages.append(await self._run_tool(tools, call))
        output = parse_answer(last_text)
        return AgentOutput(diagnosis=output.diagnosis, usage=output.usage,
                           text=(output.text + "\n" if output.text else "") + f"[stopped after {self.max_turns} turns]")

    def _charge(self, tools: ToolGateway, reply: ChatReply) -> None:
        cost = reply.input_tokens / 1000 * self.prices[0] + reply.output_tokens / 1000 * self.prices[1]
        tools.report_usage(reply.input_tokens, reply.output_tokens, cost_usd=cost, model=reply.model or self.model)

    async def _run_tool(self, tools: ToolGateway, call: dict[str, Any]) -> dict[str, Any]:
        fn = call.get("function") or {}
        name, raw = str(fn.get("name") or ""), fn.get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else dict(raw)
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except (ValueError, TypeError) as e:
            content = f"error: could not parse the arguments of {name} as a JSON object: {e}"
        else:
            result = await tools.call(name, args)
            content = result.output or "(no output)"
        assert self.ctx is not None
        self.ctx.transcript.message("tool", [{"type": "tool_call_response", "id": call.get("id"),
                                              "response": content}])
        return {"role": "tool", "tool_call_id": call.get("id"), "content": content}

    async def teardown(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None
