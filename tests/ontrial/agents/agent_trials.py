"""Helpers for end-to-end agent trials on kubesim: the trial runner, a sample Python agent, an
agent service (the HTTP contract), and a scripted OpenAI-compatible model server.

The model server stands in for a paid LLM API only; every ontrial component runs for real.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import uvicorn

from ontrial import steps
from ontrial.agents import AgentOutput
from ontrial.artifacts import artifact_store_for, read_jsonl
from ontrial.models.trial import AgentRun, AgentSpec, Diagnosis, Grade, SandboxSettings, TrialSpec

HERE = Path(__file__).parent
SHOP = HERE.parent / "fixtures" / "shop"
BAD_IMAGE = SHOP / "web-bad-image" / "task.yaml"
TIGHT = SHOP / "web-tight-budget" / "task.yaml"
FLAG = HERE / "fixtures" / "web-flag" / "task.yaml"
CLI_AGENT = HERE / "scripts" / "cli_agent.py"
PYTHON = sys.executable


@dataclass
class Trial:
    spec: TrialSpec
    namespace: str
    run: AgentRun
    grade: Grade | None
    audit: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)

    def kube_requests(self) -> list[dict[str, Any]]:
        return [a for a in self.audit if a["tool"] == "kube-api" and a["verb"]]


def spec_for(cluster: Any, tmp_path: Path, agent: AgentSpec, task_file: Path = BAD_IMAGE, **sandbox: Any) -> TrialSpec:
    return TrialSpec(suite_id="agents", task_id=task_file.parent.name, trial_index=0, task_file=str(task_file),
                     agent=agent, sandbox=SandboxSettings(kubeconfig=cluster.kubeconfig_path,
                                                          settle_seconds=sandbox.get("settle_seconds", 60)),
                     artifacts_root=str(tmp_path / "artifacts"))


async def run_trial(cluster: Any, tmp_path: Path, agent: AgentSpec, task_file: Path = BAD_IMAGE,
                    grade: bool = True) -> Trial:
    """create_sandbox → inject_fault → run_agent → grade → teardown, as the workflow runs them."""
    spec = spec_for(cluster, tmp_path, agent, task_file)
    sandbox = await steps.create_sandbox(spec)
    try:
        fault = await steps.inject_fault(spec, sandbox)
        run = await steps.run_agent(spec, sandbox, fault, lambda details: None)
        result = await steps.grade(spec, sandbox, run) if grade else None
    finally:
        await steps.teardown(spec, sandbox.namespace)
    store = artifact_store_for(spec.artifacts_root)
    return Trial(spec, sandbox.namespace, run, result, read_jsonl(store, run.audit_ref) if run.audit_ref else [],
                 read_jsonl(store, run.transcript_ref) if run.transcript_ref else [])


# -- python adapter -------------------------------------------------------------------------------

class KubeClientAgent:
    """A Python agent that brings its own Kubernetes client (through the audit proxy) and uses the
    gateway for the fix. ``kubeconfig_seen`` tells the test which kubeconfig it was handed."""

    last: "KubeClientAgent | None" = None

    def __init__(self, greeting: str = "hello"):
        self.greeting = greeting
        self.ctx: Any = None
        self.kubeconfig_seen: str | None = None
        self.torn_down = False
        KubeClientAgent.last = self

    async def setup(self, ctx: Any) -> None:
        self.ctx = ctx
        self.kubeconfig_seen = ctx.kubeconfig_path

    async def invoke(self, alert: dict[str, Any], tools: Any, budgets: Any) -> AgentOutput:
        from kubernetes import client, config

        def waiting_pods() -> list[str]:
            api = client.CoreV1Api(config.new_client_from_config(self.ctx.kubeconfig_path))
            try:
                pods = api.list_namespaced_pod(self.ctx.namespace).items
                return [p.metadata.name for p in pods for cs in (p.status.container_statuses or [])
                        if cs.state and cs.state.waiting and "Image" in (cs.state.waiting.reason or "")]
            finally:
                api.api_client.close()

        stuck = await asyncio.to_thread(waiting_pods)
        deployment = alert["labels"]["deployment"]
        undo = await tools.call("rollout_undo", {"deployment": deployment})
        return AgentOutput(diagnosis=Diagnosis(root_cause=["bad-image-tag"], causal_service=deployment,
                                               mitigation_applied=undo.ok, evidence=stuck,
                                               summary=f"{self.greeting}: {len(stuck)} pods cannot pull their image"),
                           text="rolled back")

    async def teardown(self) -> None:
        self.torn_down = True


# -- small HTTP servers run by the tests (uvicorn in the test's loop) -----------------------------

class Served:
    def __init__(self, app: Callable[..., Any]):
        self.app = app
        self.server: uvicorn.Server | None = None
        self.task: asyncio.Task[None] | None = None
        self.url = ""

    async def __aenter__(self) -> "Served":
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="off"))
        self.server.capture_signals = lambda: _nullcontext()  # type: ignore[method-assign]
        self.task = asyncio.create_task(self.server.serve(sockets=[sock]))
        while not self.server.started:
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None and self.task is not None
        self.server.should_exit = True
        await self.task


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


async def read_json(receive: Any) -> Any:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    return json.loads(body) if body else None


async def send_json(send: Any, status: int, doc: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(doc).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class AgentService:
    """An SRE agent as a service, speaking ontrial's HTTP agent contract. ``mode``: "poll" (202 +
    status_url), "callback" (202, then POST to callback_url), "sync" (200 with the result)."""

    def __init__(self, mode: str):
        self.mode = mode
        self.invocations: list[dict[str, Any]] = []
        self.runs: dict[str, dict[str, Any]] = {}
        self.cancelled: list[str] = []
        self.tasks: list[asyncio.Task[Any]] = []

    async def work(self, inv: dict[str, Any]) -> dict[str, Any]:
        import httpx
        from mcp import Client

        async with Client(inv["tools"]["mcp_url"]) as mcp:
            pods = await mcp.call_tool("get_resources", {"kind": "pods"})
            undo = await mcp.call_tool("rollout_undo", {"deployment": inv["alert"]["labels"]["deployment"]})
        async with httpx.AsyncClient() as http:
            events = (await http.post(inv["tools"]["http_url"] + "/get_events", json={"name": "web"})).json()
        evidence = [line for line in pods.content[0].text.splitlines() if "ImagePull" in line or "ErrImage" in line]
        return {"diagnosis": {"root_cause": "bad-image-tag", "causal_service": "web",
                              "mitigation_applied": not undo.is_error, "evidence": evidence},
                "text": f"image tag does not exist; rolled back ({len(events['output'])} bytes of events read)",
                "usage": {"input_tokens": 120, "output_tokens": 30}}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        if method == "POST" and path == "/invoke":
            inv = await read_json(receive)
            self.invocations.append(inv)
            if self.mode == "sync":
                return await send_json(send, 200, await self.work(inv))
            run_id = str(len(self.invocations))
            self.runs[run_id] = {"status": "running"}

            async def background() -> None:
                result = await self.work(inv)
                if self.mode == "poll":
                    self.runs[run_id] = {"status": "completed", "result": result}
                else:
                    import httpx
                    async with httpx.AsyncClient() as http:
                        await http.post(inv["callback_url"], json=result)

            self.tasks.append(asyncio.create_task(background()))
            doc = {"status_url": f"/runs/{run_id}"} if self.mode == "poll" else {"accepted": True}
            return await send_json(send, 202, doc)
        if path.startswith("/runs/"):
            run_id = path.rsplit("/", 1)[1]
            if method == "DELETE":
                self.cancelled.append(run_id)
                return await send_json(send, 200, {"status": "cancelled"})
            return await send_json(send, 200, self.runs.get(run_id, {"status": "failed", "error": "no such run"}))
        await send_json(send, 404, {"error": "not found"})


class ModelServer:
    """An OpenAI-compatible /v1/chat/completions that replays scripted replies and reports usage."""

    def __init__(self, replies: list[dict[str, Any] | int], usage: tuple[int, int] = (100, 20)):
        self.replies = list(replies)
        self.usage = usage
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] != "/v1/chat/completions":
            return await send_json(send, 404, {"error": {"message": "not found"}})
        self.requests.append(await read_json(receive))
        self.auth.append(dict(scope["headers"]).get(b"authorization", b"").decode() or None)
        reply = self.replies.pop(0) if self.replies else {"content": "I give up."}
        if isinstance(reply, int):
            return await send_json(send, reply, {"error": {"message": f"scripted {reply}"}})
        message = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [{"id": f"call_{i}_{len(self.requests)}", "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(args)}}
                                     for i, (name, args) in enumerate(reply["tool_calls"])]
        await send_json(send, 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "model": "scripted-1",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1],
                      "total_tokens": sum(self.usage)}})


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    return {"content": None, "tool_calls": [(name, args)]}
