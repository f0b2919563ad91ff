"""``python -m kubesim serve [--port N] [--kubeconfig PATH] [--time-scale X] [--seed N]``

Serves a fresh simulated cluster over HTTPS until SIGINT/SIGTERM, after writing a kubeconfig
(cluster with its CA, admin user with a bearer token, context ``kubesim``, namespace ``default``)
for kubectl and clients. ``--http-port`` adds a plain-HTTP listener (tokens still required).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Sequence

import yaml

from .auth import Authenticator
from .build import build_cluster
from .embedded import bind_socket, make_servers, request_exit, serve_all
from .kubeconfig import write_kubeconfig
from .server import KubeApp
from .tls import serving_cert

DEFAULT_KUBECONFIG = "~/.kube/kubesim.yaml"


def _load_profiles(paths: Sequence[str]) -> list[dict]:
    docs: list[dict] = []
    for p in paths:
        docs.extend(d for d in yaml.safe_load_all(Path(p).read_text()) if d)
    return docs


async def _serve_until_signalled(app: KubeApp, servers: list) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, request_exit, app, servers)
    try:
        await serve_all(servers)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def serve(args: argparse.Namespace) -> int:
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cluster = build_cluster(time_scale=args.time_scale, seed=args.seed, profiles=_load_profiles(args.profiles))
    tls_sock = bind_socket(args.host, args.port)
    plain_sock = bind_socket(args.host, args.http_port) if args.http_port is not None else None
    client_host = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
    port = tls_sock.getsockname()[1]
    auth = Authenticator(cluster.store, admin_token=args.token)
    app = KubeApp(cluster, auth, server_address=f"{client_host}:{port}")
    cert = serving_cert(tuple(dict.fromkeys((client_host, "127.0.0.1"))))
    url = f"https://{client_host}:{port}"
    path = write_kubeconfig(args.kubeconfig, url, auth.admin_token, ca_pem=cert.ca_pem)
    servers = make_servers(app, tls_sock, cert, plain_sock, access_log=args.access_log)
    extra = f"  plain http: http://{client_host}:{plain_sock.getsockname()[1]}" if plain_sock else ""
    print(f"kubesim serving {url}  kubeconfig: {path}{extra}", flush=True)
    asyncio.run(_serve_until_signalled(app, servers))
    print("kubesim stopped", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kubesim", description="A simulated Kubernetes API server.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve a fresh simulated cluster until interrupted")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=0, help="HTTPS port (default: a free port)")
    s.add_argument("--http-port", type=int, default=None, help="also serve plain HTTP on this port (0 = free port)")
    s.add_argument("--kubeconfig", default=DEFAULT_KUBECONFIG,
                   help=f"kubeconfig to write (default {DEFAULT_KUBECONFIG})")
    s.add_argument("--time-scale", type=float, default=1.0, help="simulated seconds per real second (0 = frozen)")
    s.add_argument("--seed", type=int, default=0, help="seed for names, uids and fault draws")
    s.add_argument("--profiles", action="append", default=[], metavar="YAML",
                   help="extra workload profile file(s) to register")
    s.add_argument("--token", default=None, help="admin bearer token (default: random)")
    s.add_argument("--access-log", action="store_true", help="log every request")
    s.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    if args.time_scale < 0:
        parser.error("--time-scale must be >= 0")
    for name in ("port", "http_port"):
        value = getattr(args, name)
        if value is not None and not 0 <= value <= 65535:
            parser.error(f"--{name.replace('_', '-')} must be between 0 and 65535")
    try:
        return serve(args)
    except OSError as e:
        print(f"kubesim: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
