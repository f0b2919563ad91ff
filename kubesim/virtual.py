"""Resources that are computed, never stored: metrics.k8s.io and the authn/authz reviews."""

from __future__ import annotations

from typing import Any

from .auth import Authenticator, UserInfo
from .errors import ApiError, not_found
from .rbac import Authorizer
from .resources import ResourceType
from .rest import Rest, filtered, metadata_of
from .wire import Request, Response, decode_object, json_response
from .workloads import metrics

_METRICS_LIST_KIND = {"pods": "PodMetricsList", "nodes": "NodeMetricsList"}


class Virtual:
    def __init__(self, rest: Rest, auth: Authenticator, authz: Authorizer):
        self.rest = rest
        self.cluster = rest.cluster
        self.auth = auth
        self.authz = authz

    def handle(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        if rt.group == "metrics.k8s.io":
            return self._metrics(rt, ns, name, verb, req)
        if verb != "create":
            raise ApiError(405, "the server does not allow this method on the requested resource",
                           "MethodNotAllowed", {})
        body = decode_object(req)
        if body.get("kind") not in (None, "", rt.kind):
            raise ApiError(400, f"the kind in the data ({body.get('kind')}) does not match the expected kind "
                                f"({rt.kind})", "BadRequest")
        meta = metadata_of(body)
        if rt.plural == "tokenreviews":
            return json_response(self.auth.token_review(body), 201)
        spec = body.get("spec")
        if not isinstance(spec, dict):
            raise ApiError(422, f"{rt.kind}.authorization.k8s.io \"\" is invalid: spec: Required value", "Invalid")
        if rt.plural == "selfsubjectaccessreviews":
            status = self.authz.access_review(req.user, spec)
        elif rt.plural == "selfsubjectrulesreviews":
            ns_ = spec.get("namespace") or ""
            if not isinstance(ns_, str):
                raise ApiError(400, "spec.namespace must be a string", "BadRequest")
            status = self.authz.rules_review(req.user, ns_)
        elif rt.plural == "subjectaccessreviews":
            status = self.authz.access_review(self._subject(spec), spec)
        else:
            raise not_found(rt.group, rt.plural, "")
        meta.setdefault("creationTimestamp", None)
        return json_response({"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta, "spec": spec,
                              "status": status}, 201)

    @staticmethod
    def _subject(spec: dict[str, Any]) -> UserInfo:
        user, groups = spec.get("user"), spec.get("groups") or []
        if not isinstance(user, str) or not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            raise ApiError(422, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: '
                                'user and groups must be strings', "Invalid")
        return UserInfo(user, tuple(groups), str(spec.get("uid") or ""))

    def _metrics(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        if verb not in ("get", "list"):
            raise ApiError(405, "the server does not allow this method on the requested resource",
                           "MethodNotAllowed", {})
        if rt.plural == "pods":
            items = metrics.pod_metrics(self.cluster, ns or None)
        else:
            items = metrics.node_metrics(self.cluster)
        if name:
            for item in items:
                if item["metadata"].get("name") == name:
                    return json_response(item)
            raise not_found(rt.group, rt.plural, name)
        return json_response({"kind": _METRICS_LIST_KIND[rt.plural], "apiVersion": rt.api_version,
                              "metadata": {}, "items": filtered(rt.kind, items, req)})
