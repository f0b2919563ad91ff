"""A small valid task tree written into tmp_path; tests mutate one file and read the error."""

from __future__ import annotations

from pathlib import Path

import pytest

# Line numbers matter: tests assert them. Keep this text stable (line 1 = schema_version).
BASE_TASK = """\
schema_version: 1
id: demo-task
title: Demo task
category: configuration
slices: {tier: core, difficulty: easy}
app:
  manifests: [../app/web.yaml]
  profiles: [../app/profiles.yaml]
fault:
  steps:
    - patch:
        kind: Deployment
        name: web
        patch: {spec: {replicas: 3}}
trigger:
  alert: {name: WebDown, labels: {service: web}}
ground_truth:
  root_cause: [scaled-wrong]
  causal_service: web
checks:
  outcome:
    - rollout_complete: {deployment: web}
    - pods_ready: {selector: app=web, min: 1}
budgets: {steps: 10}
reference_solution:
  actions:
    - {tool: scale, args: {kind: Deployment, name: web, replicas: 1}}
  diagnosis: {root_cause: [scaled-wrong], causal_service: web}
"""

WEB_YAML = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: demo/web:1.0
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""

PROFILES_YAML = """\
image: demo/web
tags: ["1.0"]
memory: {working_set_mi: 50}
"""


class TaskTree:
    """tmp_path/t/task.yaml + tmp_path/app/{web,profiles}.yaml; paths shown relative to tmp_path."""

    def __init__(self, root: Path):
        self.root = root
        self.write("t/task.yaml", BASE_TASK)
        self.write("app/web.yaml", WEB_YAML)
        self.write("app/profiles.yaml", PROFILES_YAML)

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.root / rel
        text = path.read_text()
        assert old in text, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, 1))


@pytest.fixture
def tree(tmp_path, monkeypatch) -> TaskTree:
    monkeypatch.chdir(tmp_path)
    return TaskTree(tmp_path)
