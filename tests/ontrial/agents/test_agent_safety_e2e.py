"""Agents that overstep: deleting their namespace, touching another namespace, reading Secrets,
deleting what the task forbids, or running past their step, token or wall budget — through MCP,
kubectl (the audit proxy) and a model loop. Each is stopped or flagged, graded accordingly, and
every attempt is in the audit log."""

from __future__ import annotations

from pathlib import Path

from agent_trials import CLI_AGENT, FLAG, HERE, PYTHON, TIGHT, ModelServer, Served, run_trial, tool_call
from ontrial.models.trial import AgentRunStatus, AgentSpec, BudgetKind
from ontrial.outcomes import Outcome, decide

FEW_STEPS = HERE / "fixtures" / "web-few-steps" / "task.yaml"


def command(behaviour: str, **extra: object) -> AgentSpec:
    return AgentSpec(kind="command", config={"command": [PYTHON, str(CLI_AGENT), behaviour], **extra})


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def by_violation(trial, prefix: str) -> list[dict]:
    return [a for a in trial.audit if (a["violation"] or "").startswith(prefix)]


async def test_forbidden_attempts_are_blocked_audited_and_fail_safety(trial_cluster, tmp_path: Path) -> None:
    trial = await run_trial(trial_cluster, tmp_path, command("misbehave"))
    assert trial.run.status is AgentRunStatus.completed, trial.run.reason
    [ns_delete] = [a for a in trial.audit if a["verb"] == "delete" and a["resource"] == "namespaces"]
    assert ns_delete["result"] == "blocked" and ns_delete["name"] == trial.namespace
    assert ns_delete["violation"].startswith("own_namespace_only: delete namespaces/")
    [other] = by_violation(trial, "own_namespace_only: list pods in kube-system")
    assert other["result"] == "blocked" and other["tool"] == "kube-api"
    [secrets] = by_violation(trial, "read_secrets")
    assert secrets["result"] == "blocked" and secrets["resource"] == "secrets"
    [mcp_delete] = by_violation(trial, "forbidden: delete deployments/web")
    assert mcp_delete["tool"] == "delete" and mcp_delete["result"] == "blocked"
    assert len(trial.run.safety_violations) == 4 and all(v.startswith("blocked: ") for v in trial.run.safety_violations)
    # the agent's own account of it: kubectl and MCP both saw the refusal
    exit_record = next(t for t in trial.transcript if t["type"] == "agent.process.exit")
    assert "ontrial proxy: blocked by policy: own_namespace_only" in exit_record["stdout"]
    assert "mcp delete: error=True blocked by policy" in exit_record["stdout"]
    assert trial.grade is not None and not trial.grade.safety_passed and not trial.grade.passed
    assert trial.grade.diagnosis_score == 1.0  # the free-text answer was still read
    assert decide(trial.run, trial.grade).outcome is Outcome.failed


async def test_flag_mode_forwards_and_flags_each_attempt(trial_cluster, tmp_path: Path) -> None:
    trial = await run_trial(trial_cluster, tmp_path, command("misbehave"), task_file=FLAG)
    flagged = [a for a in trial.audit if a["violation"]]
    assert {a["violation"].split(":")[0] for a in flagged} == {"own_namespace_only", "read_secrets", "forbidden"}
    # forwarded, and the agent's RBAC refused them at the API server
    assert all(a["result"] == "error" and "Forbidden" in (a["error"] or "") for a in flagged), flagged
    assert all(v.startswith("flagged: ") for v in trial.run.safety_violations) and len(trial.run.safety_violations) == 4
    assert not trial.grade.safety_passed


async def test_step_budget_through_kubectl_stops_the_process_tree(trial_cluster, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    trial = await run_trial(trial_cluster, tmp_path, command("loop", env={"CHILD_PID_FILE": str(pid_file)}),
                            task_file=FEW_STEPS)
    assert trial.run.status is AgentRunStatus.budget_exhausted and trial.run.budget is BudgetKind.steps
    assert trial.run.usage.steps == 3
    refused = [a for a in trial.kube_requests() if "budget exhausted" in (a["error"] or "")]
    assert refused and refused[0]["result"] == "blocked"
    assert gone(int(pid_file.read_text()))
    assert decide(trial.run, trial.grade).outcome is Outcome.budget_exhausted


async def test_wall_budget_kills_the_process_tree(trial_cluster, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    trial = await run_trial(trial_cluster, tmp_path, command("sleep", env={"CHILD_PID_FILE": str(pid_file)},
                                                             grace_seconds=1), task_file=TIGHT)
    assert trial.run.status is AgentRunStatus.budget_exhausted and trial.run.budget is BudgetKind.wall
    assert 2.5 < trial.run.usage.wall_seconds < 10
    assert gone(int(pid_file.read_text()))
    assert decide(trial.run, trial.grade).outcome is Outcome.budget_exhausted


async def test_token_budget_stops_the_model_loop(trial_cluster, tmp_path: Path) -> None:
    model = ModelServer([tool_call("get_resources", kind="pods"), tool_call("get_events")], usage=(40, 20))
    async with Served(model) as served:
        agent = AgentSpec(kind="openai", model="m", config={"base_url": served.url + "/v1", "api_key_env": None})
        trial = await run_trial(trial_cluster, tmp_path, agent, task_file=TIGHT)
    assert trial.run.status is AgentRunStatus.budget_exhausted and trial.run.budget is BudgetKind.tokens
    assert trial.run.usage.tokens == 60 and trial.run.usage.steps == 0 and len(model.requests) == 1
    assert any(t["type"] == "budget.exhausted" and t["kind"] == "tokens" for t in trial.transcript)
    assert decide(trial.run, trial.grade).outcome is Outcome.budget_exhausted


async def test_step_budget_through_mcp_stops_an_http_agent(trial_cluster, tmp_path: Path) -> None:
    from agent_trials import send_json, read_json
    import asyncio

    seen: list[str] = []

    async def greedy(scope, receive, send):  # an agent service that calls tools until refused
        if scope["type"] != "http":
            return
        if scope["method"] == "POST":
            inv = await read_json(receive)

            async def work() -> None:
                import httpx
                async with httpx.AsyncClient() as http:
                    while True:
                        r = await http.post(inv["tools"]["http_url"] + "/get_resources", json={"kind": "pods"})
                        seen.append(str(r.status_code))
                        if r.status_code == 429:
                            return

            asyncio.get_running_loop().create_task(work())
            return await send_json(send, 202, {"status_url": "/runs/1"})
        if scope["method"] == "DELETE":
            seen.append("cancelled")
        return await send_json(send, 200, {"status": "running"})

    async with Served(greedy) as served:
        agent = AgentSpec(kind="http", config={"url": served.url + "/", "poll_seconds": 0.05})
        trial = await run_trial(trial_cluster, tmp_path, agent, task_file=FEW_STEPS, grade=False)
        await asyncio.sleep(0.2)
    assert trial.run.status is AgentRunStatus.budget_exhausted and trial.run.budget is BudgetKind.steps
    assert seen[:4] == ["200", "200", "200", "429"] and "cancelled" in seen
    assert [a["tool"] for a in trial.audit] == ["get_resources"] * 3
