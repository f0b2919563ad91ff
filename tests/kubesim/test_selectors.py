"""Label and field selectors: apimachinery grammar, matching, and the real server's error messages."""

from __future__ import annotations

import pytest

from kubesim.errors import ApiError
from kubesim.selectors import (
    FieldSelector, LabelSelector, format_label_selector, selector_from_map, selector_from_spec,
)

API = {"app": "api", "tier": "web"}
DB = {"app": "db", "tier": "backend", "canary": "true"}
BARE: dict = {}


@pytest.mark.parametrize("text, api, db, bare", [
    ("app=api", True, False, False),
    ("app==api", True, False, False),
    ("app!=api", False, True, True),
    ("app in (api,db)", True, True, False),
    ("app in (api, db)", True, True, False),
    ("app notin (api)", False, True, True),
    ("canary", False, True, False),
    ("!canary", True, False, True),
    ("app=db,tier=backend", False, True, False),
    ("app=db, !canary", False, False, False),
    ("tier in (web),app", True, False, False),
    ("", True, True, True),
    ("   ", True, True, True),
    ("app=", False, False, False),
    ("kubernetes.io/cluster-service=true", False, False, False),
])
def test_label_selector_matching(text, api, db, bare):
    sel = LabelSelector.parse(text)
    assert (sel.matches(API), sel.matches(DB), sel.matches(BARE)) == (api, db, bare)


def test_empty_value_matches_empty_label():
    assert LabelSelector.parse("role=").matches({"role": ""})
    assert LabelSelector.parse("role in ()").matches({"role": ""})


def test_gt_lt():
    assert LabelSelector.parse("weight>5").matches({"weight": "7"})
    assert not LabelSelector.parse("weight<5").matches({"weight": "7"})
    assert not LabelSelector.parse("weight>5").matches({})


def test_string_form_is_sorted_like_kubectl():
    assert str(LabelSelector.parse("tier in (web,a), app=api,!canary")) == "app=api,!canary,tier in (a,web)"


@pytest.mark.parametrize("text, message", [
    ("app in", "unable to parse requirement: found '' expected: '('"),
    ("app in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("=x", "found '=', expected: !, identifier, or 'end of string'"),
    ("a,", "found '', expected: identifier after ','"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("x>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value "
            "must be an integer"),
])
def test_label_selector_syntax_errors(text, message):
    with pytest.raises(ApiError) as err:
        LabelSelector.parse(text)
    assert err.value.code == 400
    assert err.value.status()["reason"] == "BadRequest"
    assert err.value.message == message


def test_label_selector_invalid_key_and_value():
    with pytest.raises(ApiError) as err:
        LabelSelector.parse("app=bad/value")
    assert err.value.message.startswith('unable to parse requirement: values[0][app]: Invalid value: "bad/value": '
                                        "a valid label must be an empty string")
    with pytest.raises(ApiError) as err:
        LabelSelector.parse("-bad=x")
    assert err.value.message.startswith('unable to parse requirement: key: Invalid value: "-bad": name part')


def test_selector_from_spec():
    spec = {"matchLabels": {"app": "api"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "edge"]},
                                 {"key": "canary", "operator": "DoesNotExist"}]}
    sel = selector_from_spec(spec)
    assert sel.matches(API)
    assert not sel.matches(dict(API, canary="1"))
    assert not sel.matches({"app": "api", "tier": "db"})
    assert str(sel) == "app=api,!canary,tier in (edge,web)"
    exists = selector_from_spec({"matchExpressions": [{"key": "tier", "operator": "Exists"},
                                                      {"key": "app", "operator": "NotIn", "values": ["db"]}]})
    assert exists.matches(API) and not exists.matches(DB) and not exists.matches({})


def test_empty_spec_selects_everything_and_none_selects_nothing():
    assert selector_from_spec({}).matches(API)
    assert selector_from_spec({"matchLabels": {}}).matches({})
    assert not selector_from_spec(None).matches(API)
    assert not selector_from_spec(None).matches({})
    assert selector_from_map({"app": "api"}).matches(API)
    assert not selector_from_map({"app": "api"}).matches(DB)
    assert selector_from_map({}).matches(DB)


def test_selector_from_spec_bad_operator():
    with pytest.raises(ApiError) as err:
        selector_from_spec({"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]})
    assert err.value.code == 400
    assert '"Near" is not a valid label selector operator' in err.value.message


def test_format_label_selector():
    assert format_label_selector({"matchLabels": {"app": "api", "a": "b"}}) == "a=b,app=api"
    assert format_label_selector({}) == "<none>"
    assert format_label_selector(None) == "<none>"


# -- field selectors ----------------------------------------------------------------------------------

POD = {"kind": "Pod", "metadata": {"name": "api-1", "namespace": "default"},
       "spec": {"nodeName": "kubesim-node-1", "hostNetwork": False}, "status": {"phase": "Running"}}
PENDING = {"kind": "Pod", "metadata": {"name": "api-2", "namespace": "default"}, "spec": {},
           "status": {"phase": "Pending"}}
EVENT = {"kind": "Event", "metadata": {"name": "api-1.1", "namespace": "default"},
         "involvedObject": {"kind": "Pod", "name": "api-1", "namespace": "default", "uid": "u-1"},
         "reason": "BackOff", "type": "Warning", "source": {"component": "kubelet"}}


def test_field_selector_matching():
    assert FieldSelector.parse("metadata.name=api-1").matches(POD)
    assert not FieldSelector.parse("metadata.name=api-1").matches(PENDING)
    assert FieldSelector.parse("status.phase!=Running").matches(PENDING)
    assert FieldSelector.parse("status.phase==Running,spec.nodeName=kubesim-node-1").matches(POD)
    assert FieldSelector.parse("spec.nodeName=").matches(PENDING)
    assert FieldSelector.parse("spec.hostNetwork=false").matches(POD)
    assert FieldSelector.parse("").matches(POD) and FieldSelector.parse(None).empty


def test_field_selector_for_kubectl_describe_events():
    text = "involvedObject.name=api-1,involvedObject.namespace=default,involvedObject.kind=Pod,involvedObject.uid=u-1"
    sel = FieldSelector.parse(text)
    assert sel.matches(EVENT)
    assert not FieldSelector.parse("involvedObject.uid=u-2").matches(EVENT)
    assert FieldSelector.parse("type=Warning,reason=BackOff,source=kubelet").matches(EVENT)
    sel.check_supported("Event")


def test_field_selector_escapes():
    obj = {"metadata": {"name": "a,b=c"}}
    assert FieldSelector.parse(r"metadata.name=a\,b\=c").matches(obj)
    with pytest.raises(ApiError):
        FieldSelector.parse(r"metadata.name=a\qb")


def test_field_selector_errors():
    with pytest.raises(ApiError) as err:
        FieldSelector.parse("metadata.name")
    assert err.value.code == 400
    assert err.value.message == "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    with pytest.raises(ApiError) as err:
        FieldSelector.parse("spec.replicas=2").check_supported("Deployment")
    assert err.value.message == "field label not supported: spec.replicas"
    FieldSelector.parse("status.phase=Running,spec.nodeName=n").check_supported("Pod")
    FieldSelector.parse("metadata.name=x").check_supported("Deployment")
