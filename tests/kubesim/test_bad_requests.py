"""Client garbage gets the real server's 4xx Status answers, never a 500 (a 500 means a kubesim bug).

The fuzz test runs against its own server so random DELETEs cannot disturb other tests."""

from __future__ import annotations

import json
import random
import socket
from typing import Any, Iterator

import httpx
import pytest

from kubesim import embedded
from kubesim.resources import RESOURCES

YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"


@pytest.fixture
def http(kubesim_server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kubesim_server.url, timeout=10,
                      headers={"Authorization": f"Bearer {kubesim_server.admin_token}"}) as c:
        yield c


def assert_status(resp: httpx.Response, code: int, reason: str | None = None, contains: str = "") -> dict:
    assert resp.status_code == code, resp.text
    body = resp.json()
    assert body["kind"] == "Status" and body["status"] == "Failure" and body["code"] == code
    if reason:
        assert body["reason"] == reason, body
    assert contains in body["message"], body
    return body


def cm_path(ns: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{ns}/configmaps" + (f"/{name}" if name else "")


def test_malformed_bodies_are_400(http, namespace):
    r = http.post(cm_path(namespace), content=b'{"metadata": {"name": "x"', headers={"Content-Type": "application/json"})
    assert_status(r, 400, "BadRequest", "json parse error")
    r = http.post(cm_path(namespace), content=b"metadata: [unclosed", headers={"Content-Type": YAML})
    assert_status(r, 400, "BadRequest", "YAML")
    assert_status(http.post(cm_path(namespace), content=b"[1, 2]"), 400, "BadRequest", "must be a JSON object")
    assert_status(http.post(cm_path(namespace), content=b""), 400, "BadRequest")
    assert_status(http.post(cm_path(namespace), content=b"\xff\xfe\x00garbage"), 400, "BadRequest")
    deep = b"[" * 100000 + b"]" * 100000
    assert http.post(cm_path(namespace), content=deep).status_code == 400


def test_yaml_bodies_are_accepted(http, namespace):
    r = http.post(cm_path(namespace), content=b"metadata:\n  name: from-yaml\ndata:\n  k: v\n",
                  headers={"Content-Type": YAML})
    assert r.status_code == 201 and r.json()["data"] == {"k": "v"}


def test_protobuf_and_unknown_media_types_are_415(http, namespace):
    pod = b"k8s\x00\n\x09\n\x02v1\x12\x03Pod\x12\x00"  # protobuf is decoded only for kubectl's typed kinds
    body = assert_status(http.post(f"/api/v1/namespaces/{namespace}/pods", content=pod,
                                   headers={"Content-Type": PROTOBUF}), 415, "UnsupportedMediaType")
    assert "protobuf" in body["message"] and "application/json" in body["message"]
    http.post(cm_path(namespace), json={"metadata": {"name": "p"}})
    assert_status(http.patch(cm_path(namespace, "p"), content=b"{}", headers={"Content-Type": "application/json"}),
                  415, "UnsupportedMediaType", "application/merge-patch+json")
    assert_status(http.patch(cm_path(namespace, "p"), content=b"{}"), 415)
    assert_status(http.patch(cm_path(namespace, "p"), content=b"{}", headers={"Content-Type": "text/html"}), 415)


def test_unknown_paths_resources_and_methods(http, namespace):
    for path in ("/apis/apps/v1/namespaces/default/foos", "/api/v2/pods", "/apis/nope.example.com/v1/things",
                 "/api/v1/namespaces/default/pods/x/y/z", "/apis/apps/v1/namespaces/default/deployments/x/log",
                 "/nothing/here", "/api/v1/nodes/n1/log"):
        assert_status(http.get(path), 404, "NotFound", "the server could not find the requested resource")
    assert_status(http.put(cm_path(namespace), json={}), 405, "MethodNotAllowed")
    assert_status(http.post(cm_path(namespace, "x"), json={}), 405, "MethodNotAllowed")
    assert_status(http.request("OPTIONS", cm_path(namespace)), 405, "MethodNotAllowed")
    assert_status(http.post("/api/v1/pods", json={"metadata": {"name": "x"}}), 405)
    assert_status(http.delete("/api/v1/namespaces"), 405)  # namespaces have no deletecollection


def test_body_identity_must_match_the_url(http, namespace):
    assert_status(http.post(cm_path(namespace), json={"apiVersion": "apps/v1", "kind": "ConfigMap",
                                                      "metadata": {"name": "x"}}), 400, "BadRequest", "API version")
    assert_status(http.post(cm_path(namespace), json={"kind": "Secret", "metadata": {"name": "x"}}), 400,
                  "BadRequest", "kind")
    assert_status(http.post(cm_path(namespace), json={"metadata": {"name": "x", "namespace": "elsewhere"}}), 400,
                  "BadRequest", "namespace of the provided object does not match")
    http.post(cm_path(namespace), json={"metadata": {"name": "real"}})
    assert_status(http.put(cm_path(namespace, "real"), json={"metadata": {"name": "other"}}), 400, "BadRequest",
                  "does not match the name on the URL")
    assert_status(http.post(cm_path(namespace), json={"metadata": "nope"}), 400)


def test_wrong_field_types_are_rejected(http, namespace):
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": "three", "selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    r = http.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", json=deploy)
    assert r.status_code in (400, 422) and r.json()["kind"] == "Status", r.text
    assert_status(http.post(cm_path(namespace), json={"metadata": {"name": "x"}, "data": {"k": 5}}), 400)
    r = http.post(cm_path(namespace), json={"metadata": {"name": "Not_Valid"}})
    assert_status(r, 422, "Invalid")


def test_stale_resource_version_and_preconditions_conflict(http, namespace):
    made = http.post(cm_path(namespace), json={"metadata": {"name": "v"}, "data": {"a": "1"}}).json()
    stale_rv = made["metadata"]["resourceVersion"]
    http.patch(cm_path(namespace, "v"), json={"data": {"a": "2"}},
               headers={"Content-Type": "application/merge-patch+json"})
    made["data"] = {"a": "3"}
    assert_status(http.put(cm_path(namespace, "v"), json=made), 409, "Conflict", "the object has been modified")
    assert_status(http.patch(cm_path(namespace, "v"), json={"metadata": {"resourceVersion": stale_rv}},
                             headers={"Content-Type": "application/merge-patch+json"}), 409, "Conflict")
    assert_status(http.request("DELETE", cm_path(namespace, "v"),
                               json={"preconditions": {"uid": "not-the-uid"}}), 409, "Conflict", "Precondition")
    assert_status(http.post(cm_path(namespace), json={"metadata": {"name": "v"}}), 409, "AlreadyExists")


def test_bad_query_parameters(http, namespace):
    assert_status(http.get(cm_path(namespace), params={"labelSelector": "a in (b"}), 400, "BadRequest")
    assert_status(http.get(cm_path(namespace), params={"fieldSelector": "spec.whatever=1"}), 400, "BadRequest",
                  "field label not supported")
    assert_status(http.get(cm_path(namespace), params={"watch": "true", "timeoutSeconds": "soon"}), 400)
    assert_status(http.get(cm_path(namespace), params={"watch": "true", "resourceVersion": "abc"}), 400)
    assert_status(http.post(cm_path(namespace), params={"dryRun": "Some"}, json={"metadata": {"name": "q"}}), 400)
    assert_status(http.request("DELETE", cm_path(namespace, "x"), params={"propagationPolicy": "Sideways"}), 422)
    http.post(f"/api/v1/namespaces/{namespace}/pods", json={
        "metadata": {"name": "lp"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert_status(http.get(f"/api/v1/namespaces/{namespace}/pods/lp/log", params={"tailLines": "many"}), 400)
    patch = http.patch(cm_path(namespace, "never"), content=b"{}", headers={"Content-Type": "application/apply-patch+yaml"})
    assert_status(patch, 400, "BadRequest", "fieldManager")


@pytest.mark.parametrize("spec,message", [
    ({"podManagementPolicy": "Sometimes"}, 'spec.podManagementPolicy: Unsupported value: "Sometimes"'),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
     "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"),
    ({"volumeClaimTemplates": [{"spec": {"accessModes": ["ReadWriteOnce"]}}]},
     "spec.volumeClaimTemplates[0].metadata.name: Required value"),
    ({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Burn"}},
     'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Burn"'),
])
def test_statefulset_fields_its_controller_reads_are_validated(http, namespace, spec, message):
    labels = {"app": "ledger"}
    body = {"metadata": {"name": "ledger"}, "spec": {
        "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "c", "image": "nginx:1.25"}]}}, **spec}}
    assert_status(http.post(f"/apis/apps/v1/namespaces/{namespace}/statefulsets", json=body), 422, "Invalid", message)


def test_daemonset_update_strategy_is_validated(http, namespace):
    labels = {"app": "shipper"}
    body = {"metadata": {"name": "shipper"}, "spec": {
        "selector": {"matchLabels": labels}, "updateStrategy": {"type": "Sometimes"},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}
    assert_status(http.post(f"/apis/apps/v1/namespaces/{namespace}/daemonsets", json=body), 422, "Invalid",
                  'spec.updateStrategy.type: Unsupported value: "Sometimes"')


def test_oversized_body_is_413(http, namespace):
    big = {"metadata": {"name": "big"}, "data": {"k": "x" * (3 * 1024 * 1024 + 10)}}
    assert http.post(cm_path(namespace), json=big).status_code == 413


# -- fuzz ----------------------------------------------------------------------------------------
FUZZ_REQUESTS = 2500


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[embedded.Embedded]:
    server = embedded.start(time_scale=0, seed=99)
    try:
        yield server
    finally:
        server.stop()


def _random_scalar(rng: random.Random) -> Any:
    return rng.choice([None, True, False, 0, -1, 2**63, 1.5, "", "x", "nginx:1.25", "🙂", "a" * 300,
                       "-", "app=web", "10Mi", "1e3", [], {}])


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    if depth > 4 or rng.random() < 0.4:
        return _random_scalar(rng)
    if rng.random() < 0.5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["name", "image", "replicas", "labels", "spec", "metadata", "containers", "template", "selector",
            "matchLabels", "ports", "env", "resources", "limits", "status", "data", "rules", "subjects",
            "roleRef", "finalizers", "ownerReferences", "type", "value", "$patch", "op", "path", "from"]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _random_object(rng: random.Random, kind: str) -> Any:
    obj: dict[str, Any] = {"metadata": {"name": rng.choice(["fz", "fz-1", "x" * 70, "", "Bad_Name", None])}}
    if rng.random() < 0.3:
        obj["kind"] = rng.choice([kind, "Pod", "Nope", 5])
    for section in ("spec", "data", "status", "rules", "subjects", "roleRef"):
        if rng.random() < 0.5:
            obj[section] = _random_value(rng)
    if rng.random() < 0.3:
        obj["metadata"] = _random_value(rng)
    return obj


def _random_path(rng: random.Random) -> str:
    rt = rng.choice(RESOURCES)
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    ns = rng.choice(["fuzz", "default", "missing", "kube-system"])
    name = rng.choice(["fz", "fz-1", "kubernetes", "kubesim-node-1", "default", "%00", "..", "a:b"])
    parts = [base]
    if rng.random() < 0.1:
        parts.append("watch")
    if rt.namespaced and rng.random() < 0.8:
        parts.append(f"namespaces/{ns}")
    parts.append(rt.plural)
    if rng.random() < 0.6:
        parts.append(name)
        if rng.random() < 0.3:
            parts.append(rng.choice(list(rt.subresources) + ["bogus"]))
    path = "/".join(parts)
    if rng.random() < 0.05:
        path = rng.choice(["/", "/api", "/apis/apps", "/version/x", "/openapi/v2", "/kubesim/v1/faults",
                           "/kubesim/v1/clock/advance", "/kubesim/v1/profiles", "//", "/api/v1/namespaces//pods"])
    return path


def _random_query(rng: random.Random) -> dict[str, str]:
    choices = {
        "labelSelector": ["app=web", "app in (a,b)", "!x", "a=b=c", "((", "app notin ()", "x" * 70 + "=1"],
        "fieldSelector": ["metadata.name=fz", "status.phase=Running", "spec.x=1", "==", "metadata.name"],
        "watch": ["true", "false", "1", "yes"],
        "resourceVersion": ["0", "1", "99999999", "-5", "abc", ""],
        "dryRun": ["All", "None", ""],
        "propagationPolicy": ["Background", "Foreground", "Orphan", "Nope"],
        "tailLines": ["1", "-1", "x"], "limitBytes": ["0", "10", "y"], "container": ["c", "nope"],
        "previous": ["true", "x"], "fieldManager": ["fuzz", ""], "includeObject": ["None", "Object", "Bad"],
        "limit": ["500", "-1", "z"], "gracePeriodSeconds": ["0", "x"],
    }
    query = {k: rng.choice(v) for k, v in rng.sample(sorted(choices.items()), rng.randint(0, 4))}
    query["timeoutSeconds"] = "0"  # watches end at once
    return query


def _random_body(rng: random.Random, path: str) -> bytes:
    roll = rng.random()
    if roll < 0.15:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
    if roll < 0.25:
        return rng.choice([b"", b"null", b"[]", b"{", b"- a\n- b", b'{"a":', b"\xef\xbb\xbf{}", b"1e999",
                           b'{"spec": {"replicas": 1e400}}', b"&a [*a, *a]", b"!!python/object:os.system {}"])
    if roll < 0.35:
        return json.dumps(_random_value(rng)).encode()
    if roll < 0.45:
        ops = [{"op": rng.choice(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
                "path": rng.choice(["/spec", "/metadata/labels/x", "/spec/replicas", "", "/a/b/c", "~", "/-"]),
                "value": _random_value(rng), "from": "/metadata"} for _ in range(rng.randint(0, 3))]
        return json.dumps(ops).encode()
    kind = path.rsplit("/", 1)[-1]
    return json.dumps(_random_object(rng, kind)).encode()


def test_fuzzed_requests_never_get_a_500(fuzz_server):
    rng = random.Random(20260101)
    token = fuzz_server.admin_token
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "BREW"]
    content_types = [None, "application/json", "application/yaml", "application/merge-patch+json",
                     "application/strategic-merge-patch+json", "application/json-patch+json",
                     "application/apply-patch+yaml", PROTOBUF, "text/plain", "multipart/form-data; boundary=x",
                     "application/json; charset=utf-16", ";;;", b"\xe9\xff"]
    accepts = [None, "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
               "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", PROTOBUF, "*/*", "as=Table;;",
               "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"]
    with httpx.Client(base_url=fuzz_server.url, timeout=15) as http:
        http.post("/api/v1/namespaces", json={"metadata": {"name": "fuzz"}},
                  headers={"Authorization": f"Bearer {token}"})
        failures = []
        for i in range(FUZZ_REQUESTS):
            method = rng.choice(methods)
            path = _random_path(rng)
            headers: dict[str, str | bytes] = {}
            auth_roll = rng.random()
            if auth_roll < 0.9:
                headers["Authorization"] = f"Bearer {token}"
            elif auth_roll < 0.95:
                headers["Authorization"] = rng.choice(["Bearer", "Bearer a.b.c", "Basic x", "bearer " + token, ""])
            for name, options in (("Content-Type", content_types), ("Accept", accepts)):
                value = rng.choice(options)
                if value is not None:
                    headers[name] = value
            body = _random_body(rng, path) if method not in ("GET", "HEAD") or rng.random() < 0.1 else b""
            try:
                resp = http.request(method, path, params=_random_query(rng), headers=headers, content=body)
            except httpx.HTTPError as e:  # the server must answer, not drop the connection
                failures.append((i, method, path, headers, body[:200], f"transport error {e!r}"))
                continue
            if resp.status_code >= 500:
                failures.append((i, method, path, headers, body[:200], resp.text[:300]))
            elif resp.status_code >= 400 and method != "HEAD":
                assert resp.json()["kind"] == "Status", (method, path, resp.text)
        assert not failures, "\n".join(map(str, failures[:10]))
        assert http.get("/healthz").text == "ok"


def test_garbage_on_the_wire_does_not_kill_the_server(fuzz_server):
    rng = random.Random(7)
    for _ in range(40):
        with socket.create_connection(("127.0.0.1", fuzz_server.port), timeout=5) as s:
            s.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))) + b"\r\n\r\n")
            try:
                s.recv(4096)
            except (socket.timeout, ConnectionError):
                pass
    resp = httpx.get(f"{fuzz_server.url}/api", headers={"Authorization": f"Bearer {fuzz_server.admin_token}"})
    assert resp.status_code == 200


POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                            "env": [{"name": "A", "value": "1"}],
                            "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}}]}
TEMPLATE = {"metadata": {"labels": {"app": "fz"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "fz"}}
BASE_OBJECTS: dict[tuple[str, str], dict[str, Any]] = {
    ("", "pods"): {"spec": POD_SPEC},
    ("apps", "deployments"): {"spec": {"replicas": 2, "selector": SELECTOR, "template": TEMPLATE}},
    ("apps", "replicasets"): {"spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE}},
    ("apps", "statefulsets"): {"spec": {"replicas": 1, "serviceName": "fz", "selector": SELECTOR, "template": TEMPLATE}},
    ("apps", "daemonsets"): {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
    ("batch", "jobs"): {"spec": {"template": {"spec": dict(POD_SPEC, restartPolicy="Never")}}},
    ("batch", "cronjobs"): {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {
        "spec": {"template": {"spec": dict(POD_SPEC, restartPolicy="OnFailure")}}}}},
    ("", "services"): {"spec": {"selector": {"app": "fz"}, "ports": [{"port": 80, "targetPort": 8080}]}},
    ("", "configmaps"): {"data": {"k": "v"}},
    ("", "secrets"): {"stringData": {"k": "v"}, "type": "Opaque"},
    ("", "serviceaccounts"): {},
    ("", "resourcequotas"): {"spec": {"hard": {"pods": "10", "requests.cpu": "4"}}},
    ("", "limitranges"): {"spec": {"limits": [{"type": "Container", "default": {"cpu": "200m"}}]}},
    ("", "persistentvolumeclaims"): {"spec": {"accessModes": ["ReadWriteOnce"],
                                               "resources": {"requests": {"storage": "1Gi"}}}},
    ("autoscaling", "horizontalpodautoscalers"): {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1",
                                                                              "kind": "Deployment", "name": "fz"},
                                                           "minReplicas": 1, "maxReplicas": 3}},
    ("networking.k8s.io", "networkpolicies"): {"spec": {"podSelector": SELECTOR, "policyTypes": ["Ingress"]}},
    ("rbac.authorization.k8s.io", "roles"): {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    ("rbac.authorization.k8s.io", "rolebindings"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "fz"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "fuzz"}]},
}


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, prefix + (i,)))
    return out


