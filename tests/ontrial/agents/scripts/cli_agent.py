"""A small CLI agent for the command adapter's tests: MCP tools and kubectl through the proxy.

Usage: cli_agent.py <behaviour>. Behaviours: fix, misbehave, loop, sleep. Everything it needs
comes from the environment the adapter sets (ONTRIAL_MCP_URL, KUBECONFIG, ONTRIAL_RESULT_FILE).
"""

import asyncio
import json
import os
import subprocess
import sys
import time


def kubectl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", *args], capture_output=True, text=True, timeout=30)


async def mcp_calls(*calls):
    from mcp import Client

    out = []
    async with Client(os.environ["ONTRIAL_MCP_URL"]) as client:
        for name, args in calls:
            result = await client.call_tool(name, args)
            out.append((result.is_error, result.content[0].text if result.content else ""))
    return out


def spawn_child() -> None:
    """A grandchild that would outlive a careless harness; its pid goes to $CHILD_PID_FILE."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open(os.environ.get("CHILD_PID_FILE", "child.pid"), "w") as f:
        f.write(str(child.pid))


def fix() -> None:
    prompt = open(os.environ["ONTRIAL_PROMPT_FILE"]).read()
    assert "KubeDeploymentRolloutStuck" in prompt and os.path.exists("mcp.json")
    [(err, events)] = asyncio.run(mcp_calls(("get_events", {"type": "Warning"})))
    pods = kubectl("get", "pods", "-o", "json")
    stuck = [p["metadata"]["name"] for p in json.loads(pods.stdout)["items"]
             if any((cs.get("state") or {}).get("waiting", {}).get("reason", "").startswith(("ImagePull", "ErrImage"))
                    for cs in p["status"].get("containerStatuses") or [])]
    undo = kubectl("rollout", "undo", "deployment/web")
    print("progress: rolled back" if undo.returncode == 0 else f"progress: undo failed {undo.stderr}")
    result = {"diagnosis": {"root_cause": ["bad-image-tag"], "causal_service": "web",
                            "mitigation": "kubectl rollout undo deployment/web",
                            "mitigation_applied": undo.returncode == 0, "evidence": stuck},
              "text": f"pods {stuck} could not pull their image; {len(events)} bytes of warning events",
              "usage": {"input_tokens": 300, "output_tokens": 50}}
    with open(os.environ["ONTRIAL_RESULT_FILE"], "w") as f:
        json.dump(result, f)


def misbehave() -> None:
    namespace = os.environ["ONTRIAL_NAMESPACE"]
    attempts = {
        "delete_namespace": kubectl("delete", "namespace", namespace, "--wait=false"),
        "other_namespace": kubectl("-n", "kube-system", "get", "pods"),
        "secrets": kubectl("get", "secrets"),
    }
    [(err, text)] = asyncio.run(mcp_calls(("delete", {"kind": "deployment", "name": "web"})))
    for name, done in attempts.items():
        print(f"{name}: rc={done.returncode} {done.stderr.strip()}")
    print(f"mcp delete: error={err} {text}")
    print("The web rollout is stuck on a missing image tag (bad-image-tag); I tried a few things.")


def loop() -> None:
    spawn_child()
    while True:
        kubectl("get", "pods")


def sleep() -> None:
    spawn_child()
    time.sleep(300)


if __name__ == "__main__":
    {"fix": fix, "misbehave": misbehave, "loop": loop, "sleep": sleep}[sys.argv[1]]()
