"""Deletes expired trial namespaces that teardown never reached (worker crashes, lost activities).

A namespace is reaped when it carries ``ontrial.dev/managed=true`` and its
``ontrial.dev/expires-at`` annotation is in the past. Namespaces without a parseable expiry
are left alone: the reaper must never delete what it cannot prove is ours and stale.
"""

from __future__ import annotations

from datetime import datetime, timezone

import structlog

from ..models.trial import SandboxSettings
from .kinds import lookup_kind
from .kube import EXPIRES_ANNOTATION, MANAGED_LABEL, parse_time
from .kubeconfig import load_admin
from .rest import KubeError, KubeRest

log = structlog.get_logger(__name__)
_NS = lookup_kind("Namespace")


async def reap_expired(rest: KubeRest, now: datetime | None = None) -> list[str]:
    """Delete every managed namespace past its expiry; returns the names deletion was requested for."""
    assert _NS is not None
    now = now or datetime.now(timezone.utc)
    try:
        namespaces = await rest.list(_NS, None, label_selector=f"{MANAGED_LABEL}=true")
    except KubeError as e:
        raise e.infra("list managed namespaces") from e
    reaped = []
    for ns in namespaces:
        meta = ns.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        expires = parse_time((meta.get("annotations") or {}).get(EXPIRES_ANNOTATION))
        if expires is None or expires > now:
            continue
        try:
            await rest.delete(_NS, None, meta["name"])
        except KubeError as e:
            if e.status == 404:
                continue
            raise e.infra(f"delete expired namespace {meta['name']}") from e
        log.info("sandbox.reaped", namespace=meta["name"], expired_at=expires.isoformat())
        reaped.append(meta["name"])
    return reaped


async def reap(settings: SandboxSettings, now: datetime | None = None) -> list[str]:
    """``reap_expired`` against the cluster a SandboxSettings names (what a periodic schedule calls)."""
    access = load_admin(settings.kubeconfig, settings.context)
    try:
        return await reap_expired(KubeRest(access.api_client), now)
    finally:
        access.close()
