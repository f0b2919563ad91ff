"""The sandbox backend over the official ``kubernetes`` client, for kubesim and real clusters alike.

One namespace per trial, labelled for the reaper, with a TTL annotation; a ServiceAccount
``agent`` whose Role reaches only that namespace (no secrets); a short-lived TokenRequest token
in a kubeconfig stored as an artifact; a ResourceQuota + LimitRange bounding what the agent can
create. kubesim differs only in two places: workload profiles are registered before the app is
applied, and time passes by advancing its clock instead of sleeping.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

import structlog

from ..artifacts import ArtifactStore
from ..errors import InfraError
from ..models.trial import SandboxRef, SandboxSettings
from .backend import SandboxBackend
from .clock import KubesimWaiter, RealTimeWaiter, Waiter, wait_until
from .kinds import lookup_kind
from .kubeconfig import ClusterAccess, load_admin, render_agent_kubeconfig
from .objects import apply_fault_step, apply_object, snapshot_json
from .rollouts import pending_rollouts
from .rest import KubeError, KubeRest

log = structlog.get_logger(__name__)

MANAGED_LABEL = "ontrial.dev/managed"
TRIAL_LABEL = "ontrial.dev/trial"
EXPIRES_ANNOTATION = "ontrial.dev/expires-at"
AGENT = "agent"
TOKEN_SECONDS = 3600
# On kubesim every trial shares one simulated clock, which other trials move forward by whole
# minutes at a time while they wait for alerts or convergence: an hour of simulated time can pass
# in a few real seconds. The agent's token there lives a simulated week instead.
KUBESIM_TOKEN_SECONDS = 7 * 24 * 3600
AGENT_KUBECONFIG = "agent-kubeconfig.yaml"

READ = ["get", "list", "watch"]
AGENT_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["pods", "pods/log", "services", "endpoints", "configmaps", "events",
                                      "persistentvolumeclaims", "serviceaccounts", "resourcequotas",
                                      "limitranges", "replicationcontrollers"], "verbs": READ},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "update", "patch", "delete"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": ["update", "patch"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "replicasets", "statefulsets", "daemonsets"],
     "verbs": READ},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create", "update", "patch"]},
    {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["get", "update", "patch"]},
    {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": READ},
    {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": READ},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": READ},
    {"apiGroups": ["metrics.k8s.io"], "resources": ["pods"], "verbs": ["get", "list"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": READ},
]
# Requests only: a quota on limits would force default limits onto the app's containers and change
# how it behaves (a default memory limit below a working set is an OOM the task never asked for).
QUOTA_HARD = {"pods": "50", "requests.cpu": "8", "requests.memory": "16Gi", "count/deployments.apps": "20",
              "services": "20", "services.loadbalancers": "0", "services.nodeports": "0",
              "persistentvolumeclaims": "0"}
LIMIT_DEFAULTS = {"defaultRequest": {"cpu": "50m", "memory": "64Mi"}}


def namespace_for(trial_id: str, salt: str | None = None) -> str:
    """Opaque per-trial namespace: "ot-" + 10 hex chars of hash(trial id + random salt)."""
    salt = salt if salt is not None else secrets.token_hex(8)
    return "ot-" + hashlib.sha256(f"{trial_id}\0{salt}".encode()).hexdigest()[:10]


def trial_label(trial_id: str) -> str:
    return hashlib.sha256(trial_id.encode()).hexdigest()[:16]


def _rfc3339(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class KubeBackend(SandboxBackend):
    def __init__(self, access: ClusterAccess, settings: SandboxSettings, store: ArtifactStore,
                 waiter: Waiter | None = None, *, request_timeout: float = 30.0):
        self.access = access
        self.settings = settings
        self.store = store
        self.admin = KubeRest(access.api_client, timeout=request_timeout)
        self.is_kubesim = settings.kind == "kubesim"
        self.waiter = waiter or (KubesimWaiter(self.admin) if self.is_kubesim else RealTimeWaiter())

    @classmethod
    def from_settings(cls, settings: SandboxSettings, store: ArtifactStore) -> "KubeBackend":
        return cls(load_admin(settings.kubeconfig, settings.context), settings, store)

    async def close(self) -> None:
        self.access.close()

    # -- create ----------------------------------------------------------------------------
    async def create(self, trial_id: str) -> SandboxRef:
        ns = namespace_for(trial_id)
        try:
            await self._create_namespace(trial_id, ns)
        except KubeError as e:
            raise e.infra(f"create namespace {ns}") from e
        try:
            await self._grant_agent(ns)
            await self._bound(ns)
            ref, expires = await self.issue_agent_kubeconfig(trial_id, ns)
        except BaseException:
            await self.discard(ns)
            raise
        log.info("sandbox.created", namespace=ns, token_expires=str(expires))
        return SandboxRef(trial_id=trial_id, namespace=ns, agent_kubeconfig_ref=ref, token_expires_at=expires)

    async def discard(self, ns: str) -> None:
        """Best-effort cleanup of a half-created sandbox (the reaper catches what this misses)."""
        try:
            await self.admin.delete(_NS, None, ns)
        except Exception as e:  # noqa: BLE001 - the original error matters more
            log.warning("sandbox.discard_failed", namespace=ns, error=str(e))

    async def _create_namespace(self, trial_id: str, ns: str) -> None:
        expires = datetime.now(timezone.utc) + timedelta(seconds=self.settings.ttl_seconds)
        await self.admin.create(_NS, None, {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns,
                         "labels": {MANAGED_LABEL: "true", TRIAL_LABEL: trial_label(trial_id),
                                    "pod-security.kubernetes.io/enforce": "baseline"},
                         "annotations": {EXPIRES_ANNOTATION: _rfc3339(expires)}}})

    async def _grant_agent(self, ns: str) -> None:
        meta = {"name": AGENT, "namespace": ns, "labels": {MANAGED_LABEL: "true"}}
        objs = [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta, "rules": AGENT_RULES},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AGENT},
             "subjects": [{"kind": "ServiceAccount", "name": AGENT, "namespace": ns}]},
        ]
        for obj in objs:
            await apply_object(self.admin, ns, obj)

    async def _bound(self, ns: str) -> None:
        meta = {"name": "ontrial-sandbox", "namespace": ns, "labels": {MANAGED_LABEL: "true"}}
        await apply_object(self.admin, ns, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta,
                                            "spec": {"hard": QUOTA_HARD}})
        await apply_object(self.admin, ns, {"apiVersion": "v1", "kind": "LimitRange", "metadata": meta,
                                            "spec": {"limits": [{"type": "Container", **LIMIT_DEFAULTS}]}})

    async def issue_agent_kubeconfig(self, trial_id: str, ns: str) -> tuple[str, datetime | None]:
        """A fresh short-lived token for the agent, written as its kubeconfig artifact: (ref, expiry)."""
        token, expires = await self._agent_token(ns)
        kubeconfig = render_agent_kubeconfig(self.access, token=token, namespace=ns, name=ns)
        return self.store.put(trial_id, AGENT_KUBECONFIG, kubeconfig), expires

    async def _agent_token(self, ns: str) -> tuple[str, datetime | None]:
        path = f"/api/v1/namespaces/{ns}/serviceaccounts/{AGENT}/token"
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": [],
                         "expirationSeconds": KUBESIM_TOKEN_SECONDS if self.is_kubesim else TOKEN_SECONDS}}
        try:
            doc = (await self.admin.request("POST", path, body=body)).json() or {}
        except KubeError as e:
            raise e.infra(f"TokenRequest for serviceaccount {ns}/{AGENT}") from e
        status = doc.get("status") or {}
        if not status.get("token"):
            raise InfraError(f"TokenRequest for {ns}/{AGENT} returned no token", transient=True)
        return status["token"], parse_time(status.get("expirationTimestamp"))

    # -- app -------------------------------------------------------------------------------
    async def deploy(self, namespace: str, objects: list[dict[str, Any]],
                     profiles: list[dict[str, Any]] | None = None) -> list[str]:
        if profiles and self.is_kubesim:
            try:
                await self.admin.request("POST", "/kubesim/v1/profiles", body=list(profiles))
            except KubeError as e:
                raise e.infra("register workload profiles on kubesim") from e
        applied = []
        for obj in objects:
            result, created = await apply_object(self.admin, namespace, obj)
            applied.append(f"{created.get('kind', obj.get('kind'))}/{created['metadata']['name']} {result}")
        return applied

    async def wait_healthy(self, namespace: str, timeout: float) -> None:
        async def probe() -> tuple[bool, list[str]]:
            try:
                pending = await pending_rollouts(self.admin, namespace)
            except KubeError as e:
                raise e.infra(f"list workloads in {namespace}") from e
            return not pending, pending

        done, pending = await wait_until(self.waiter, probe, timeout=timeout, step=2.0)
        if not done:
            raise InfraError(f"sandbox {namespace} not healthy after {timeout:g}s: " + "; ".join(pending),
                             transient=not self.is_kubesim)

    async def snapshot(self, trial_id: str, namespace: str, name: str) -> str:
        try:
            data = await snapshot_json(self.admin, namespace)
        except KubeError as e:
            raise e.infra(f"snapshot {namespace}") from e
        return self.store.put(trial_id, name, data)

    async def inject(self, namespace: str, steps: list[Any]) -> list[str]:
        applied = []
        for i, step in enumerate(steps):
            try:
                applied.append(await apply_fault_step(self.admin, namespace, step))
            except InfraError as e:
                raise InfraError(f"fault.steps[{i}]: {e}", transient=e.transient) from e
        return applied

    # -- teardown --------------------------------------------------------------------------
    async def teardown(self, namespace: str, timeout: float = 300.0) -> None:
        try:
            await self.admin.delete(_NS, None, namespace)
        except KubeError as e:
            if e.status == 404:
                return
            raise e.infra(f"delete namespace {namespace}") from e

        async def gone() -> tuple[bool, str]:
            try:
                ns = await self.admin.get_or_none(_NS, None, namespace)
            except KubeError as e:
                raise e.infra(f"get namespace {namespace}") from e
            return ns is None, ((ns or {}).get("status") or {}).get("phase", "")

        done, phase = await wait_until(self.waiter, gone, timeout=timeout, step=1.0)
        if not done:
            raise InfraError(f"namespace {namespace} still present ({phase or 'unknown'}) after {timeout:g}s",
                             transient=True)
        log.info("sandbox.torn_down", namespace=namespace)


_NS = lookup_kind("Namespace")
assert _NS is not None
