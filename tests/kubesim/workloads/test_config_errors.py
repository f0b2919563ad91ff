"""Missing ConfigMaps/Secrets/keys: CreateContainerConfigError, FailedMount, and stickiness."""

from __future__ import annotations

import pytest

from kubesim.errors import ApiError
from kubesim.resources import CONFIGMAPS, PODS
from kubesim.workloads.logs import read_log


def _from_cm(name="api-config", key="DB_URL", optional=None):
    ref = {"name": name, "key": key}
    if optional is not None:
        ref["optional"] = optional
    return {"name": "api", "image": "shop/api:1.0",
            "env": [{"name": "DB_URL", "valueFrom": {"configMapKeyRef": ref}}]}


def _waiting(sim, name):
    return sim.cs(name)["state"].get("waiting")


def test_missing_configmap(sim):
    sim.pod("p", _from_cm())
    sim.advance(3)
    assert _waiting(sim, "p") == {"reason": "CreateContainerConfigError",
                                  "message": 'configmap "api-config" not found'}
    assert sim.status("p")["phase"] == "Pending"
    assert sim.messages("p", "Failed") == ['Error: configmap "api-config" not found']
    sim.advance(30)
    failed = sim.events("p", "Failed")[0]
    assert failed["count"] == 4  # retried every 10s
    with pytest.raises(ApiError) as err:
        read_log(sim.cluster, sim.get("p"), "api", False, None, None, False)
    assert err.value.message == 'container "api" in pod "p" is waiting to start: CreateContainerConfigError'


def test_missing_key_and_missing_secret(sim):
    sim.configmap("api-config", {"OTHER": "x"})
    sim.pod("key", _from_cm())
    sim.pod("sec", {"name": "api", "image": "shop/api:1.0",
                    "env": [{"name": "DB_URL", "valueFrom": {"secretKeyRef": {"name": "db", "key": "url"}}}]})
    sim.secret("creds", {"user": "shop"})
    sim.pod("seckey", {"name": "api", "image": "shop/api:1.0",
                       "env": [{"name": "DB_URL", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "url"}}}]})
    sim.pod("from", {"name": "api", "image": "shop/api:1.0", "envFrom": [{"configMapRef": {"name": "nope"}}]})
    sim.advance(3)
    assert _waiting(sim, "key")["message"] == "couldn't find key DB_URL in ConfigMap default/api-config"
    assert _waiting(sim, "sec")["message"] == 'secret "db" not found'
    assert _waiting(sim, "seckey")["message"] == "couldn't find key url in Secret default/creds"
    assert _waiting(sim, "from")["message"] == 'configmap "nope" not found'


def test_optional_reference_starts_without_it(sim):
    sim.pod("p", {**_from_cm(optional=True), "env": _from_cm(optional=True)["env"] + [{"name": "DB_URL", "value": "x"}]})
    sim.advance(5)
    assert "running" in sim.cs("p")["state"]


def test_creating_the_configmap_unblocks_the_pod(sim):
    sim.pod("p", _from_cm())
    sim.advance(3)
    sim.configmap("api-config", {"DB_URL": "postgres://db"})
    sim.advance(3)
    cs = sim.cs("p")
    assert "running" in cs["state"] and cs["restartCount"] == 0


def test_env_values_are_sticky_for_running_containers(sim):
    sim.configmap("api-config", {"DB_URL": "postgres://db"})
    sim.pod("old", _from_cm())
    sim.advance(10)
    assert sim.cs("old")["ready"] is True
    started = sim.cs("old")["state"]["running"]["startedAt"]
    sim.delete(CONFIGMAPS, "api-config")
    sim.advance(120)
    # the running pod keeps what it started with...
    cs = sim.cs("old")
    assert cs["state"] == {"running": {"startedAt": started}} and cs["restartCount"] == 0
    assert sim.status("old")["phase"] == "Running"
    # ...a new pod (e.g. the replacement of a deleted one) exposes the fault
    sim.pod("new", _from_cm())
    sim.advance(5)
    assert _waiting(sim, "new")["reason"] == "CreateContainerConfigError"
    assert sim.cs("old")["ready"] is True


