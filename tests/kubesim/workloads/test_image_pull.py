"""Unknown images: ErrImagePull, then ImagePullBackOff with the kubelet's image back-off."""

from __future__ import annotations

import copy

import pytest

from kubesim.errors import ApiError
from kubesim.resources import PODS
from kubesim.workloads.logs import read_log


def _reason(sim, name="bad"):
    return sim.cs(name)["state"]["waiting"]["reason"]


def test_unknown_tag_err_image_pull_then_back_off(sim):
    sim.pod("bad", sim.api(image="shop/api:bad"))
    assert _reason(sim) == "ContainerCreating"
    sim.advance(1.5)  # the failed pull takes < 1.2s
    cs = sim.cs("bad")
    assert cs["state"]["waiting"]["reason"] == "ErrImagePull"
    assert cs["state"]["waiting"]["message"] == (
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/shop/api:bad": '
        'failed to resolve reference "docker.io/shop/api:bad": docker.io/shop/api:bad: not found')
    assert cs["image"] == "shop/api:bad" and cs["imageID"] == "" and "containerID" not in cs
    sim.advance(1)
    assert sim.cs("bad")["state"]["waiting"] == {"reason": "ImagePullBackOff",
                                                  "message": 'Back-off pulling image "shop/api:bad"'}
    assert sim.status("bad")["phase"] == "Pending"
    assert sim.messages("bad", "Failed") == [
        'Failed to pull image "shop/api:bad": ' + cs["state"]["waiting"]["message"],
        "Error: ErrImagePull",
        "Error: ImagePullBackOff",
    ]
    assert sim.messages("bad", "BackOff") == ['Back-off pulling image "shop/api:bad"']


def test_image_back_off_doubles_and_caps_at_five_minutes(sim):
    sim.pod("bad", sim.api(image="shop/api:bad"))
    seen = {"Pulling": [], "Failed": []}
    counts = {"Pulling": 0, "Failed": 0}
    for _ in range(5600):
        sim.advance(0.25)
        for reason, msg in (("Pulling", 'Pulling image "shop/api:bad"'), ("Failed", "Error: ErrImagePull")):
            count = sum(e["count"] for e in sim.events("bad", reason) if e["message"] == msg)
            if count != counts[reason]:
                seen[reason].append(sim.now())
                counts[reason] = count
    # the next attempt starts one back-off delay after the previous failure
    waits = [round(p - f) for f, p in zip(seen["Failed"], seen["Pulling"][1:])]
    assert waits[:6] == [10, 20, 40, 80, 160, 300]
    assert set(waits[6:]) == {300}


def test_unknown_repository_says_pull_access_denied(sim):
    sim.pod("bad", {"name": "c", "image": "acme/nonexistent:1.0"})
    sim.advance(2)
    msg = sim.messages("bad", "Failed")[0]
    assert "pull access denied, repository does not exist or may require authorization" in msg
    assert 'failed to resolve reference "docker.io/acme/nonexistent:1.0"' in msg


def test_fixing_the_image_on_the_pod_starts_it(sim):
    sim.pod("bad", sim.api(image="shop/api:bad"))
    sim.advance(30)
    pod = copy.deepcopy(sim.get("bad"))
    pod["spec"]["containers"][0]["image"] = "shop/api:1.0"
    sim.store.update(PODS, pod)
    sim.advance(5)
    cs = sim.cs("bad")
    assert "running" in cs["state"] and cs["ready"] is True
    assert cs["image"] == "docker.io/shop/api:1.0"


def test_registering_a_profile_lets_the_next_pull_succeed(sim):
    sim.pod("late", {"name": "c", "image": "acme/late:2.0"})
    sim.advance(3)
    assert _reason(sim, "late") == "ImagePullBackOff"
    sim.cluster.profiles.register({"image": "acme/late", "tags": ["2.0"], "ports": [80]})
    sim.advance(15)
    assert "running" in sim.cs("late")["state"]


def test_pull_policy_never_without_the_image(sim):
    sim.pod("never", {"name": "c", "image": "nginx:1.25", "imagePullPolicy": "Never"})
    sim.advance(1)
    assert sim.cs("never")["state"]["waiting"] == {
        "reason": "ErrImageNeverPull",
        "message": 'Container image "nginx:1.25" is not present with pull policy of Never'}
    assert sim.messages("never", "Failed") == ["Error: ErrImageNeverPull"]


def test_logs_of_a_container_that_cannot_pull(sim):
    sim.pod("bad", sim.api(image="shop/api:bad"))
    sim.advance(1.5)
    with pytest.raises(ApiError) as err:
        read_log(sim.cluster, sim.get("bad"), "api", False, None, None, False)
    assert err.value.code == 400
    assert err.value.message == 'container "api" in pod "bad" is waiting to start: image can\'t be pulled'
    sim.advance(1)
    with pytest.raises(ApiError) as err:
        read_log(sim.cluster, sim.get("bad"), "api", False, None, None, False)
    assert err.value.message == 'container "api" in pod "bad" is waiting to start: trying and failing to pull image'
