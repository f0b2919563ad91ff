"""Alert notifications: version-4 webhook payloads POSTed to the namespace's receiver, grouped, with
a resolved notification when the cause is fixed."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest
from telemetry_sim import ShopSim

from kubesim.telemetry import admin
from kubesim.telemetry.alertmanager import fingerprint

NS = "shop"


class Receiver:
    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.payloads.append(json.loads(body))
                outer.headers.append(dict(self.headers))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    try:
        yield r
    finally:
        r.close()


def test_firing_and_resolved_webhooks(receiver):
    s = ShopSim(webhook=receiver.url)
    s.advance(300)
    assert s.tel.alertmanager.notifier.flush() and receiver.payloads == []
    s.set_selector(NS, "payments", {"app": "payment"})
    s.advance_until(lambda: s.firing(NS), 600)
    assert s.tel.alertmanager.notifier.flush()
    first = receiver.payloads[0]
    assert first["version"] == "4" and first["status"] == "firing" and first["receiver"] == "kubesim"
    assert first["groupLabels"] == {"alertname": "HighErrorRate"}
    assert first["groupKey"] == '{}:{alertname="HighErrorRate"}'
    assert first["truncatedAlerts"] == 0 and first["externalURL"].startswith("http")
    assert first["commonLabels"]["alertname"] == "HighErrorRate" and first["commonLabels"]["namespace"] == NS
    assert first["commonLabels"]["severity"] == "critical"
    services = {a["labels"]["service"] for a in first["alerts"]}
    assert services <= {"checkout", "frontend"} and services
    alert = first["alerts"][0]
    assert set(alert) == {"status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"}
    assert alert["status"] == "firing" and alert["endsAt"] == "0001-01-01T00:00:00Z"
    assert alert["fingerprint"] == fingerprint(alert["labels"])
    assert "5xx" in alert["annotations"]["summary"] and "%" in alert["annotations"]["summary"]
    assert "g0.expr=" in alert["generatorURL"]
    assert receiver.headers[0]["Content-Type"] == "application/json"

    s.set_selector(NS, "payments", {"app": "payments"})
    s.advance(180)
    assert s.tel.alertmanager.notifier.flush()
    last = receiver.payloads[-1]
    assert last["status"] == "resolved"
    assert all(a["status"] == "resolved" and a["endsAt"] != "0001-01-01T00:00:00Z" for a in last["alerts"])
    status, _, body = admin.handle(s.cluster, "GET", f"/kubesim/v1/namespaces/{NS}/notifications")
    sent = json.loads(body)["notifications"]
    assert status == 200 and len(sent) == len(receiver.payloads)
    assert all(n["delivered"] for n in sent)


def test_group_wait_and_repeat_interval_run_on_the_simulated_clock(receiver):
    s = ShopSim(rules=None)
    s.set_rules(NS, """
groups:
  - name: always
    rules:
      - alert: Always
        expr: vector(1)
""", receiver.url, group_wait="1m", repeat_interval="10m")
    s.advance(45)
    assert s.tel.alertmanager.notifier.flush() and receiver.payloads == []
    s.advance(30)
    assert s.tel.alertmanager.notifier.flush() and len(receiver.payloads) == 1
    s.advance(300)
    assert s.tel.alertmanager.notifier.flush() and len(receiver.payloads) == 1
    s.advance(330)
    assert s.tel.alertmanager.notifier.flush() and len(receiver.payloads) == 2
    assert receiver.payloads[1]["alerts"][0]["startsAt"] == receiver.payloads[0]["alerts"][0]["startsAt"]


def test_unreachable_receiver_is_recorded_not_raised():
    s = ShopSim(rules=None)
    s.tel.alertmanager.notifier.retries = 1
    s.set_rules(NS, "groups: [{name: g, rules: [{alert: A, expr: vector(1)}]}]", "http://127.0.0.1:9/hook")
    s.advance(30)
    assert s.tel.alertmanager.notifier.flush(20)
    sent = s.tel.alertmanager.sent[NS]
    assert sent and sent[0].delivered is False and sent[0].error


def test_fingerprint_matches_alertmanager():
    assert fingerprint({}) == "cbf29ce484222325"  # FNV-1a 64 offset basis: Alertmanager's empty label set
    assert fingerprint({"a": "b"}) == fingerprint({"a": "b"}) != fingerprint({"a": "c"})
    assert len(fingerprint({"alertname": "X", "namespace": "n"})) == 16
