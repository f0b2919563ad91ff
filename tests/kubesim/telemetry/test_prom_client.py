"""A stock Prometheus client library (prometheus-api-client) works unmodified against kubesim's
Prometheus API served over real HTTP."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime, timedelta, timezone
from typing import Iterator

import pytest
import uvicorn
from telemetry_sim import ShopSim

from kubesim.embedded import QuietServer, bind_socket
from kubesim.telemetry.asgi import prometheus_app

prometheus_api_client = pytest.importorskip("prometheus_api_client")


@pytest.fixture(scope="module")
def prom() -> Iterator[tuple[ShopSim, object]]:
    sim = ShopSim(namespaces=("shop",))
    sim.advance(900)
    sock = bind_socket("127.0.0.1", 0)
    server = QuietServer(uvicorn.Config(prometheus_app(sim.cluster), lifespan="off", log_config=None,
                                        log_level="warning", access_log=False))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/prometheus"
    client = prometheus_api_client.PrometheusConnect(url=url, disable_ssl=True)
    try:
        yield sim, client
    finally:
        server.should_exit = True
        thread.join(5)


def test_connection_and_metric_names(prom):
    _, client = prom
    assert client.check_prometheus_connection()
    names = client.all_metrics()
    assert {"http_requests_total", "up", "kube_pod_container_status_restarts_total"} <= set(names)
    assert "service" in client.get_label_names()
    assert "payments" in client.get_label_values("service")


def test_instant_queries(prom):
    _, client = prom
    result = client.custom_query('sum by (service) (rate(http_requests_total{namespace="shop"}[5m]))')
    rates = {r["metric"]["service"]: float(r["value"][1]) for r in result}
    assert rates["frontend"] == pytest.approx(20, rel=0.1)
    assert rates["checkout"] == pytest.approx(4, rel=0.15)
    current = client.get_current_metric_value("up", label_config={"service": "ledger"})
    assert len(current) == 1 and current[0]["value"][1] == "1"


def test_range_queries(prom):
    sim, client = prom
    end = datetime.fromtimestamp(sim.tel.now_unix(), timezone.utc)
    start = end - timedelta(minutes=10)
    series = client.custom_query_range('sum(rate(http_requests_total{service="frontend"}[1m]))',
                                       start_time=start, end_time=end, step="30")
    assert len(series) == 1
    values = series[0]["values"]
    assert len(values) == 21
    assert all(float(v) == pytest.approx(20, rel=0.15) for _, v in values)
    raw = client.get_metric_range_data("up", label_config={"service": "payments"}, start_time=start, end_time=end)
    assert len(raw) == 1 and len(raw[0]["values"]) >= 39


def test_client_sees_prometheus_errors(prom):
    _, client = prom
    with pytest.raises(prometheus_api_client.PrometheusApiClientException) as err:
        client.custom_query("sum(")
    assert "400" in str(err.value) and "bad_data" in str(err.value)
