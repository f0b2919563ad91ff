"""The worker on a real cluster connects with its ServiceAccount (`ONTRIAL_KUBECONFIG=in-cluster`)."""

import pytest

from ontrial.errors import ConfigError
from ontrial.sandbox.kubeconfig import load_admin


def test_in_cluster_outside_a_pod_is_a_clear_config_error(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="in-cluster: Service host/port is not set"):
        load_admin("in-cluster")


def test_a_missing_kubeconfig_file_names_the_path(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_admin(str(tmp_path / "nope.yaml"))
