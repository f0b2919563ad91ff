"""Raw Kubernetes REST over the official ``kubernetes`` client, from async code.

Every request runs in a worker thread (``asyncio.to_thread``) with a bounded timeout, so the
event loop that heartbeats activities is never blocked. Any kind is reachable (not only the
typed APIs), content types are explicit (kubectl's patch types), and failures become one
``KubeError`` that says whether retrying can help.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from ..errors import InfraError
from .kinds import KindInfo, kind_for, lookup_kind

JSON = "application/json"
STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
PATCH_TYPES = {"strategic": STRATEGIC, "merge": MERGE, "json": JSON_PATCH, "apply": APPLY}


class KubeError(Exception):
    """A failed Kubernetes request. ``status`` 0 means no HTTP answer (connection, timeout)."""

    def __init__(self, status: int, reason: str, message: str, method: str = "", path: str = ""):
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path

    @property
    def transient(self) -> bool:
        return self.status == 0 or self.status >= 500 or self.status == 429

    def __str__(self) -> str:
        where = f"{self.method} {self.path}: " if self.method else ""
        code = f"{self.status} {self.reason}".strip() if self.status else "no response"
        return f"{where}{code}: {self.message}"

    def infra(self, what: str) -> InfraError:
        """This error as an InfraError about ``what`` (e.g. "create Deployment/api")."""
        return InfraError(f"{what}: {self}", transient=self.transient)


def _status_error(status: int, body: bytes, method: str, path: str) -> KubeError:
    text = body.decode("utf-8", "replace")
    reason, message = "", text.strip()[:500]
    try:
        doc = json.loads(text)
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            reason = str(doc.get("reason") or "")
            message = str(doc.get("message") or message)
    except ValueError:
        pass
    return KubeError(status, reason, message or f"HTTP {status}", method, path)


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class KubeRest:
    """Async raw REST calls with the credentials of one ApiClient (admin or the agent's)."""

    def __init__(self, api_client: ApiClient, timeout: float = 30.0):
        self.api_client = api_client
        self.timeout = timeout
        self._discovered: dict[str, KindInfo] = {}

    @property
    def server(self) -> str:
        return self.api_client.configuration.host

    # -- transport -------------------------------------------------------------------------
    def _send(self, method: str, path: str, query: list[tuple[str, str]] | None, body: Any,
              content_type: str | None, accept: str) -> Response:
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            m, url, hdrs, data, _ = self.api_client.param_serialize(
                method=method, resource_path=path, query_params=query or None, header_params=headers,
                body=body, auth_settings=["BearerToken"])
            resp = self.api_client.call_api(m, url, header_params=hdrs, body=data,
                                            _request_timeout=self.timeout)
            raw = resp.read() or b""
        except ApiException as e:  # raised by the REST layer without an HTTP answer (TLS, bad args)
            raise KubeError(e.status or 0, str(e.reason or ""), str(e.reason or e), method, path) from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise KubeError(0, "", f"{type(e).__name__}: {e}", method, path) from e
        if not 200 <= resp.status <= 299:
            raise _status_error(resp.status, raw, method, path)
        return Response(resp.status, raw, resp.headers.get("content-type", "") or "")

    async def request(self, method: str, path: str, *, query: dict[str, Any] | None = None, body: Any = None,
                      content_type: str | None = None, accept: str = JSON) -> Response:
        params = [(k, _q(v)) for k, v in (query or {}).items() if v is not None]
        return await asyncio.to_thread(self._send, method, path, params, body, content_type, accept)

    async def get_json(self, path: str, **query: Any) -> Any:
        return (await self.request("GET", path, query=query)).json()

    # -- kinds -----------------------------------------------------------------------------
    async def resolve(self, kind: str, api_version: str | None = None) -> KindInfo:
        """Kind name (any alias) or manifest apiVersion+kind → KindInfo; unknown kinds via discovery."""
        info = kind_for(api_version, kind) if api_version else lookup_kind(kind)
        if info is not None:
            return info
        key = f"{api_version or ''}|{kind.lower()}"
        if key not in self._discovered:
            found = await self._discover(kind, api_version)
            if found is None:
                raise KubeError(404, "NotFound", f'the server doesn\'t have a resource type "{kind}"')
            self._discovered[key] = found
        return self._discovered[key]

    async def _discover(self, kind: str, api_version: str | None) -> KindInfo | None:
        versions: list[str] = []
        if api_version:
            versions = [api_version]
        else:
            versions = ["v1"]
            groups = await self.get_json("/apis")
            for g in (groups or {}).get("groups", []):
                pref = (g.get("preferredVersion") or {}).get("groupVersion")
                if pref:
                    versions.append(pref)
        want = kind.lower()
        for gv in versions:
            path = f"/apis/{gv}" if "/" in gv else f"/api/{gv}"
            try:
                doc = await self.get_json(path)
            except KubeError as e:
                if e.transient:
                    raise
                continue
            for r in (doc or {}).get("resources", []):
                if "/" in r.get("name", ""):
                    continue
                names = {r.get("name", ""), r.get("singularName", ""), r.get("kind", "").lower(),
                         *r.get("shortNames", [])}
                if want in {n.lower() for n in names if n}:
                    group, _, version = gv.rpartition("/")
                    return KindInfo(r["kind"], group, version, r["name"], bool(r.get("namespaced")),
                                    tuple(r.get("shortNames", [])))
        return None

    # -- common verbs ----------------------------------------------------------------------
    async def list(self, info: KindInfo, namespace: str | None, *, label_selector: str | None = None,
                   field_selector: str | None = None) -> list[dict[str, Any]]:
        doc = await self.get_json(info.collection_path(namespace), labelSelector=label_selector,
                                  fieldSelector=field_selector)
        items = list((doc or {}).get("items") or [])
        for item in items:  # list items omit kind/apiVersion on real servers
            item.setdefault("kind", info.kind)
            item.setdefault("apiVersion", info.api_version)
        return items

    async def get(self, info: KindInfo, namespace: str | None, name: str) -> dict[str, Any]:
        return await self.get_json(info.object_path(namespace, name))

    async def get_or_none(self, info: KindInfo, namespace: str | None, name: str) -> dict[str, Any] | None:
        try:
            return await self.get(info, namespace, name)
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    async def create(self, info: KindInfo, namespace: str | None, body: dict[str, Any]) -> dict[str, Any]:
        return (await self.request("POST", info.collection_path(namespace), body=body)).json()

    async def patch(self, info: KindInfo, namespace: str | None, name: str, body: Any, content_type: str,
                    *, subresource: str | None = None, field_manager: str | None = None,
                    force: bool | None = None) -> dict[str, Any]:
        return (await self.request("PATCH", info.object_path(namespace, name, subresource), body=body,
                                   content_type=content_type,
                                   query={"fieldManager": field_manager, "force": force})).json()

    async def delete(self, info: KindInfo, namespace: str | None, name: str,
                     propagation: str = "Background") -> dict[str, Any] | None:
        return (await self.request("DELETE", info.object_path(namespace, name),
                                   body={"propagationPolicy": propagation}, content_type=JSON)).json()


def _q(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
