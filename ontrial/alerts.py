"""Alerts as agents receive them: an explicit alert, or an Alertmanager (v4 webhook) payload."""

from __future__ import annotations

from typing import Any


def alert_labels(alert: dict[str, Any] | None) -> dict[str, str]:
    """Labels of an explicit alert, or of the first firing alert in an Alertmanager v4 payload
    (merged over the payload's common labels)."""
    alert = alert or {}
    if isinstance(alert.get("alerts"), list):
        firing = [a for a in alert["alerts"] if isinstance(a, dict) and a.get("status", "firing") == "firing"]
        merged = {**(alert.get("commonLabels") or {}), **((firing[0].get("labels") or {}) if firing else {})}
        return {k: str(v) for k, v in merged.items()}
    labels = {k: str(v) for k, v in (alert.get("labels") or {}).items()}
    if "alertname" not in labels and alert.get("name"):
        labels["alertname"] = str(alert["name"])
    return labels


def firing_services(alert: dict[str, Any] | None) -> set[str]:
    """Every ``service`` label among the firing alerts (an Alertmanager group may carry several)."""
    alert = alert or {}
    if isinstance(alert.get("alerts"), list):
        return {str(a["labels"]["service"]) for a in alert["alerts"]
                if isinstance(a, dict) and a.get("status") == "firing" and (a.get("labels") or {}).get("service")}
    service = (alert.get("labels") or {}).get("service")
    return {str(service)} if service else set()
