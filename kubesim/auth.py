"""Bearer-token authentication: the admin token and ServiceAccount tokens from TokenRequest.

ServiceAccount tokens are JWT-shaped (header.payload.signature, HMAC-SHA256 with a per-server
secret) so harness code handles them exactly like tokens from a real cluster. They are checked
against the simulated clock and against the live ServiceAccount (and bound object): deleting the
account, or recreating it with a new uid, revokes every token it was issued.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .clock import rfc3339
from .errors import ApiError, invalid, not_found
from .resources import PODS, SECRETS, SERVICEACCOUNTS
from .store import Obj, Store

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_AUDIENCES = (ISSUER,)
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
_CACHE_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    groups: tuple[str, ...]
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def is_master(self) -> bool:
        return MASTERS in self.groups

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra}
        return out


ADMIN = UserInfo("kubesim-admin", (MASTERS, AUTHENTICATED))


@dataclass(frozen=True, slots=True)
class _Claims:
    user: UserInfo
    namespace: str
    sa_name: str
    sa_uid: str
    expires: float  # unix seconds on the simulated clock
    audiences: tuple[str, ...]
    bound: tuple[str, str, str] | None  # (kind, name, uid)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sa_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    return UserInfo(f"system:serviceaccount:{namespace}:{name}",
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED), uid)


class Authenticator:
    """Maps ``Authorization: Bearer <token>`` to a user; issues and reviews ServiceAccount tokens."""

    def __init__(self, store: Store, admin_token: str | None = None, secret: bytes | None = None):
        self.store = store
        self.admin_token = admin_token or secrets.token_urlsafe(32)
        self._secret = secret or secrets.token_bytes(32)
        self._kid = hashlib.sha256(self._secret).hexdigest()[:16]
        self._static: dict[str, UserInfo] = {self.admin_token: ADMIN}
        self._verified: dict[str, _Claims] = {}

    def add_static_token(self, token: str, user: UserInfo) -> None:
        self._static[token] = user

    # -- authentication ---------------------------------------------------------------------
    def authenticate(self, authorization: str) -> UserInfo:
        """The user behind an Authorization header value; 401 for none, unknown, expired or revoked."""
        if authorization[:7].lower() != "bearer ":
            raise unauthorized()
        user = self.user_for_token(authorization[7:].strip())
        if user is None:
            raise unauthorized()
        return user

    def user_for_token(self, token: str, audiences: tuple[str, ...] | None = None) -> UserInfo | None:
        user = self._static.get(token)
        if user is not None:
            return user
        claims = self._verified.get(token)
        if claims is None:
            claims = self._verify(token)
            if claims is None:
                return None
            if len(self._verified) >= _CACHE_LIMIT:
                self._verified.clear()
            self._verified[token] = claims
        if not self._still_valid(claims):
            return None
        if audiences and not set(audiences) & set(claims.audiences):
            return None
        return claims.user

    def _verify(self, token: str) -> _Claims | None:
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            signature = _unb64(parts[2])
            expected = hmac.new(self._secret, f"{parts[0]}.{parts[1]}".encode("ascii"), hashlib.sha256).digest()
            if not hmac.compare_digest(signature, expected):
                return None
            payload = json.loads(_unb64(parts[1]))
            k8s = payload["kubernetes.io"]
            ns, sa = k8s["namespace"], k8s["serviceaccount"]
            bound = None
            for kind in ("pod", "secret"):
                if kind in k8s:
                    bound = (kind, k8s[kind]["name"], k8s[kind]["uid"])
            aud = payload.get("aud") or []
            return _Claims(sa_user(ns, sa["name"], sa["uid"]), ns, sa["name"], sa["uid"], float(payload["exp"]),
                           tuple(aud if isinstance(aud, list) else [aud]), bound)
        except (ValueError, KeyError, TypeError, UnicodeError):
            return None

    def _still_valid(self, claims: _Claims) -> bool:
        if claims.expires <= self.store.clock.now().timestamp():
            return False
        sa = self.store.find(SERVICEACCOUNTS, claims.namespace, claims.sa_name)
        if sa is None or sa["metadata"].get("uid") != claims.sa_uid:
            return False
        if claims.bound is not None:
            kind, name, uid = claims.bound
            obj = self.store.find(PODS if kind == "pod" else SECRETS, claims.namespace, name)
            if obj is None or obj["metadata"].get("uid") != uid or obj["metadata"].get("deletionTimestamp"):
                return False
        return True

    # -- TokenRequest -----------------------------------------------------------------------
    def token_request(self, namespace: str, sa_name: str, body: Obj) -> Obj:
        """Answer a ``serviceaccounts/<name>/token`` TokenRequest like the real server."""
        sa = self.store.find(SERVICEACCOUNTS, namespace, sa_name)
        if sa is None:
            raise not_found("", "serviceaccounts", sa_name)
        spec = body.get("spec") or {}
        if not isinstance(spec, dict):
            raise ApiError(400, "TokenRequest spec must be an object", "BadRequest")
        seconds = spec.get("expirationSeconds", DEFAULT_EXPIRATION)
        if seconds is None:
            seconds = DEFAULT_EXPIRATION
        if isinstance(seconds, bool) or not isinstance(seconds, int):
            raise ApiError(400, f"TokenRequest in version \"v1\" cannot be handled as a TokenRequest: "
                                f"spec.expirationSeconds must be an integer, got {seconds!r}", "BadRequest")
        if not MIN_EXPIRATION <= seconds <= MAX_EXPIRATION:
            bound = "less than 10 minutes" if seconds < MIN_EXPIRATION else "larger than 2^32 seconds"
            raise invalid("TokenRequest.authentication.k8s.io", sa_name, [
                ("spec.expirationSeconds", f"Invalid value: {seconds}: may not specify a duration {bound}")])
        audiences = spec.get("audiences") or list(DEFAULT_AUDIENCES)
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise ApiError(400, "spec.audiences must be a list of strings", "BadRequest")
        bound_ref = spec.get("boundObjectRef")
        bound_claim: dict[str, Any] = {}
        if bound_ref:
            bound_claim = self._bound_claim(namespace, bound_ref)
        now = self.store.clock.now()
        expires = now + timedelta(seconds=seconds)
        token = self._sign(namespace, sa, audiences, now, expires, bound_claim)
        out_spec: dict[str, Any] = {"audiences": audiences, "expirationSeconds": seconds,
                                    "boundObjectRef": bound_ref or None}
        return {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": sa_name, "namespace": namespace, "creationTimestamp": None},
            "spec": out_spec,
            "status": {"token": token, "expirationTimestamp": rfc3339(expires)},
        }

    def _bound_claim(self, namespace: str, ref: Any) -> dict[str, Any]:
        if not isinstance(ref, dict):
            raise ApiError(400, "spec.boundObjectRef must be an object", "BadRequest")
        kind, name = ref.get("kind"), ref.get("name")
        rt = {"Pod": PODS, "Secret": SECRETS}.get(kind) if isinstance(kind, str) else None
        if rt is None:
            raise invalid("TokenRequest.authentication.k8s.io", str(name), [(
                "spec.boundObjectRef.kind", f'Unsupported value: "{kind}": supported values: "Pod", "Secret"')])
        obj = self.store.find(rt, namespace, name) if isinstance(name, str) else None
        if obj is None:
            raise not_found("", rt.plural, str(name))
        uid = obj["metadata"].get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            raise ApiError(409, f'the UID in the bound object reference ({ref["uid"]}) does not match the UID in '
                                f'record. The object might have been deleted and then recreated', "Conflict")
        return {kind.lower(): {"name": name, "uid": uid}}

    def _sign(self, namespace: str, sa: Obj, audiences: list[str], now: datetime, expires: datetime,
              bound: dict[str, Any]) -> str:
        header = {"alg": "HS256", "kid": self._kid, "typ": "JWT"}
        k8s: dict[str, Any] = {"namespace": namespace,
                               "serviceaccount": {"name": sa["metadata"]["name"], "uid": sa["metadata"]["uid"]}}
        k8s.update(bound)
        payload = {
            "aud": audiences,
            "exp": int(expires.timestamp()),
            "iat": int(now.timestamp()),
            "iss": ISSUER,
            "jti": secrets.token_hex(8),
            "kubernetes.io": k8s,
            "nbf": int(now.timestamp()),
            "sub": f"system:serviceaccount:{namespace}:{sa['metadata']['name']}",
        }
        signing_input = f"{_b64(json.dumps(header, separators=(',', ':')).encode())}." \
                        f"{_b64(json.dumps(payload, separators=(',', ':')).encode())}"
        sig = hmac.new(self._secret, signing_input.encode("ascii"), hashlib.sha256).digest()
        return f"{signing_input}.{_b64(sig)}"

    # -- TokenReview ------------------------------------------------------------------------
    def token_review(self, body: Obj) -> Obj:
        spec = body.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("token"), str) or not spec["token"]:
            raise invalid("TokenReview.authentication.k8s.io", "", [("spec.token", "Required value")])
        audiences = spec.get("audiences") or []
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise ApiError(400, "spec.audiences must be a list of strings", "BadRequest")
        user = self.user_for_token(spec["token"], tuple(audiences) or None)
        status: dict[str, Any] = {"authenticated": user is not None, "user": user.as_dict() if user else {}}
        if user is not None:
            status["audiences"] = audiences or list(DEFAULT_AUDIENCES)
        else:
            status["error"] = "invalid bearer token"
        return {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}
