"""Per-namespace defaults: the "default" ServiceAccount and the kube-root-ca.crt ConfigMap.

Like the real serviceaccount and root-ca-cert-publisher controllers, both are recreated if deleted
and the ConfigMap's data is restored if edited. The CA is ``cluster.ca_bundle`` when the server set
one (its TLS certificate authority), otherwise a fixed, parseable placeholder certificate.
"""

from __future__ import annotations


from ..resources import CONFIGMAPS, NAMESPACES, SERVICEACCOUNTS
from ..tree import clone
from .common import being_deleted, write

COMPONENT = "serviceaccount-controller"
ROOT_CA_NAME = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
    "distributions of Kubernetes clusters."
)
PLACEHOLDER_CA = (  # a parseable self-signed certificate (CN=kubesim-ca); its key was never kept
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBfzCCASWgAwIBAgIUbLVEksOCqxtEkvRcQLg+a0roRJ4wCgYIKoZIzj0EAwIw\n"
    "FTETMBEGA1UEAwwKa3ViZXNpbS1jYTAeFw0yNjExMzAwOTE0MDRaFw0zNjExMjcw\n"
    "OTE0MDRaMBUxEzARBgNVBAMMCmt1YmVzaW0tY2EwWTATBgcqhkjOPQIBBggqhkjO\n"
    "PQMBBwNCAAQtlXpkMhVb0U4vrY8+akA7lZfmy5aLwixZJ3NhyuOai+619v5MkXPr\n"
    "zamCl8kpz+pGp5caqPDshMsddzjlTXxuo1MwUTAdBgNVHQ4EFgQULh17Vrr2F1Jk\n"
    "b0ajXn/QaVgUBVcwHwYDVR0jBBgwFoAULh17Vrr2F1Jkb0ajXn/QaVgUBVcwDwYD\n"
    "VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiAx4IL8EsfsJXy3OYlATPsT\n"
    "CwHWKkT9QjpMcj7w2nasIQIhAKNkiexugzlfeg3lya2X5CXgmjfm/G3AHrv3KGdJ\n"
    "hopl\n"
    "-----END CERTIFICATE-----\n"
)


class ServiceAccountController:
    name = COMPONENT

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        ns = cluster.store.find(NAMESPACES, "", namespace)
        if ns is None or being_deleted(ns) or (ns.get("status") or {}).get("phase") == "Terminating":
            return
        store = cluster.store
        if store.find(SERVICEACCOUNTS, namespace, "default") is None:
            store.create(SERVICEACCOUNTS, {"metadata": {"name": "default", "namespace": namespace}})
        data = {"ca.crt": getattr(cluster, "ca_bundle", None) or PLACEHOLDER_CA}
        current = store.find(CONFIGMAPS, namespace, ROOT_CA_NAME)
        if current is None:
            store.create(CONFIGMAPS, {
                "metadata": {"name": ROOT_CA_NAME, "namespace": namespace,
                             "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
                "data": data,
            })
        elif current.get("data") != data:
            restored = clone(current)
            restored["data"] = data
            write(cluster, CONFIGMAPS, restored)
