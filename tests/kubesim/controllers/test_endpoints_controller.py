"""Endpoints controller: ready/not-ready addresses, targetPort resolution, lifecycle with the Service."""

from __future__ import annotations

from controller_sim import Sim

from kubesim.resources import ENDPOINTS, PODS, SERVICES


def service(name: str = "api", selector: dict | None = None, ports: list | None = None, **spec) -> dict:
    body = {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "default", "labels": {"team": "shop"}},
            "spec": {"ports": ports if ports is not None else [{"name": "http", "port": 80, "targetPort": 8080}]}}
    if selector is not None:
        body["spec"]["selector"] = selector
    body["spec"].update(spec)
    return body


def pod(name: str, labels: dict, port_name: str = "web", port: int = 8080) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "app", "image": "shop/api:1.0",
                                     "ports": [{"name": port_name, "containerPort": port}]}]}}


def addresses(ep: dict, key: str = "addresses") -> list[str]:
    return [a["targetRef"]["name"] for s in ep.get("subsets") or [] for a in s.get(key) or []]


def test_ready_and_unready_pods_land_in_the_right_lists():
    sim = Sim()
    a = sim.create(PODS, pod("api-a", {"app": "api"}))
    b = sim.create(PODS, pod("api-b", {"app": "api"}))
    sim.create(PODS, pod("other", {"app": "other"}))
    sim.make_ready(a)
    sim.make_running_unready(b)
    sim.create(SERVICES, service(selector={"app": "api"}))
    ep = sim.get(ENDPOINTS, "api")
    assert ep["metadata"]["labels"] == {"team": "shop"}
    [subset] = ep["subsets"]
    assert addresses(ep) == ["api-a"] and addresses(ep, "notReadyAddresses") == ["api-b"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    addr = subset["addresses"][0]
    a = sim.get(PODS, "api-a")
    assert addr["ip"] == a["status"]["podIP"] and addr["nodeName"] == "kubesim-node-1"
    assert addr["targetRef"] == {"kind": "Pod", "namespace": "default", "name": "api-a", "uid": a["metadata"]["uid"]}


def test_pods_becoming_ready_move_and_deleted_pods_vanish():
    sim = Sim()
    sim.create(SERVICES, service(selector={"app": "api"}))
    assert "subsets" not in sim.get(ENDPOINTS, "api")
    p = sim.create(PODS, pod("api-a", {"app": "api"}))
    assert "subsets" not in sim.get(ENDPOINTS, "api")  # no IP yet
    sim.make_running_unready(p)
    assert addresses(sim.get(ENDPOINTS, "api"), "notReadyAddresses") == ["api-a"]
    sim.make_ready(p)
    assert addresses(sim.get(ENDPOINTS, "api")) == ["api-a"]
    sim.store.delete(PODS, "default", "api-a")
    sim.reconcile()
    assert "subsets" not in sim.get(ENDPOINTS, "api")


def test_named_target_port_resolves_per_pod_and_excludes_pods_without_it():
    sim = Sim()
    sim.make_ready(sim.create(PODS, pod("good", {"app": "api"}, "web", 8080)))
    sim.make_ready(sim.create(PODS, pod("other-port", {"app": "api"}, "web", 9090)))
    sim.make_ready(sim.create(PODS, pod("no-name", {"app": "api"}, "metrics", 9100)))
    sim.create(SERVICES, service(selector={"app": "api"}, ports=[{"name": "http", "port": 80, "targetPort": "web"}]))
    ep = sim.get(ENDPOINTS, "api")
    by_port = {s["ports"][0]["port"]: [a["targetRef"]["name"] for a in s["addresses"]] for s in ep["subsets"]}
    assert by_port == {8080: ["good"], 9090: ["other-port"]}


def test_selector_change_and_wrong_selector_empty_the_endpoints():
    sim = Sim()
    sim.make_ready(sim.create(PODS, pod("api-a", {"app": "api"})))
    sim.create(SERVICES, service(selector={"app": "api"}))
    assert addresses(sim.get(ENDPOINTS, "api")) == ["api-a"]
    sim.edit(SERVICES, "api", lambda s: s["spec"].update(selector={"app": "api", "version": "v2"}))
    ep = sim.get(ENDPOINTS, "api")
    assert "subsets" not in ep


def test_selectorless_service_endpoints_are_left_alone_and_owned_ones_go_with_the_service():
    sim = Sim()
    sim.create(SERVICES, service(name="external"))
    manual = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "external", "namespace": "default"},
              "subsets": [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"port": 5432}]}]}
    sim.create(ENDPOINTS, manual)
    assert sim.get(ENDPOINTS, "external")["subsets"][0]["addresses"] == [{"ip": "192.0.2.10"}]
    sim.create(SERVICES, service(selector={"app": "api"}))
    assert sim.find(ENDPOINTS, "api") is not None
    sim.store.delete(SERVICES, "default", "api")
    sim.reconcile()
    assert sim.find(ENDPOINTS, "api") is None
    assert sim.find(ENDPOINTS, "external") is not None


def test_publish_not_ready_addresses_and_addresses_sorted_by_ip():
    sim = Sim()
    pods = [sim.create(PODS, pod(f"api-{i}", {"app": "api"})) for i in range(3)]
    sim.make_running_unready(pods)
    sim.create(SERVICES, service(selector={"app": "api"}, publishNotReadyAddresses=True))
    ep = sim.get(ENDPOINTS, "api")
    ips = [a["ip"] for a in ep["subsets"][0]["addresses"]]
    assert len(ips) == 3 and ips == sorted(ips)
    assert "notReadyAddresses" not in ep["subsets"][0]
