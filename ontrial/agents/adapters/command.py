"""The ``command`` adapter: a CLI agent (a coding agent, a script) run in a scratch directory.

Config (``AgentSpec.config``)::

    command: ["my-agent", "--mcp-config", "{mcp_config}", "-p", "{prompt}"]   # list, or one shell-like string
    env: {MY_AGENT_MODE: "sre"}        # extra environment (placeholders allowed)
    pass_env: [ANTHROPIC_API_KEY]      # harness environment variables handed through (PATH, LANG always are)
    stdin: false                        # true: the prompt is also written to the agent's stdin
    result_file: result.json            # where the agent may write its final answer
    grace_seconds: 3                    # SIGTERM → SIGKILL grace when the agent is stopped

The scratch directory (the working directory and ``HOME``) holds ``prompt.md`` (the alert, budgets,
how to reach the tools and the answer format), ``mcp.json`` (``{"mcpServers": {"ontrial": {"type":
"http", "url": ...}}}``) and ``kubeconfig`` (the audit proxy). Placeholders in ``command``/``env``:
``{prompt}`` ``{prompt_file}`` ``{mcp_config}`` ``{mcp_url}`` ``{tools_url}`` ``{kubeconfig}``
``{workdir}`` ``{result_file}`` ``{namespace}``; the same values are in the environment as
``ONTRIAL_PROMPT_FILE``, ``ONTRIAL_MCP_CONFIG``, ``ONTRIAL_MCP_URL``, ``ONTRIAL_TOOLS_URL``,
``KUBECONFIG``, ``ONTRIAL_RESULT_FILE``, ``ONTRIAL_NAMESPACE``.

The final answer is the result file if the agent wrote one (JSON as in ``ontrial.agents.answer``,
or plain text), else its stdout, parsed leniently. A non-zero exit without a result file is an
agent error (stderr's tail in the reason). When a budget runs out (steps through MCP or kubectl,
the wall clock) the whole process tree is killed: SIGTERM to the process group, SIGKILL after
the grace period.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

import structlog

from ...errors import ConfigError
from ...gateway import ToolGateway
from ..answer import output_from_result, parse_answer
from ..endpoints import TrialEndpointHost, race_budget
from ..prompt import system_prompt, task_prompt
from ..protocol import AgentOutput, Budgets, TrialContext
from .process import BoundedCapture, kill_tree

log = structlog.get_logger(__name__)

ALWAYS_PASSED = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
MAX_CAPTURE = 1 << 20
TRANSCRIPT_TEXT = 20_000


class AgentProcessFailed(Exception):
    """The agent's process failed without giving an answer (its own failure)."""


def access_text(mcp_url: str | None, workdir: Path) -> str:
    return ("How to reach the cluster (this directory is your workspace):\n"
            f"- MCP tools: server 'ontrial' in ./mcp.json ({mcp_url})\n"
            "- kubectl: KUBECONFIG=./kubeconfig is set; your namespace is its default\n"
            f"- Write your final answer (JSON as below, or text) to ./result.json, or print it last on stdout.")


