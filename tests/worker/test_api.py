"""The worker's HTTP API over real HTTP (uvicorn) and a real Temporal dev server: a model-alias webhook
starts exactly one gate run however often it is delivered; runs can be read and overridden; bad
requests get a JSON error naming the field, never a traceback. Runs use the instant trial path."""

from __future__ import annotations

import asyncio
import socket
import uuid
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from activities.instant import INSTANT_TRIAL_ACTIVITIES
from worker.api import GateApi, serve
from worker.api_models import ApiSettings
from worker.app import build_worker

FIXTURE_TASK = Path(__file__).resolve().parents[1] / "workflows" / "fixtures" / "tasks" / "web-scaled-down"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest_asyncio.fixture(loop_scope="session")
async def api(temporal_env, tmp_path):
    """(base URL, settings): the API on a free port, an instant-path worker behind it."""
    queue = f"api-{uuid.uuid4().hex[:6]}"
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "app").symlink_to(FIXTURE_TASK.parent / "app")
    for i in range(3):
        (tmp_path / "tasks" / f"t{i}").mkdir()
        (tmp_path / "tasks" / f"t{i}" / "task.yaml").write_text(
            (FIXTURE_TASK / "task.yaml").read_text().replace("id: web-scaled-down", f"id: web-scaled-down-{i}"))
    settings = ApiSettings(task_queue=queue, tasks=str(tmp_path / "tasks"), kubeconfig="/unused/kubeconfig",
                           sandbox_kind="kubesim", artifacts=str(tmp_path / "artifacts"),
                           results_url=f"sqlite:///{tmp_path}/results.db", agent="instant", trials=2,
                           decision_window=timedelta(minutes=10), promote_on_pass=True)
    port, stop = free_port(), asyncio.Event()
    async with build_worker(temporal_env.client, queue, trial_activities=INSTANT_TRIAL_ACTIVITIES):
        server = asyncio.ensure_future(serve(GateApi(temporal_env.client, settings), "127.0.0.1", port, stop))
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            for _ in range(100):
                try:
                    if (await http.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            yield http, settings
        stop.set()
        await server


async def until(http: httpx.AsyncClient, run_id: str, *statuses: str, timeout: float = 60) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        body = (await http.get(f"/v1/runs/{run_id}")).json()
        if body.get("status") in statuses:
            return body
        assert loop.time() < deadline, body
        await asyncio.sleep(0.1)


async def test_a_repeated_webhook_starts_one_gate_run(api, temporal_env):
    http, _ = api
    event = {"alias": "prod-chat", "model_version": f"v-{uuid.uuid4().hex[:6]}"}
    first, again = await asyncio.gather(http.post("/v1/model-alias-changed", json=event),
                                        http.post("/v1/model-alias-changed", json=event))
    run_id = f"gate-prod-chat-{event['model_version']}"
    assert {first.json()["run_id"], again.json()["run_id"]} == {run_id}
    assert {first.status_code, again.status_code} <= {200, 202}
    handle = temporal_env.client.get_workflow_handle(run_id)
    run = (await handle.describe()).run_id
    body = await until(http, run_id, "completed")
    assert body["outcome"]["gate"]["verdict"] == "pass" and body["outcome"]["trials"] == 6
    late = await http.post("/v1/model-alias-changed", json=event)  # a retry after the run finished
    assert late.status_code == 200 and late.json() == {"run_id": run_id, "created": False,
                                                      "status_url": f"/v1/runs/{run_id}"}
    assert (await handle.describe()).run_id == run
    runs = [w async for w in temporal_env.client.list_workflows(f'WorkflowId = "{run_id}"')]
    assert len({w.run_id for w in runs}) <= 1  # visibility may lag, but never shows a second run


async def test_a_failed_gate_is_overridden_over_http(api):
    http, _ = api
    alias = f"chat-{uuid.uuid4().hex[:4]}"
    good = await http.post("/v1/model-alias-changed", json={"alias": alias, "model_version": "v1"})
    assert good.status_code == 202
    await until(http, good.json()["run_id"], "completed")  # passes, and becomes the baseline
    bad = await http.post("/v1/model-alias-changed", json={
        "alias": alias, "model_version": "v2", "agent": {"kind": "instant", "config": {"pass_rate": 0}}})
    run_id = bad.json()["run_id"]
    waiting = await until(http, run_id, "awaiting_decision")
    assert waiting["outcome"]["gate"]["verdict"] == "fail"
    assert waiting["outcome"]["baseline_run_id"] == good.json()["run_id"]

    blank = await http.post(f"/v1/runs/{run_id}/override", json={"approver": "ana", "reason": "  "})
    assert blank.status_code == 422 and blank.json()["field"] == "reason"
    ok = await http.post(f"/v1/runs/{run_id}/override", json={"approver": "ana", "reason": "vendor outage, OPS-7"})
    assert ok.status_code == 200, ok.text
    assert ok.json()["via"] == "update" and ok.json()["outcome"]["gate"]["override"]["approver"] == "ana"
    done = await until(http, run_id, "completed")
    assert done["gate"]["override"]["reason"] == "vendor outage, OPS-7"
    again = await http.post(f"/v1/runs/{run_id}/override", json={"approver": "bo", "reason": "twice"})
    assert again.status_code == 409 and "already overridden" in again.json()["error"]


@pytest.mark.parametrize("method, path, body, status, field", [
    ("POST", "/v1/model-alias-changed", b"{not json", 400, None),
    ("POST", "/v1/model-alias-changed", b"[1, 2]", 400, None),
    ("POST", "/v1/model-alias-changed", {"model_version": "v1"}, 422, "alias"),
    ("POST", "/v1/model-alias-changed", {"alias": "a", "model_version": " "}, 422, "model_version"),
    ("POST", "/v1/model-alias-changed", {"alias": "a", "model_version": "v", "trials": 0}, 422, "trials"),
    ("POST", "/v1/model-alias-changed", {"alias": "a", "model_version": "v", "colour": "red"}, 422, "colour"),
    ("POST", "/v1/model-alias-changed", {"alias": "a", "model_version": "v", "agent": {"kind": "nosuch"}}, 422,
     "agent.kind"),
    ("POST", "/v1/model-alias-changed", {"alias": "a", "model_version": "v", "agent": {}}, 422, "agent.kind"),
    ("GET", "/v1/model-alias-changed", None, 405, None),
    ("GET", "/v1/runs/no-such-run", None, 404, None),
    ("POST", "/v1/runs/no-such-run/override", {"approver": "a", "reason": "b"}, 404, None),
    ("POST", "/v1/runs/x/override", {"approver": "a"}, 422, "reason"),
    ("DELETE", "/v2/anything", None, 404, None),
])
async def test_bad_requests_get_a_json_error_naming_the_field(api, method, path, body, status, field):
    http, _ = api
    kwargs = {"content": body} if isinstance(body, bytes) else ({"json": body} if body is not None else {})
    response = await http.request(method, path, **kwargs)
    assert response.status_code == status, response.text
    error = response.json()
    assert error["error"] and "Traceback" not in response.text
    assert error.get("field") == field


async def test_unsafe_characters_in_a_model_version_get_a_safe_distinct_run_id(api):
    http, _ = api
    ids = []
    for version in ("2024/05:01", "2024-05-01"):
        response = await http.post("/v1/model-alias-changed", json={"alias": "x", "model_version": version})
        ids.append(response.json()["run_id"])
    assert ids[1] == "gate-x-2024-05-01" and ids[0].startswith("gate-x-2024-05-01-") and ids[0] != ids[1]
    for run_id in ids:
        assert (await until(http, run_id, "completed", "awaiting_decision"))["run_id"] == run_id


async def test_the_worker_process_serves_the_api_next_to_the_worker(temporal_env, tmp_path):
    import os
    import subprocess
    import sys

    port = free_port()
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
           "ONTRIAL_TASK_QUEUE": f"api-proc-{uuid.uuid4().hex[:6]}", "ONTRIAL_RESULTS_URL": f"sqlite:///{tmp_path}/r.db"}
    with (tmp_path / "worker.log").open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "worker", "--api-port", str(port), "--reaper-every-minutes",
                                    "0"], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            for _ in range(200):
                try:
                    health = await http.get("/healthz")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            assert health.status_code == 200
            no_cluster = await http.post("/v1/model-alias-changed", json={"alias": "a", "model_version": "v",
                                                                           "tasks": str(FIXTURE_TASK)})
            assert no_cluster.status_code == 409 and "--kubeconfig" in no_cluster.json()["error"]
    finally:
        process.terminate()
        assert process.wait(30) == 0, (tmp_path / "worker.log").read_text()