def test_restart_after_configmap_deletion_fails_config(sim):
    sim.configmap("api-config", {"DB_URL": "postgres://db"})
    sim.pod("p", {"name": "api", "image": "busybox:1.36", "command": ["sh", "-c", "echo $DB_URL; sleep 5; exit 1"],
                  "env": _from_cm()["env"]})
    sim.advance(3)
    sim.delete(CONFIGMAPS, "api-config")
    sim.advance(10)
    # the crash restarts the container, and the restart re-reads the (now missing) ConfigMap
    cs = sim.cs("p")
    assert cs["state"]["waiting"] == {"reason": "CreateContainerConfigError",
                                      "message": 'configmap "api-config" not found'}
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert read_log(sim.cluster, sim.get("p"), "api", True, None, None, False) == "postgres://db\n"


def test_missing_configmap_volume_keeps_pod_container_creating(sim):
    sim.pod("vol", {"name": "api", "image": "shop/api:1.0",
                    "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"}]},
            volumes=[{"name": "cfg", "configMap": {"name": "app-files"}}])
    sim.advance(10)
    st = sim.status("vol")
    assert st["phase"] == "Pending" and "podIP" not in st
    assert sim.cs("vol")["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert sim.condition("vol", "PodReadyToStartContainers")["status"] == "False"
    assert sim.messages("vol", "FailedMount") == [
        'MountVolume.SetUp failed for volume "cfg" : configmap "app-files" not found']
    assert sim.events("vol", "FailedMount")[0]["count"] >= 3
    sim.configmap("app-files", {"config.yaml": "a: 1"})
    sim.advance(1)
    assert "podIP" in sim.status("vol")
    assert sim.events("vol", "Pulling")


def test_required_file_from_configmap_volume(sim):
    sim.cluster.profiles.register({"image": "acme/cfg", "tags": ["1"], "ports": [80],
                                   "requires_files": ["/etc/app/config.yaml"]})
    container = {"name": "app", "image": "acme/cfg:1", "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"}]}
    sim.configmap("good", {"config.yaml": "a: 1"})
    sim.configmap("bad", {"other.yaml": "a: 1"})
    sim.pod("good", container, volumes=[{"name": "cfg", "configMap": {"name": "good"}}])
    sim.pod("bad", container, volumes=[{"name": "cfg", "configMap": {"name": "bad"}}])
    sim.advance(20)
    assert "running" in sim.cs("good")["state"]
    assert sim.cs("bad")["lastState"]["terminated"]["exitCode"] == 1
    assert read_log(sim.cluster, sim.get("bad"), "app", True, None, None, False).strip() == \
        "FATAL: open /etc/app/config.yaml: no such file or directory"


def test_env_resolution_features(sim):
    sim.configmap("cm", {"A": "alpha", "B": "beta"})
    sim.pod("env", {"name": "sh", "image": "busybox:1.36", "command": ["sh", "-c", "env"],
                    "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                            {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                                               "divisor": "1Mi"}}},
                            {"name": "GREETING", "value": "hi $(POD) $$(POD)"}],
                    "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
                    "resources": {"limits": {"memory": "64Mi"}}},
            restartPolicy="Never")
    sim.advance(5)
    out = read_log(sim.cluster, sim.get("env"), None, False, None, None, False).splitlines()
    assert "POD=env" in out and "CM_A=alpha" in out and "MEM=64" in out
    assert "GREETING=hi env $(POD)" in out
    assert f"IP={sim.status('env')['podIP']}" in out
    assert "KUBERNETES_SERVICE_HOST=10.96.0.1" in out
    assert sim.store.find(PODS, "default", "env")["status"]["phase"] == "Succeeded"
