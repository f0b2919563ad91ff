"""Shared kubesim fixtures: one embedded server per test session (frozen clock), its kubeconfig,
an official-client ApiClient bound to it, and a fresh namespace per test."""

from __future__ import annotations

import itertools
from typing import Iterator

import pytest
from kubernetes import client, config

from kubesim import embedded

_counter = itertools.count(1)


@pytest.fixture(scope="session")
def kubesim_server() -> Iterator[embedded.Embedded]:
    """An in-process kubesim with a frozen clock (time moves only through ``advance``)."""
    server = embedded.start(time_scale=0, seed=7)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def kubeconfig_path(kubesim_server: embedded.Embedded) -> str:
    return kubesim_server.kubeconfig_path


@pytest.fixture(scope="session")
def api_client(kubeconfig_path: str) -> Iterator[client.ApiClient]:
    """A kubernetes.client.ApiClient configured from the kubesim kubeconfig (admin user)."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig_path, client_configuration=cfg)
    api = client.ApiClient(cfg)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def core_v1(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps_v1(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def namespace(core_v1: client.CoreV1Api) -> Iterator[str]:
    """A namespace of its own for one test, deleted afterwards."""
    name = f"t{next(_counter)}"
    core_v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        try:
            core_v1.delete_namespace(name)
        except client.ApiException as e:
            if e.status != 404:
                raise
