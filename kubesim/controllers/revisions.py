"""ControllerRevisions: the template history of StatefulSets and DaemonSets.

One revision per distinct pod template, named ``<owner>-<hash>``, numbered like a Deployment's
revisions; returning to an old template gives that revision the next number instead of a copy.
Its ``data`` is the patch ``kubectl rollout undo`` applies (the template with ``$patch: replace``),
and pods carry its name in ``controller-revision-hash``.
"""

from __future__ import annotations

from .. import objects
from ..resources import CONTROLLERREVISIONS
from ..store import Obj
from ..tree import clone
from .common import api_delete, controller_of, controller_ref, template_hash, write

REVISION_LABEL = "controller-revision-hash"
HASH_LABEL = "controller.kubernetes.io/hash"


def revision_of(pod: Obj) -> str:
    """The revision a pod was made from."""
    return (pod["metadata"].get("labels") or {}).get(REVISION_LABEL, "")


def template_of(revision: Obj) -> dict:
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def number(revision: Obj) -> int:
    value = revision.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def sync_revisions(cluster, owner: Obj) -> tuple[list[Obj], Obj]:
    """(the owner's revisions, oldest number first; the one matching its template now), creating or
    renumbering that one as needed."""
    ns = owner["metadata"]["namespace"]
    owned = sorted((r for r in cluster.store.list(CONTROLLERREVISIONS, ns)
                    if (controller_of(r) or {}).get("uid") == owner["metadata"]["uid"]), key=number)
    template = (owner.get("spec") or {}).get("template") or {}
    wanted = objects.normalize_template(template)
    latest = number(owned[-1]) if owned else 0
    update = next((r for r in owned if objects.normalize_template(template_of(r)) == wanted), None)
    if update is None:
        update = _create(cluster, owner, template, latest + 1)
        owned.append(update)
    elif update is not owned[-1]:
        update = write(cluster, CONTROLLERREVISIONS, dict(update, revision=latest + 1))
        owned = [r for r in owned if r["metadata"]["name"] != update["metadata"]["name"]] + [update]
    return owned, update


def trim_revisions(cluster, owner: Obj, owned: list[Obj], in_use: set[str]) -> None:
    """Delete the oldest revisions beyond ``revisionHistoryLimit``, never one in use."""
    limit = int((owner.get("spec") or {}).get("revisionHistoryLimit", 10))
    spare = [r for r in owned if r["metadata"]["name"] not in in_use]
    for revision in spare[:max(0, len(spare) - limit)]:
        api_delete(cluster, CONTROLLERREVISIONS, revision)


def _create(cluster, owner: Obj, template: dict, revision_number: int) -> Obj:
    h = template_hash(template)
    labels = dict(((owner.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
    revision: Obj = {
        "apiVersion": CONTROLLERREVISIONS.api_version, "kind": CONTROLLERREVISIONS.kind,
        "metadata": {"name": f"{owner['metadata']['name']}-{h}", "namespace": owner["metadata"]["namespace"],
                     "labels": {**labels, HASH_LABEL: h}, "ownerReferences": [controller_ref(owner)]},
        "data": {"spec": {"template": dict(clone(template), **{"$patch": "replace"})}},
        "revision": revision_number,
    }
    return cluster.store.create(CONTROLLERREVISIONS, objects.prepare(CONTROLLERREVISIONS, revision, None))
