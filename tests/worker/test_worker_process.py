"""``python -m worker``: configuration precedence, the reaper schedule it installs (and what a
reaper pass deletes), JSON logs, and a clean exit on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ontrial.models.trial import SandboxSettings
from ontrial.sandbox import KubeRest, load_admin
from ontrial.sandbox.kinds import lookup_kind
from ontrial.sandbox.kube import EXPIRES_ANNOTATION, MANAGED_LABEL
from worker.config import parse_args
from worker.schedules import REAPER_SCHEDULE_ID, ensure_reaper_schedule

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = lookup_kind("Namespace")


def test_flags_override_environment_which_overrides_defaults():
    assert parse_args([], env={}).task_queue == "ontrial"
    env = {"TEMPORAL_ADDRESS": "temporal:7233", "ONTRIAL_TASK_QUEUE": "evals", "ONTRIAL_KUBECONFIG": "/k",
           "ONTRIAL_ARTIFACTS": "/a", "ONTRIAL_AGENT_MODULES": "a,b"}
    config = parse_args([], env=env)
    assert (config.temporal_address, config.task_queue, config.kubeconfig, config.artifacts) == \
        ("temporal:7233", "evals", "/k", "/a")
    assert config.agent_modules == ("a", "b")
    config = parse_args(["--task-queue", "other", "--reaper-every-minutes", "0", "--graceful-shutdown-seconds", "5"],
                        env=env)
    assert config.task_queue == "other" and config.reaper_every is None
    assert config.graceful_shutdown == timedelta(seconds=5)


async def _namespace(cluster, name: str, expires: datetime) -> None:
    access = load_admin(cluster.kubeconfig_path)
    try:
        await KubeRest(access.api_client).create(NAMESPACE, None, {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {MANAGED_LABEL: "true"},
                         "annotations": {EXPIRES_ANNOTATION: expires.strftime("%Y-%m-%dT%H:%M:%SZ")}}})
    finally:
        access.close()


async def _alive(cluster, name: str) -> bool:
    access = load_admin(cluster.kubeconfig_path)
    try:
        ns = await KubeRest(access.api_client).get_or_none(NAMESPACE, None, name)
    finally:
        access.close()
    return ns is not None and not ns["metadata"].get("deletionTimestamp")


async def test_worker_installs_the_reaper_which_deletes_only_expired_sandboxes(temporal_env, trial_cluster, tmp_path):
    client = temporal_env.client
    queue = f"reaper-{uuid.uuid4().hex[:6]}"
    now = datetime.now(timezone.utc)
    expired, fresh = f"ot-exp{uuid.uuid4().hex[:6]}", f"ot-new{uuid.uuid4().hex[:6]}"
    await _namespace(trial_cluster, expired, now - timedelta(minutes=5))
    await _namespace(trial_cluster, fresh, now + timedelta(hours=1))
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host, "ONTRIAL_TASK_QUEUE": queue,
           "ONTRIAL_KUBECONFIG": trial_cluster.kubeconfig_path, "ONTRIAL_SANDBOX_KIND": "kubesim",
           "ONTRIAL_ARTIFACTS": str(tmp_path / "artifacts")}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "worker", "--reaper-every-minutes", "60"], cwd=ROOT, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        schedule = client.get_schedule_handle(REAPER_SCHEDULE_ID)
        for _ in range(200):
            try:
                described = await schedule.describe()
                break
            except Exception:  # noqa: BLE001 - not created yet
                assert worker.poll() is None, log.read_text()
                await asyncio.sleep(0.1)
        assert described.schedule.spec.intervals[0].every == timedelta(hours=1)
        await schedule.trigger()
        for _ in range(300):
            if not await _alive(trial_cluster, expired):
                break
            await asyncio.sleep(0.1)
        assert not await _alive(trial_cluster, expired)
        assert await _alive(trial_cluster, fresh)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
        await schedule.delete()
    assert (tmp_path / "artifacts").is_dir()
    events = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert {"worker.started", "worker.stopped"} <= {e.get("event") for e in events}


async def test_ensuring_the_schedule_twice_updates_it(temporal_env, tmp_path):
    client = temporal_env.client
    schedule_id = f"reaper-{uuid.uuid4().hex[:6]}"
    settings = SandboxSettings(kubeconfig=str(tmp_path / "kubeconfig"))
    await ensure_reaper_schedule(client, settings, "q", timedelta(minutes=10), schedule_id=schedule_id)
    await ensure_reaper_schedule(client, settings, "q", timedelta(minutes=3), schedule_id=schedule_id)
    handle = client.get_schedule_handle(schedule_id)
    try:
        assert (await handle.describe()).schedule.spec.intervals[0].every == timedelta(minutes=3)
    finally:
        await handle.delete()
