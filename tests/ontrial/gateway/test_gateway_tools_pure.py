"""The tool registry's schemas and argument checks, and kubectl's rollback/env algorithms."""

import pytest

from ontrial.gateway import TOOLS, ToolError, tool_definitions
from ontrial.gateway.writes import env_patch, pick_revision


def test_every_contract_tool_is_registered_with_a_schema() -> None:
    names = {"get_resources", "describe", "get_events", "get_logs", "scale", "rollout_undo", "rollout_restart",
             "set_image", "set_env", "patch", "delete", "apply"}
    assert names == set(TOOLS)
    for d in tool_definitions():
        schema = d["input_schema"]
        assert schema["type"] == "object" and "namespace" in schema["properties"]
        assert set(schema["required"]) <= set(schema["properties"])


def test_validate_coerces_and_names_problems() -> None:
    spec = TOOLS["scale"]
    assert spec.validate({"kind": "deploy", "name": "api", "replicas": "3"})["replicas"] == 3
    with pytest.raises(ToolError, match="missing required argument 'replicas'"):
        spec.validate({"kind": "deploy", "name": "api"})
    with pytest.raises(ToolError, match="must be integer"):
        spec.validate({"kind": "deploy", "name": "api", "replicas": "many"})
    with pytest.raises(ToolError, match="unknown argument"):
        spec.validate({"kind": "deploy", "name": "api", "replicas": 1, "force": True})
    assert TOOLS["get_logs"].validate({"pod": "p", "previous": "true"})["previous"] is True


def test_plans_name_the_kubernetes_action() -> None:
    plan = TOOLS["scale"].plan({"kind": "deploy", "name": "api", "replicas": 1}, "ns")
    assert (plan.verb, plan.resource, plan.namespace, plan.name) == ("patch", "deployments/scale", "ns", "api")
    plan = TOOLS["get_resources"].plan({"kind": "secret"}, "ns")
    assert (plan.verb, plan.resource) == ("list", "secrets")
    plan = TOOLS["apply"].plan({"manifest": "kind: ConfigMap\nmetadata: {name: c, namespace: other}"}, "ns")
    assert (plan.resource, plan.namespace, plan.name) == ("configmaps", "other", "c")
    assert TOOLS["get_logs"].plan({"pod": "p"}, "ns").resource == "pods/log"


def _rs(rev: int | None, name: str) -> dict:
    ann = {"deployment.kubernetes.io/revision": str(rev)} if rev is not None else {}
    return {"metadata": {"name": name, "annotations": ann}}


def test_pick_revision_like_kubectl() -> None:
    rsets = [_rs(1, "a"), _rs(3, "c"), _rs(2, "b"), _rs(None, "x")]
    assert pick_revision(rsets, 0, "api")["metadata"]["name"] == "b"
    assert pick_revision(rsets, 1, "api")["metadata"]["name"] == "a"
    with pytest.raises(ToolError, match="unable to find specified revision 7"):
        pick_revision(rsets, 7, "api")
    with pytest.raises(ToolError, match="no rollout history"):
        pick_revision([_rs(1, "a")], 0, "api")


def test_env_patch_sets_removes_and_replaces_value_from() -> None:
    container = {"name": "api", "env": [{"name": "DB_URL", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}},
                                        {"name": "LOG_LEVEL", "value": "info"}]}
    patch = env_patch(container, {"DB_URL": None, "FEATURE_X": "on"})
    assert patch == {"$setElementOrder/env": [{"name": "LOG_LEVEL"}, {"name": "FEATURE_X"}],
                     "env": [{"$patch": "delete", "name": "DB_URL"}, {"name": "FEATURE_X", "value": "on"}],
                     "name": "api"}
    replaced = env_patch(container, {"DB_URL": "postgres://x"})
    assert replaced["env"] == [{"name": "DB_URL", "value": "postgres://x", "valueFrom": None}]
    assert env_patch(container, {"LOG_LEVEL": "info", "MISSING": None}) is None
    assert env_patch(container, {"LOG_LEVEL": 3})["env"] == [{"name": "LOG_LEVEL", "value": "3"}]
