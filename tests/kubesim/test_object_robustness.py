"""Client input never crashes the object pipeline: every malformed body ends in a 400/422 Status."""

from __future__ import annotations

import copy
import itertools
import json

import pytest

from kubesim.errors import ApiError
from kubesim.objects import prepare
from kubesim.patch import apply_patch
from kubesim.resources import by_key

try:
    from object_factories import deploy, job, pod, service
except ImportError:  # collected as part of a package
    from tests.kubesim.object_factories import deploy, job, pod, service

GARBAGE = [None, True, 0, -1, 1.5, 2**40, "", "x", "10%", [], {}, [1], ["a"], {"a": 1}, {"$patch": "delete"},
           float("nan"), "1e999999999", [None]]

SAMPLES = {
    ("", "pods"): pod(),
    ("apps", "deployments"): deploy(),
    ("", "services"): service(type="NodePort"),
    ("batch", "jobs"): job(),
    ("batch", "cronjobs"): {"kind": "CronJob", "metadata": {"name": "c"},
                            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": job()["spec"]}}},
    ("", "secrets"): {"kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}},
    ("", "limitranges"): {"kind": "LimitRange", "metadata": {"name": "l"},
                          "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}},
    ("networking.k8s.io", "networkpolicies"): {"kind": "NetworkPolicy", "metadata": {"name": "np"},
                                               "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}},
    ("rbac.authorization.k8s.io", "rolebindings"): {
        "kind": "RoleBinding", "metadata": {"name": "rb"}, "subjects": [{"kind": "User", "name": "u"}],
        "roleRef": {"kind": "Role", "name": "r", "apiGroup": "rbac.authorization.k8s.io"}},
    ("autoscaling", "horizontalpodautoscalers"): {
        "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "maxReplicas": 3}},
}


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _replaced(obj, path, value):
    out = copy.deepcopy(obj)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = copy.deepcopy(value)
    return out


@pytest.mark.parametrize("key", list(SAMPLES), ids=lambda k: k[1])
def test_garbage_anywhere_is_a_status_error(key):
    rt = by_key(*key)
    sample = SAMPLES[key]
    stored = prepare(rt, sample, None)
    for path, value in itertools.product([p for p in _paths(sample) if p], GARBAGE):
        broken = _replaced(sample, path, value)
        for old in (None, stored):
            try:
                prepare(rt, broken, old)
            except ApiError as err:
                assert err.code in (400, 422), (path, value, err.code)
                # The type checks, not prepare's last-resort guard, must have caught it.
                assert "unexpected value in the object" not in err.message, (path, value, err.message)
        try:
            apply_patch(stored, json.dumps(broken), "application/strategic-merge-patch+json", rt)
        except ApiError as err:
            assert err.code == 400 and "unable to apply patch" not in err.message, (path, value, err.message)


def test_typed_rbac_and_network_policy_fields():
    rt = by_key("rbac.authorization.k8s.io", "rolebindings")
    bad = _replaced(SAMPLES[rt.key], ("subjects",), {"kind": "User"})
    with pytest.raises(ApiError) as err:
        prepare(rt, bad)
    assert err.value.code == 400
    assert "cannot unmarshal object into Go struct field RoleBinding.subjects of type []v1.Subject" in err.value.message
    rt = by_key("networking.k8s.io", "networkpolicies")
    out = prepare(rt, SAMPLES[rt.key])
    assert out["spec"]["policyTypes"] == ["Ingress"] and out["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"


def test_deeply_nested_bodies_are_rejected_cleanly():
    deep = json.loads('{"a":' * 900 + "1" + "}" * 900)
    rt = by_key("", "configmaps")
    with pytest.raises(ApiError) as err:
        apply_patch({"metadata": {"name": "c"}}, json.dumps({"x": deep}), "application/strategic-merge-patch+json", rt)
    assert err.value.code == 400


def test_non_finite_numbers_are_not_json():
    with pytest.raises(ApiError) as err:
        prepare(by_key("", "pods"), dict(pod(), extra=float("nan")))
    assert err.value.code == 400 and "unsupported value" in err.value.message
    with pytest.raises(ApiError) as err:
        apply_patch(pod(), b'{"spec":{"x":NaN}}', "application/merge-patch+json", by_key("", "pods"))
    assert err.value.code == 400
