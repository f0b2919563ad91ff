"""Server-side Table rendering: cells must read exactly as a real apiserver prints them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from kubesim import resources
from kubesim.printers import human_duration
from kubesim.tables import render_table

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def ts(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def table(rt, objs, now_s: float = 0, **kw):
    return render_table(rt, objs, T0 + timedelta(seconds=now_s), **kw)


def cells(rt, obj, now_s: float = 0):
    return table(rt, [obj], now_s)["rows"][0]["cells"]


def columns(rt, wide: bool = True):
    return [c["name"] for c in table(rt, [])["columnDefinitions"] if wide or c["priority"] == 0]


def by_column(rt, obj, now_s: float = 0) -> dict:
    return dict(zip(columns(rt), cells(rt, obj, now_s)))


# -- ages --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seconds,expected", [
    (0, "0s"), (1, "1s"), (59, "59s"), (70, "70s"), (119.9, "119s"), (120, "2m"), (121, "2m1s"),
    (200, "3m20s"), (599, "9m59s"), (600, "10m"), (601, "10m"), (179 * 60 + 59, "179m"), (3 * 3600, "3h"),
    (3 * 3600 + 60, "3h1m"), (8 * 3600 - 60, "7h59m"), (8 * 3600, "8h"), (47 * 3600 + 3599, "47h"),
    (48 * 3600, "2d"), (52 * 3600, "2d4h"), (191 * 3600, "7d23h"), (192 * 3600, "8d"),
    (365 * 2 * 86400, "2y"), (365 * 2 * 86400 + 86400, "2y1d"), (365 * 8 * 86400, "8y"),
    (-0.5, "0s"), (-1.9, "0s"), (-2, "<invalid>"),
])
def test_human_duration_matches_apimachinery(seconds, expected):
    assert human_duration(seconds) == expected


# -- table shape -------------------------------------------------------------------------------
def test_table_envelope_and_partial_object_metadata():
    pod = {"metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}, "creationTimestamp": ts(0)}}
    t = table(resources.PODS, [pod], 5, resource_version="42")
    assert t["kind"] == "Table" and t["apiVersion"] == "meta.k8s.io/v1"
    assert t["metadata"] == {"resourceVersion": "42"}
    row = t["rows"][0]
    assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": pod["metadata"]}
    assert row["object"]["metadata"] is not pod["metadata"]  # a copy, never the stored dict
    json.dumps(t)


def test_include_object_variants():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": []}}
    assert table(resources.PODS, [pod], include_object="Object")["rows"][0]["object"] == pod
    assert "object" not in table(resources.PODS, [pod], include_object="None")["rows"][0]


def test_column_definitions_have_all_fields_and_priorities():
    defs = table(resources.PODS, [])["columnDefinitions"]
    assert [(c["name"], c["priority"]) for c in defs] == [
        ("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0),
        ("IP", 1), ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1)]
    for c in defs:
        assert set(c) == {"name", "type", "format", "description", "priority"}
    assert defs[0]["format"] == "name"


@pytest.mark.parametrize("rt", resources.RESOURCES, ids=lambda rt: f"{rt.group or 'core'}/{rt.plural}")
def test_every_type_renders_cells_matching_columns_even_for_odd_objects(rt):
    odd = [
        {"metadata": {"name": "x", "creationTimestamp": ts(0)}},
        {"metadata": {"name": "y"}, "spec": "not-a-map", "status": ["nope"]},
        {"metadata": {"name": "z", "creationTimestamp": "garbage"},
         "spec": {"containers": "bad", "template": {"spec": {"containers": [None, 3]}}, "ports": [1, None],
                  "replicas": "two", "selector": {"matchExpressions": [{"key": "k", "operator": "In"}]}},
         "status": {"containerStatuses": [None, {"state": "x"}], "conditions": "no"},
         "subsets": [{"addresses": "x"}], "data": ["a"], "involvedObject": None, "subjects": [None]},
    ]
    t = table(rt, odd, 10)
    json.dumps(t)
    n = len(t["columnDefinitions"])
    assert all(len(r["cells"]) == n for r in t["rows"])


# -- pods ----------------------------------------------------------------------------------------
def pod(containers=None, statuses=None, init=None, init_statuses=None, phase="Running", **extra):
    spec = {"containers": containers or [{"name": "app", "image": "shop/api:1.0"}], "nodeName": "kubesim-node-1"}
    if init:
        spec["initContainers"] = init
    status = {"phase": phase, "podIP": "10.244.0.5", "containerStatuses": statuses or []}
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    obj = {"metadata": {"name": "api-1", "namespace": "default", "creationTimestamp": ts(0)},
           "spec": spec, "status": status}
    for key, value in extra.items():
        target = obj["metadata"] if key in ("deletionTimestamp",) else obj["status"] if key in (
            "reason", "conditions", "podIPs", "nominatedNodeName") else obj["spec"]
        target[key] = value
    return obj


def running(name="app", restarts=0, ready=True, last=None):
    cs = {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": ts(0)}}}
    if last:
        cs["lastState"] = {"terminated": last}
    return cs


def waiting(reason, name="app", restarts=0, last=None):
    cs = {"name": name, "ready": False, "restartCount": restarts, "state": {"waiting": {"reason": reason}}}
    if last:
        cs["lastState"] = {"terminated": last}
    return cs


def summary(p, now_s=0):
    return cells(resources.PODS, p, now_s)[1:4]


def test_pod_running_ready():
    assert summary(pod(statuses=[running()]), 3) == ["1/1", "Running", "0"]


def test_pod_crashloop_restarts_carry_last_restart_age():
    last = {"reason": "OOMKilled", "exitCode": 137, "startedAt": ts(10), "finishedAt": ts(20)}
    p = pod(statuses=[waiting("CrashLoopBackOff", restarts=3, last=last)])
    assert summary(p, 60) == ["0/1", "CrashLoopBackOff", "3 (40s ago)"]
    assert summary(p, 20 + 200) == ["0/1", "CrashLoopBackOff", "3 (3m20s ago)"]


def test_pod_oomkilled_terminated_state_shows_reason():
    p = pod(statuses=[{"name": "app", "ready": False, "restartCount": 1,
                       "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": ts(5)}},
                       "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": ts(2)}}}])
    assert summary(p, 62) == ["0/1", "OOMKilled", "1 (60s ago)"]


@pytest.mark.parametrize("reason", ["ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError",
                                    "ContainerCreating"])
def test_pod_waiting_reasons(reason):
    assert summary(pod(statuses=[waiting(reason)], phase="Pending")) == ["0/1", reason, "0"]


def test_pod_restarts_without_termination_time_has_no_suffix():
    assert summary(pod(statuses=[running(restarts=2)]))[2] == "2"


def test_pod_terminated_without_reason_uses_exit_code_or_signal():
    term = {"name": "app", "ready": False, "restartCount": 0, "state": {"terminated": {"exitCode": 3}}}
    assert summary(pod(statuses=[term]))[1] == "ExitCode:3"
    term["state"]["terminated"]["signal"] = 9
    assert summary(pod(statuses=[term]))[1] == "Signal:9"


def test_pod_completed_and_row_condition():
    done = {"name": "app", "ready": False, "restartCount": 0,
            "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
    p = pod(statuses=[done], phase="Succeeded")
    assert summary(p) == ["0/1", "Completed", "0"]
    row = table(resources.PODS, [p])["rows"][0]
    assert row["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                  "message": "The pod has completed successfully."}]
    assert "conditions" not in table(resources.PODS, [pod(statuses=[running()])])["rows"][0]


def test_pod_completed_with_a_running_container_is_running_or_notready():
    done = {"name": "a", "ready": False, "restartCount": 0, "state": {"terminated": {"reason": "Completed"}}}
    containers = [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]
    p = pod(containers=containers, statuses=[running("b"), done])  # last status evaluated first
    assert summary(p) == ["1/2", "NotReady", "0"]
    p["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert summary(p)[1] == "Running"


def test_pod_init_container_progress_and_failures():
    init = [{"name": "i1", "image": "x"}, {"name": "i2", "image": "x"}]
    ok = {"name": "i1", "restartCount": 0, "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
    pending = {"name": "i2", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}
    p = pod(init=init, init_statuses=[ok, pending], statuses=[waiting("PodInitializing")], phase="Pending")
    assert summary(p) == ["0/1", "Init:1/2", "0"]
    crash = {"name": "i2", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ts(30)}}}
    p = pod(init=init, init_statuses=[ok, crash], statuses=[waiting("PodInitializing")], phase="Pending")
    assert summary(p, 90) == ["0/1", "Init:CrashLoopBackOff", "4 (60s ago)"]
    failed = {"name": "i2", "restartCount": 0, "state": {"terminated": {"exitCode": 2}}}
    p = pod(init=init, init_statuses=[ok, failed], statuses=[], phase="Failed")
    assert summary(p)[1] == "Init:ExitCode:2"
    failed["state"]["terminated"]["reason"] = "Error"
    assert summary(p)[1] == "Init:Error"


def test_restartable_init_container_counts_as_a_container():
    init = [{"name": "proxy", "image": "x", "restartPolicy": "Always"}]
    sidecar = {"name": "proxy", "ready": True, "started": True, "restartCount": 1,
               "state": {"running": {}}, "lastState": {"terminated": {"finishedAt": ts(10), "exitCode": 1}}}
    p = pod(init=init, init_statuses=[sidecar], statuses=[running()],
            conditions=[{"type": "Initialized", "status": "True"}])
    assert summary(p, 70) == ["2/2", "Running", "1 (60s ago)"]


def test_pod_terminating_and_unknown():
    p = pod(statuses=[running()], deletionTimestamp=ts(5))
    assert summary(p)[1] == "Terminating"
    p["status"]["reason"] = "NodeLost"
    assert summary(p)[1] == "Unknown"
    done = pod(statuses=[], phase="Succeeded", deletionTimestamp=ts(5))
    assert summary(done)[1] == "Succeeded"


def test_pod_scheduling_gated_and_unschedulable_pending():
    p = pod(statuses=[], phase="Pending", conditions=[{"type": "PodScheduled", "status": "False",
                                                        "reason": "SchedulingGated"}])
    assert summary(p)[1] == "SchedulingGated"
    p = pod(statuses=[], phase="Pending", conditions=[{"type": "PodScheduled", "status": "False",
                                                        "reason": "Unschedulable"}])
    assert summary(p) == ["0/1", "Pending", "0"]


def test_pod_status_reason_overrides_phase():
    assert summary(pod(statuses=[], phase="Failed", reason="Evicted"))[1] == "Evicted"


def test_pod_wide_cells():
    p = pod(statuses=[running()], readinessGates=[{"conditionType": "a"}, {"conditionType": "b"}],
            conditions=[{"type": "a", "status": "True"}, {"type": "b", "status": "False"}])
    row = by_column(resources.PODS, p, 125)
    assert row["Age"] == "2m5s"
    assert (row["IP"], row["Node"], row["Nominated Node"], row["Readiness Gates"]) == (
        "10.244.0.5", "kubesim-node-1", "<none>", "1/2")
    p = pod(statuses=[], phase="Pending", podIPs=[{"ip": "10.1.1.1"}])
    p["spec"].pop("nodeName")
    row = by_column(resources.PODS, p)
    assert (row["IP"], row["Node"], row["Readiness Gates"]) == ("10.1.1.1", "<none>", "<none>")


# -- workloads -----------------------------------------------------------------------------------
def template(*containers):
    return {"metadata": {"labels": {"app": "api"}},
            "spec": {"containers": [{"name": n, "image": i} for n, i in containers]}}


def test_deployment_cells():
    d = {"metadata": {"name": "api", "creationTimestamp": ts(0)},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "api", "tier": "be"}},
                  "template": template(("api", "shop/api:1.0"), ("side", "envoy:1"))},
         "status": {"readyReplicas": 2, "updatedReplicas": 1, "availableReplicas": 2}}
    assert columns(resources.DEPLOYMENTS, wide=False) == ["Name", "Ready", "Up-to-date", "Available", "Age"]
    assert cells(resources.DEPLOYMENTS, d, 30) == ["api", "2/3", 1, 2, "30s", "api,side",
                                                   "shop/api:1.0,envoy:1", "app=api,tier=be"]
    d["status"] = {}
    assert cells(resources.DEPLOYMENTS, d)[1:4] == ["0/3", 0, 0]


def test_replicaset_cells_and_selector_expressions():
    rs = {"metadata": {"name": "api-5d4f", "creationTimestamp": ts(0)},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}, "matchExpressions": [
              {"key": "env", "operator": "In", "values": ["prod", "dev"]}, {"key": "canary", "operator": "DoesNotExist"}]},
                   "template": template(("api", "shop/api:1.0"))},
          "status": {"replicas": 2, "readyReplicas": 1}}
    assert columns(resources.REPLICASETS) == ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images",
                                              "Selector"]
    assert cells(resources.REPLICASETS, rs, 5) == ["api-5d4f", 2, 2, 1, "5s", "api", "shop/api:1.0",
                                                   "app=api,!canary,env in (dev,prod)"]


def test_statefulset_and_daemonset():
    sts = {"metadata": {"name": "db", "creationTimestamp": ts(0)},
           "spec": {"replicas": 3, "template": template(("pg", "postgres:16"))}, "status": {"readyReplicas": 1}}
    assert cells(resources.by_key("apps", "statefulsets"), sts) == ["db", "1/3", "0s", "pg", "postgres:16"]
    ds = {"metadata": {"name": "agent", "creationTimestamp": ts(0)},
          "spec": {"selector": {"matchLabels": {"k": "v"}},
                   "template": {"spec": {"nodeSelector": {"os": "linux"}, "containers": [{"name": "a", "image": "b"}]}}},
          "status": {"desiredNumberScheduled": 1, "currentNumberScheduled": 1, "numberReady": 1,
                     "updatedNumberScheduled": 1, "numberAvailable": 0}}
    assert cells(resources.by_key("apps", "daemonsets"), ds) == ["agent", 1, 1, 1, 1, 0, "os=linux", "0s", "a", "b",
                                                                 "k=v"]


def test_job_completions_and_duration():
    job = {"metadata": {"name": "migrate", "creationTimestamp": ts(0)},
           "spec": {"completions": 1, "selector": {"matchLabels": {"job-name": "migrate"}},
                    "template": template(("m", "shop/migrate:1"))},
           "status": {"succeeded": 1, "startTime": ts(0), "completionTime": ts(45)}}
    assert columns(resources.JOBS, wide=False) == ["Name", "Completions", "Duration", "Age"]
    assert cells(resources.JOBS, job, 600) == ["migrate", "1/1", "45s", "10m", "m", "shop/migrate:1",
                                               "job-name=migrate"]
    running_job = {"metadata": {"name": "p", "creationTimestamp": ts(0)},
                   "spec": {"parallelism": 3}, "status": {"startTime": ts(0)}}
    assert cells(resources.JOBS, running_job, 200)[1:3] == ["0/1 of 3", "3m20s"]
    assert cells(resources.JOBS, {"metadata": {"name": "q"}, "spec": {}})[1:3] == ["0/1", ""]


def test_cronjob_cells():
    cj = {"metadata": {"name": "nightly", "creationTimestamp": ts(0)},
          "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": template(("n", "shop/n:1"))}}},
          "status": {"active": [{"name": "nightly-1"}], "lastScheduleTime": ts(3600)}}
    assert columns(resources.CRONJOBS, wide=False) == ["Name", "Schedule", "Suspend", "Active", "Last Schedule",
                                                       "Age"]
    assert cells(resources.CRONJOBS, cj, 3600 + 300)[:6] == ["nightly", "0 3 * * *", "False", 1, "5m", "65m"]
    cj["spec"]["suspend"] = True
    cj["status"] = {}
    assert cells(resources.CRONJOBS, cj)[2:5] == ["True", 0, "<none>"]


def test_hpa_targets():
    hpa_rt = resources.by_key("autoscaling", "horizontalpodautoscalers")
    hpa = {"metadata": {"name": "api", "creationTimestamp": ts(0)},
           "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "minReplicas": 2, "maxReplicas": 5,
                    "targetCPUUtilizationPercentage": 80},
           "status": {"currentReplicas": 2}}
    assert cells(hpa_rt, hpa) == ["api", "Deployment/api", "cpu: <unknown>/80%", "2", 5, 2, "0s"]
    hpa["status"]["currentCPUUtilizationPercentage"] = 35
    assert cells(hpa_rt, hpa)[2] == "cpu: 35%/80%"


# -- core ----------------------------------------------------------------------------------------
def svc(spec, status=None):
    return {"metadata": {"name": "api", "creationTimestamp": ts(0)}, "spec": spec, "status": status or {}}


def test_service_cells():
    s = svc({"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
             "selector": {"app": "api"}, "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]})
    assert columns(resources.SERVICES) == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    assert cells(resources.SERVICES, s, 90) == ["api", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "90s",
                                                "app=api"]
    s = svc({"type": "NodePort", "clusterIP": "10.96.0.11",
             "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]})
    assert cells(resources.SERVICES, s)[1:5] == ["NodePort", "10.96.0.11", "<none>", "80:30080/TCP,53/UDP"]
    assert cells(resources.SERVICES, s)[6] == "<none>"
    s = svc({"type": "LoadBalancer", "clusterIP": "10.96.0.12", "ports": []})
    assert cells(resources.SERVICES, s)[3:5] == ["<pending>", "<none>"]
    s["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}
    assert cells(resources.SERVICES, s)[3] == "203.0.113.9"
    s = svc({"type": "ExternalName", "externalName": "db.example.com"})
    assert cells(resources.SERVICES, s)[1:4] == ["ExternalName", "<none>", "db.example.com"]
    s = svc({"clusterIP": "None", "clusterIPs": ["None"], "ports": [{"port": 5432}]})
    assert cells(resources.SERVICES, s)[1:5] == ["ClusterIP", "None", "<none>", "5432/TCP"]


def test_endpoints_cells():
    ep = {"metadata": {"name": "api", "creationTimestamp": ts(0)},
          "subsets": [{"addresses": [{"ip": f"10.244.0.{i}"} for i in range(1, 6)],
                       "notReadyAddresses": [{"ip": "10.244.0.9"}], "ports": [{"port": 8080}]}]}
    assert cells(resources.ENDPOINTS, ep) == [
        "api", "10.244.0.1:8080,10.244.0.2:8080,10.244.0.3:8080 + 2 more...", "0s"]
    assert cells(resources.ENDPOINTS, {"metadata": {"name": "e"}, "subsets": []})[1] == "<none>"
    only_not_ready = {"metadata": {"name": "e"}, "subsets": [{"notReadyAddresses": [{"ip": "1.1.1.1"}],
                                                              "ports": [{"port": 1}]}]}
    assert cells(resources.ENDPOINTS, only_not_ready)[1] == ""


def test_configmap_secret_serviceaccount_namespace():
    cm = {"metadata": {"name": "cfg", "creationTimestamp": ts(0)}, "data": {"a": "1", "b": "2"},
          "binaryData": {"c": "AA=="}}
    assert cells(resources.CONFIGMAPS, cm, 61) == ["cfg", 3, "61s"]
    sec = {"metadata": {"name": "s", "creationTimestamp": ts(0)}, "type": "kubernetes.io/tls", "data": {"k": "dg=="}}
    assert cells(resources.SECRETS, sec) == ["s", "kubernetes.io/tls", 1, "0s"]
    sa = {"metadata": {"name": "default", "creationTimestamp": ts(0)}}
    assert cells(resources.SERVICEACCOUNTS, sa) == ["default", 0, "0s"]
    ns = {"metadata": {"name": "trial-1", "creationTimestamp": ts(0)}, "status": {"phase": "Terminating"}}
    assert cells(resources.NAMESPACES, ns, 3 * 86400) == ["trial-1", "Terminating", "3d"]


def test_event_cells_in_server_column_order():
    ev = {"metadata": {"name": "api-1.17a", "namespace": "default", "creationTimestamp": ts(0)},
          "involvedObject": {"kind": "Pod", "name": "api-1", "fieldPath": "spec.containers{api}"},
          "reason": "BackOff", "message": "Back-off restarting failed container\n", "type": "Warning",
          "count": 7, "firstTimestamp": ts(0), "lastTimestamp": ts(50),
          "source": {"component": "kubelet", "host": "kubesim-node-1"}}
    assert columns(resources.EVENTS, wide=False) == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert by_column(resources.EVENTS, ev, 60) == {
        "Last Seen": "10s", "Type": "Warning", "Reason": "BackOff", "Object": "pod/api-1",
        "Subobject": "spec.containers{api}", "Source": "kubelet, kubesim-node-1",
        "Message": "Back-off restarting failed container", "First Seen": "60s", "Count": 7, "Name": "api-1.17a"}
    new_style = {"metadata": {"name": "e2"}, "involvedObject": {"kind": "Node"}, "reportingController": "ctl",
                 "eventTime": "2026-01-01T00:00:00.000000Z"}
    row = by_column(resources.EVENTS, new_style, 5)
    assert (row["Last Seen"], row["Object"], row["Source"], row["Count"]) == ("5s", "node", "ctl", 1)


def test_node_cells():
    node = {"metadata": {"name": "kubesim-node-1", "creationTimestamp": ts(0),
                         "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
            "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                      {"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                       "nodeInfo": {"kubeletVersion": "v1.29.0", "osImage": "Debian", "kernelVersion": "6.1",
                                    "containerRuntimeVersion": "containerd://1.7"}}}
    assert cells(resources.NODES, node, 7200) == [
        "kubesim-node-1", "Ready,SchedulingDisabled", "control-plane,worker", "120m", "v1.29.0",
        "10.0.0.1", "<none>", "Debian", "6.1", "containerd://1.7"]
    bare = {"metadata": {"name": "n"}}
    assert cells(resources.NODES, bare)[1:3] == ["Unknown", "<none>"]
    assert cells(resources.NODES, bare)[7:] == ["<unknown>", "<unknown>", "<unknown>"]


def test_resource_quota_cells():
    q = {"metadata": {"name": "trial", "creationTimestamp": ts(0)},
         "status": {"hard": {"pods": "20", "requests.cpu": "4", "limits.memory": "16Gi", "limits.cpu": "8"},
                    "used": {"pods": "3", "requests.cpu": "300m", "limits.cpu": "1500m"}}}
    assert cells(resources.RESOURCEQUOTAS, q) == [
        "trial", "pods: 3/20, requests.cpu: 300m/4", "limits.cpu: 1500m/8, limits.memory: 0/16Gi", "0s"]


# -- policy, rbac, fallbacks ---------------------------------------------------------------------
def test_network_policy_and_rbac():
    np_ = {"metadata": {"name": "deny", "creationTimestamp": ts(0)}, "spec": {"podSelector": {}}}
    assert cells(resources.NETWORKPOLICIES, np_) == ["deny", "<none>", "0s"]
    rb = {"metadata": {"name": "agent", "creationTimestamp": ts(0)},
          "roleRef": {"kind": "Role", "name": "agent"},
          "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "trial-1"},
                       {"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"},
                       {"kind": "Group", "name": "devs"}]}
    assert columns(resources.ROLEBINDINGS) == ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    assert cells(resources.ROLEBINDINGS, rb) == ["agent", "Role/agent", "0s", "alice, bob", "devs",
                                                 "trial-1/agent"]


@pytest.mark.parametrize("rt", [resources.ROLES, resources.CLUSTERROLES, resources.LIMITRANGES])
def test_default_convertor_kinds_print_created_at(rt):
    obj = {"metadata": {"name": "r", "creationTimestamp": "2026-01-01T00:00:07Z"}}
    t = table(rt, [obj], 100)
    assert [(c["name"], c["type"]) for c in t["columnDefinitions"]] == [("Name", "string"), ("Created At", "date")]
    assert t["rows"][0]["cells"] == ["r", "2026-01-01T00:00:07Z"]


def test_generic_fallback_is_name_and_age():
    rt = resources.by_key("metrics.k8s.io", "pods")
    assert columns(rt) == ["Name", "Age"]
    assert cells(rt, {"metadata": {"name": "m", "creationTimestamp": ts(0)}}, 1) == ["m", "1s"]
    assert cells(rt, {"metadata": {"name": "m"}}) == ["m", "<unknown>"]
