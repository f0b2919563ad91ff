"""Connecting with the admin kubeconfig: in-cluster (`ONTRIAL_KUBECONFIG=in-cluster`) or a file."""

import pytest
import yaml

from ontrial.errors import ConfigError
from ontrial.sandbox.kubeconfig import load_admin


def test_in_cluster_outside_a_pod_is_a_clear_config_error(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="in-cluster: Service host/port is not set"):
        load_admin("in-cluster")


def test_a_missing_kubeconfig_file_names_the_path(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_admin(str(tmp_path / "nope.yaml"))


def _kubeconfig(server: str, token: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                           "clusters": [{"name": "c", "cluster": {"server": server}}],
                           "users": [{"name": "u", "user": {"token": token}}],
                           "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]})


def test_an_edited_kubeconfig_is_read_again_and_clients_do_not_share_configuration(tmp_path):
    path = tmp_path / "admin.yaml"
    path.write_text(_kubeconfig("http://127.0.0.1:1", "first"))
    first, again = load_admin(str(path)), load_admin(str(path))
    assert (first.server, first.token, again.token) == ("http://127.0.0.1:1", "first", "first")
    assert first.api_client.configuration is not again.api_client.configuration
    path.write_text(_kubeconfig("http://127.0.0.1:22", "second-token"))
    edited = load_admin(str(path))
    assert (edited.server, edited.token) == ("http://127.0.0.1:22", "second-token")
    path.write_text("users: [oops")
    with pytest.raises(ConfigError, match="admin.yaml"):
        load_admin(str(path))