def _mutate(rng: random.Random, obj: dict[str, Any]) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj))
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(obj)[1:] or [()])
        if not path:
            continue
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        roll = rng.random()
        if roll < 0.3:
            del parent[last]
        elif roll < 0.8:
            parent[last] = _random_value(rng) if rng.random() < 0.5 else _random_scalar(rng)
        elif isinstance(parent[last], list):
            parent[last].append(_random_value(rng))
        elif isinstance(parent[last], dict):
            parent[last][rng.choice(["x", "name", "$patch", "", "a/b"])] = _random_value(rng)
    return obj


def test_mutated_valid_objects_never_get_a_500(fuzz_server, caplog):
    rng = random.Random(424242)
    headers = {"Authorization": f"Bearer {fuzz_server.admin_token}"}
    patch_types = ["application/merge-patch+json", "application/strategic-merge-patch+json",
                   "application/apply-patch+yaml"]
    statuses: dict[int, int] = {}
    with httpx.Client(base_url=fuzz_server.url, timeout=15, headers=headers) as http:
        http.post("/api/v1/namespaces", json={"metadata": {"name": "fuzz"}})
        for i in range(600):
            (group, plural), base = rng.choice(sorted(BASE_OBJECTS.items()))
            prefix = f"/apis/{group}/v{1 if group != 'autoscaling' else 1}" if group else "/api/v1"
            collection = f"{prefix}/namespaces/fuzz/{plural}"
            name = f"fz{rng.randint(0, 5)}"
            obj = _mutate(rng, dict(base, metadata={"name": name, "labels": {"app": "fz"}}))
            roll = rng.random()
            if roll < 0.5:
                resp = http.post(collection, json=obj)
            elif roll < 0.7:
                current = http.get(f"{collection}/{name}")
                body = _mutate(rng, current.json()) if current.status_code == 200 else obj
                resp = http.put(f"{collection}/{name}", json=body)
            else:
                ct = rng.choice(patch_types)
                resp = http.patch(f"{collection}/{name}", json=obj, params={"fieldManager": "fz"},
                                  headers={"Content-Type": ct})
            statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1
            assert resp.status_code < 500, (i, plural, obj, resp.text)
            if i % 100 == 99:
                fuzz_server.advance(30)
    assert statuses.get(201, 0) > 50 and statuses.get(200, 0) > 20, statuses  # the fuzz reached the store
    server_errors = [r for r in caplog.records if r.levelname == "ERROR" and r.name.startswith("kubesim")]
    assert not server_errors, "\n".join(f"{r.getMessage()}\n{r.exc_text or ''}" for r in server_errors[:3])
