"""What one container instance will do, decided once when it starts (the profile's decision rule).

Given the profile, the container spec and the configuration resolved at start, ``plan_run``
fixes the instance's fate: its log lines, when the app listens, and whether and how it exits
(missing env → exit 1 with a FATAL line, working set above the memory limit → OOMKilled 137,
run-to-completion images → Completed, busybox-like images → whatever their command does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import commands
from .logstream import LogStream
from .podconfig import expand
from .profiles import Profile
from .units import MI, parse_cpu_millis, parse_memory_bytes

OOM_EXIT = 137
START_ERROR_EXIT = 128


@dataclass
class Run:
    """One container instance (what a container ID names)."""

    container_id: str
    started_at: float
    env: dict[str, str]
    files: dict[str, str]
    profile: Profile
    app: bool  # runs the image's application (ports and probes are meaningful)
    listen_at: float  # when the app accepts connections
    memory_limit: int | None
    cpu_limit_millis: int | None
    stream: LogStream
    exit_at: float | None = None
    exit_code: int = 0
    exit_reason: str = "Completed"
    exit_message: str | None = None
    start_error: str | None = None
    blocked_on: str | None = None
    rest: list[Any] = field(default_factory=list)
    script_ctx: commands.ScriptContext | None = None


def memory_bytes(run: Run, t: float) -> int:
    """Working set at sim time ``t``: ramps up during start-up, then grows linearly."""
    p = run.profile
    base = p.memory.working_set_mi * MI
    elapsed = max(0.0, t - run.started_at)
    ramp = max(run.listen_at - run.started_at, 1.0)
    grow = p.memory.growth_mi_per_min * MI * elapsed / 60.0
    return int(base * min(1.0, 0.35 + 0.65 * elapsed / ramp) + grow)


def oom_time(run: Run) -> float | None:
    """First instant the working set reaches the memory limit (None: never)."""
    limit = run.memory_limit
    if not limit:
        return None
    p = run.profile
    base = p.memory.working_set_mi * MI
    growth = p.memory.growth_mi_per_min * MI / 60.0
    ramp = max(run.listen_at - run.started_at, 1.0)
    if base * 0.35 >= limit:
        return run.started_at + 0.2
    if base >= limit:
        frac = (limit / base - 0.35) / 0.65
        return run.started_at + max(0.2, ramp * frac)
    if growth > 0:
        # base + growth*t >= limit, after the ramp (ignore growth during the ramp for simplicity)
        return run.started_at + max(ramp, (limit - base) / growth)
    return None


def _fatal(run: Run, after: float, lines: list[str], code: int) -> None:
    t = round(run.started_at + after, 3)
    for line in lines:
        run.stream.add(t, line)
    run.exit_at, run.exit_code, run.exit_reason = t, code, "Error" if code else "Completed"


def _check_requirements(run: Run) -> bool:
    """Missing/invalid env or files make the app die early; True when one did."""
    p = run.profile
    logs = p.logs
    for req in p.requires_env:
        value = run.env.get(req.name, "")
        if not value:
            _fatal(run, p.fatal_after_seconds, [logs.fatal_missing_env.replace("{name}", req.name)],
                   p.exit_codes.missing_env)
            return True
        if req.pattern and not re.fullmatch(req.pattern, value):
            msg = logs.fatal_invalid_env.replace("{name}", req.name).replace("{value!r}", repr(value))
            _fatal(run, p.fatal_after_seconds, [msg.replace("{value}", value)], p.exit_codes.invalid_env)
            return True
    for path in p.requires_files:
        if path not in run.files:
            _fatal(run, p.fatal_after_seconds, [logs.fatal_missing_file.replace("{path}", path)],
                   p.exit_codes.missing_file)
            return True
    return False


def _run_app(run: Run) -> None:
    p = run.profile
    t0 = run.started_at
    startup = run.listen_at - t0
    run.stream.add_many(t0, p.logs.starting, spread=min(startup, p.fatal_after_seconds) if startup else 0.0)
    if _check_requirements(run):
        run.stream.truncate_after(run.exit_at or t0)
        return
    run.stream.add_many(run.listen_at, p.logs.ready)
    if p.completion is not None:
        end = round(run.listen_at + p.completion.duration_seconds, 3)
        run.stream.add_many(end, p.logs.completion)
        code = p.completion.exit_code
        run.exit_at, run.exit_code, run.exit_reason = end, code, "Completed" if code == 0 else "Error"
        return
    period = p.logs.running_period_seconds
    run.stream.start_periodic(round(run.listen_at + period, 3), period, p.logs.running)


def _run_script(run: Run, argv: list[str]) -> None:
    assert run.script_ctx is not None
    _apply_outcome(run, commands.run_argv(argv, run.script_ctx), run.started_at)


def _apply_outcome(run: Run, out: commands.Outcome, t0: float) -> None:
    for offset, text in out.lines:
        run.stream.add(round(t0 + offset, 3), text, raw=True)
    if out.kind == "exit":
        run.exit_at, run.exit_code = round(t0 + out.end, 3), out.exit_code
        run.exit_reason = "Completed" if out.exit_code == 0 else "Error"
    if out.periodic:
        start, period, text = out.periodic
        run.stream.start_periodic(round(t0 + start + period, 3), period, (text,), raw=True)
    run.blocked_on = out.blocked_on if out.kind == "blocked" else None
    run.rest = out.rest


def resume_script(run: Run, t: float) -> None:
    """The Service a blocked script waited for now resolves: run the rest of the script."""
    assert run.script_ctx is not None
    run.stream.stop_periodic(t)
    _apply_outcome(run, commands.resume(run.rest, run.script_ctx), t)
    apply_oom(run)


def apply_oom(run: Run) -> None:
    """If the working set reaches the limit before the planned exit, the kernel kills it first."""
    when = oom_time(run)
    if when is None:
        return
    when = round(when, 3)
    if run.exit_at is None or when < run.exit_at:
        run.exit_at, run.exit_code, run.exit_reason, run.exit_message = when, OOM_EXIT, "OOMKilled", None
        run.stream.truncate_after(when)


def effective_argv(profile: Profile, spec: dict[str, Any], env: dict[str, str]) -> tuple[list[str] | None, str | None]:
    """(argv to interpret, None) for scripts; (None, None) for the app; (None, binary) when not found."""
    command = [expand(str(c), env) for c in spec.get("command") or []]
    args = [expand(str(a), env) for a in spec.get("args") or []]
    if profile.command_driven:
        return (command + args if command else (args or list(profile.default_command))), None
    if not command:
        return None, None
    binary = command[0].rsplit("/", 1)[-1]
    entry = {e.rsplit("/", 1)[-1] for e in profile.entrypoints}
    if binary in commands.SHELLS:
        script = " ".join(command[1:] + args)
        if not entry or any(re.search(rf"(^|[\s/]){re.escape(e)}(\s|$)", script) for e in entry):
            return None, None
        return command + args, None
    if not entry or binary in entry:
        return None, None
    if commands.is_known_binary(binary):
        return command + args, None
    return None, command[0]


def plan_run(run: Run, spec: dict[str, Any]) -> None:
    """Decide the instance's fate and write the lines it will print."""
    argv, missing = effective_argv(run.profile, spec, run.env)
    if missing is not None:
        run.start_error = (f'failed to create containerd task: failed to create shim task: OCI runtime create failed: '
                           f'runc create failed: unable to start container process: exec: "{missing}": '
                           f'executable file not found in $PATH: unknown')
        run.exit_at, run.exit_code, run.exit_reason = run.started_at, START_ERROR_EXIT, "StartError"
        run.exit_message = run.start_error
        run.app = False
        return
    if argv is None:
        run.app = True
        _run_app(run)
    else:
        run.app = False
        run.listen_at = run.started_at
        _run_script(run, argv)
    apply_oom(run)


def container_limits(spec: dict[str, Any]) -> tuple[int | None, int | None]:
    limits = (spec.get("resources") or {}).get("limits") or {}
    mem = parse_memory_bytes(limits["memory"]) if "memory" in limits else None
    cpu = parse_cpu_millis(limits["cpu"]) if "cpu" in limits else None
    return mem or None, cpu or None


def startup_seconds(profile: Profile, cpu_limit: int | None) -> float:
    """Start-up stretches when the CPU limit is below what the app needs."""
    base = profile.startup_seconds
    if cpu_limit and profile.cpu_millicores > cpu_limit:
        base *= profile.cpu_millicores / cpu_limit
    return round(base, 3)
