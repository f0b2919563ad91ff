"""Sandboxes an earlier attempt of the same trial left behind.

Namespace names are random per attempt, so an attempt that died mid-creation (worker killed,
heartbeat lost) leaves a namespace nobody holds a reference to. Every namespace carries the
trial's deterministic label, so the next attempt finds and deletes those before creating its
own; the trial id is the workflow id, so no other running trial can own them.
"""

from __future__ import annotations

from ontrial import steps
from ontrial.models.trial import TrialSpec
from ontrial.sandbox import KubeError, KubeRest, load_admin
from ontrial.sandbox.kinds import lookup_kind
from ontrial.sandbox.kube import TRIAL_LABEL, trial_label


async def leftover_namespaces(spec: TrialSpec) -> list[str]:
    namespace_kind = lookup_kind("Namespace")
    assert namespace_kind is not None
    access = load_admin(spec.sandbox.kubeconfig, spec.sandbox.context)
    try:
        found = await KubeRest(access.api_client).list(
            namespace_kind, None, label_selector=f"{TRIAL_LABEL}={trial_label(spec.trial_id)}")
    except KubeError as err:
        raise err.infra("list namespaces left by earlier attempts") from err
    finally:
        access.close()
    return sorted(ns["metadata"]["name"] for ns in found)


async def discard_leftovers(spec: TrialSpec) -> list[str]:
    """Delete (and wait for) every namespace of this trial; returns their names."""
    names = await leftover_namespaces(spec)
    for name in names:
        await steps.teardown(spec, name)
    return names