class CommandAgent:
    def __init__(self, command: list[str] | str, *, env: dict[str, str] | None = None,
                 pass_env: list[str] | None = None, stdin: bool = False, result_file: str = "result.json",
                 grace_seconds: float = 3.0, max_capture: int = MAX_CAPTURE):
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command or []]
        if not argv:
            raise ConfigError("command agent needs config.command (a list of arguments or a command line)")
        if "/" in result_file or result_file.startswith("."):
            raise ConfigError("command agent result_file must be a plain file name")
        self.argv = argv
        self.env = dict(env or {})
        self.pass_env = list(pass_env or [])
        self.stdin = stdin
        self.result_file = result_file
        self.grace_seconds = grace_seconds
        self.max_capture = max_capture
        self.ctx: TrialContext | None = None
        self.workdir: Path | None = None
        self._host: TrialEndpointHost | None = None
        self._proc: asyncio.subprocess.Process | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "CommandAgent":
        return cls(config.get("command") or [], env=config.get("env"), pass_env=config.get("pass_env"),
                   stdin=bool(config.get("stdin", False)), result_file=str(config.get("result_file") or "result.json"),
                   grace_seconds=float(config.get("grace_seconds", 3.0)))

    async def setup(self, ctx: TrialContext) -> None:
        self.ctx = ctx
        self.workdir = Path(tempfile.mkdtemp(prefix="ontrial-cmd-"))

    def _values(self, endpoints: Any, prompt: str) -> dict[str, str]:
        assert self.workdir is not None and self.ctx is not None
        return {"prompt": prompt, "prompt_file": str(self.workdir / "prompt.md"),
                "mcp_config": str(self.workdir / "mcp.json"), "mcp_url": endpoints.mcp_url or "",
                "tools_url": endpoints.tools_url or "", "kubeconfig": endpoints.kubeconfig_path or "",
                "workdir": str(self.workdir), "result_file": str(self.workdir / self.result_file),
                "namespace": self.ctx.namespace}

    def _environment(self, values: dict[str, str]) -> dict[str, str]:
        env = {k: os.environ[k] for k in (*ALWAYS_PASSED, *self.pass_env) if k in os.environ}
        env.update({"HOME": values["workdir"], "KUBECONFIG": values["kubeconfig"],
                    "ONTRIAL_PROMPT_FILE": values["prompt_file"], "ONTRIAL_MCP_CONFIG": values["mcp_config"],
                    "ONTRIAL_MCP_URL": values["mcp_url"], "ONTRIAL_TOOLS_URL": values["tools_url"],
                    "ONTRIAL_RESULT_FILE": values["result_file"], "ONTRIAL_NAMESPACE": values["namespace"]})
        env.update({k: _fill(str(v), values) for k, v in self.env.items()})
        return env

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        assert self.ctx is not None and self.workdir is not None, "setup() first"
        self._host = TrialEndpointHost(tools)
        endpoints = await self._host.start(self.workdir)
        prompt = system_prompt(self.ctx.namespace) + "\n\n" + task_prompt(
            alert, self.ctx.namespace, budgets, access_text(endpoints.mcp_url, self.workdir))
        (self.workdir / "prompt.md").write_text(prompt)
        (self.workdir / "mcp.json").write_text(json.dumps(self._host.mcp.mcp_config() if self._host.mcp else {},
                                                          indent=2))
        values = self._values(endpoints, prompt)
        argv = [_fill(a, values) for a in self.argv]
        self.ctx.transcript.message("user", prompt)
        self.ctx.transcript.event("agent.process", argv=[a if a != prompt else "{prompt}" for a in argv],
                                  workdir=str(self.workdir))
        stdout, stderr = BoundedCapture(self.max_capture), BoundedCapture(self.max_capture)
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv, cwd=self.workdir, env=self._environment(values), start_new_session=True,
                stdin=asyncio.subprocess.PIPE if self.stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as e:
            raise AgentProcessFailed(f"cannot start {argv[0]}: {e}") from e
        try:
            code = await race_budget(self._run(prompt, stdout, stderr), tools.budget)
        finally:
            await kill_tree(self._proc, self.grace_seconds)
            self.ctx.transcript.event("agent.process.exit", returncode=self._proc.returncode,
                                      stdout=stdout.text()[-TRANSCRIPT_TEXT:], stderr=stderr.text()[-TRANSCRIPT_TEXT:])
        return self._answer(code, stdout.text(), stderr.text())

    async def _run(self, prompt: str, stdout: BoundedCapture, stderr: BoundedCapture) -> int:
        proc = self._proc
        assert proc is not None
        if self.stdin and proc.stdin is not None:
            proc.stdin.write(prompt.encode())
            try:
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                pass
            proc.stdin.close()
        await asyncio.gather(stdout.drain(proc.stdout), stderr.drain(proc.stderr))
        return await proc.wait()

    def _answer(self, code: int, stdout: str, stderr: str) -> AgentOutput:
        assert self.workdir is not None and self.ctx is not None
        result = self.workdir / self.result_file
        if result.is_file():
            raw = result.read_text(errors="replace")
            try:
                output = output_from_result(json.loads(raw))
            except ValueError:
                output = parse_answer(raw)
            source = self.result_file
        elif code == 0:
            output, source = parse_answer(stdout), "stdout"
        else:
            tail = stderr.strip().splitlines()[-5:]
            raise AgentProcessFailed(f"agent exited with {code} without an answer: " + " | ".join(tail))
        if code != 0:
            log.info("command_agent.nonzero_exit_with_answer", code=code)
        if output.text:
            self.ctx.transcript.message("assistant", output.text)
        if output.usage is not None and output.usage.tokens:
            self.ctx.transcript.usage(output.usage.tokens, 0, cost_usd=output.usage.cost_usd)
        log.info("command_agent.answer", source=source, structured=bool(output.diagnosis and
                                                                        output.diagnosis.root_cause))
        return output

    async def teardown(self) -> None:
        if self._proc is not None:
            await kill_tree(self._proc, self.grace_seconds)
            self._proc = None
        if self._host is not None:
            await self._host.stop()
            self._host = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


def _fill(template: str, values: dict[str, str]) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    return out
