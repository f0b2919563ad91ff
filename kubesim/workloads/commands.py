"""A tiny shell for busybox-like images: a container's behaviour comes from its command.

Scripts run in virtual time: ``sleep`` advances the clock, ``echo`` writes a line, ``exit`` ends
the container. ``while true`` loops become periodic log lines, ``until nslookup db`` loops block
until the Service exists (the kubelet resumes the rest of the script when it appears). Anything
unknown behaves like a missing binary in busybox (``sh: foo: not found``, status 127).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

SHELLS = {"sh", "bash", "ash", "dash", "zsh"}
BUILTINS = {"sleep", "echo", "printf", "exit", "true", "false", ":", "cat", "env", "printenv", "hostname",
            "date", "nslookup", "wget", "curl", "tail", "ls", "mkdir", "touch", "cd", "export", "set", "test", "[",
            "nc", "ping", "wait", "trap", "rm", "cp", "mv", "chmod", "id", "whoami", "uname", "pwd"}
DNS_SERVER = "10.96.0.10"


@dataclass
class ScriptContext:
    env: dict[str, str]
    files: dict[str, str]
    hostname: str
    namespace: str
    resolve: Callable[[str], str | None]  # service host → cluster IP (None: NXDOMAIN)
    date: Callable[[float], str] = lambda t: ""


@dataclass
class Outcome:
    kind: str  # "exit" | "forever" | "blocked"
    end: float  # offset (seconds from start) where the run exits, loops forever, or blocks
    exit_code: int = 0
    lines: list[tuple[float, str]] = field(default_factory=list)
    periodic: tuple[float, float, str] | None = None  # (start offset, period, template)
    blocked_on: str | None = None
    rest: list[Any] = field(default_factory=list)


class _Stop(Exception):
    def __init__(self, kind: str, code: int = 0, periodic=None, blocked_on=None, rest=None):
        self.kind, self.code, self.periodic, self.blocked_on, self.rest = kind, code, periodic, blocked_on, rest or []


# -- parsing --------------------------------------------------------------------------------

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$\((hostname|date)\)")


def _expand_vars(script: str, ctx: ScriptContext) -> str:
    """$VAR / ${VAR} / $(hostname) outside single quotes (shlex drops the quoting later)."""
    out, quoted = [], False
    for part in re.split(r"(')", script):
        if part == "'":
            quoted = not quoted
            out.append(part)
        elif quoted:
            out.append(part)
        else:
            def sub(m: re.Match[str]) -> str:
                if m.group(3) == "hostname":
                    return ctx.hostname
                if m.group(3) == "date":
                    return ctx.date(0.0)
                return ctx.env.get(m.group(1) or m.group(2), "")
            out.append(_VAR.sub(sub, part))
    return "".join(out)


def tokenize(script: str) -> list[str]:
    lex = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=";&|")
    lex.whitespace_split = True
    lex.commenters = "#"
    return list(lex)


def parse(tokens: list[str]) -> list[Any]:
    """Tokens → [(connector, node)], node = ("cmd", argv) | ("loop", "while"|"until", cond, body)."""
    items, _ = _parse_list(tokens, 0, ())
    return items


def _parse_list(tokens: list[str], i: int, stops: tuple[str, ...]) -> tuple[list[Any], int]:
    items: list[Any] = []
    connector = ";"
    while i < len(tokens):
        tok = tokens[i]
        if tok in stops:
            return items, i
        if tok in (";", "&", "&&", "||", "|", ";;"):
            connector = {"&": ";", ";;": ";"}.get(tok, tok)
            i += 1
            continue
        if tok in ("while", "until"):
            cond, i = _parse_list(tokens, i + 1, ("do",))
            body, i = _parse_list(tokens, i + 1, ("done",))
            items.append((connector, ("loop", tok, cond, body)))
            i += 1
        else:
            argv = []
            while i < len(tokens) and tokens[i] not in (";", "&", "&&", "||", "|", ";;") and tokens[i] not in stops:
                argv.append(tokens[i])
                i += 1
            if argv:
                items.append((connector, ("cmd", argv)))
        connector = ";"
    return items, i


# -- execution ------------------------------------------------------------------------------

def _sleep_seconds(arg: str) -> float | None:
    if arg in ("infinity", "inf"):
        return None
    m = re.fullmatch(r"([0-9.]+)([smhd]?)", arg)
    if not m:
        return 0.0
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def _service_host(target: str) -> str:
    host = re.sub(r"^[a-z]+://", "", target).split("/", 1)[0]
    return host.rsplit(":", 1)[0] if ":" in host else host


class _Machine:
    def __init__(self, ctx: ScriptContext):
        self.ctx = ctx
        self.t = 0.0
        self.lines: list[tuple[float, str]] = []

    def emit(self, text: str) -> None:
        for line in text.split("\n"):
            self.lines.append((round(self.t, 3), line))

    def run_list(self, items: list[Any]) -> int:
        status = 0
        for idx, (connector, node) in enumerate(items):
            if connector == "&&" and status != 0 or connector == "||" and status == 0:
                continue
            if connector == "|":
                continue  # the pipe consumer: output already written by the producer
            if node[0] == "loop":
                status = self.run_loop(node, items[idx + 1:])
            else:
                status = self.run_cmd(node[1])
        return status

    def run_loop(self, node: Any, rest: list[Any]) -> int:
        _, kind, cond, body = node
        probe = _Machine(self.ctx)
        ok = probe.run_list(cond) == 0
        if ok == (kind == "while"):
            # one iteration tells us what each round prints and how long it takes
            it = _Machine(self.ctx)
            it.t = 0.0
            it.lines = []
            try:
                it.run_list(body)
            except _Stop as stop:
                if stop.kind == "exit":
                    self.lines.extend((round(self.t + t, 3), s) for t, s in probe.lines + it.lines)
                    self.t += it.t
                    raise
            period = max(it.t, 0.0)
            self.lines.extend((round(self.t + t, 3), s) for t, s in probe.lines + it.lines)  # the first round
            text = "\n".join(s for _, s in probe.lines + it.lines)
            periodic = (self.t, period, text) if period > 0 and text else None
            target = self._dependency(cond)
            if target is not None:
                raise _Stop("blocked", periodic=periodic, blocked_on=target, rest=rest)
            raise _Stop("forever", periodic=periodic)
        self.lines.extend((round(self.t, 3), s) for _, s in probe.lines)
        return 0

    def _dependency(self, cond: list[Any]) -> str | None:
        for _, n in cond:
            if n[0] == "cmd" and n[1][0] in ("nslookup", "wget", "curl", "nc", "ping") and len(n[1]) > 1:
                args = [a for a in n[1][1:] if not a.startswith("-")]
                if args:
                    return _service_host(args[0])
        return None

    def run_cmd(self, argv: list[str]) -> int:
        ctx = self.ctx
        while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
            k, v = argv[0].split("=", 1)
            ctx.env[k] = v
            argv = argv[1:]
        if not argv:
            return 0
        name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
        if name in SHELLS:
            if "-c" in args and args.index("-c") + 1 < len(args):
                return self.run_list(parse(tokenize(_expand_vars(args[args.index("-c") + 1], ctx))))
            return 0  # an interactive shell without a terminal reads EOF and exits
        if name == "sleep":
            secs = _sleep_seconds(args[0]) if args else 0.0
            if secs is None:
                raise _Stop("forever")
            self.t += secs
            return 0
        if name in ("echo", "printf"):
            words = [a for a in args if a not in ("-n", "-e")]
            self.emit(" ".join(words).replace("\\n", "\n").rstrip("\n") if name == "printf" else " ".join(words))
            return 0
        if name == "exit":
            code = int(args[0]) if args and args[0].lstrip("-").isdigit() else 0
            raise _Stop("exit", code=code % 256)
        if name in ("true", ":", "ls", "mkdir", "touch", "cd", "set", "wait", "trap", "rm", "cp", "mv", "chmod"):
            return 0
        if name == "false":
            return 1
        if name == "export":
            for a in args:
                if "=" in a:
                    k, v = a.split("=", 1)
                    ctx.env[k] = v
            return 0
        if name in ("env", "printenv"):
            if name == "printenv" and args:
                if args[0] in ctx.env:
                    self.emit(ctx.env[args[0]])
                    return 0
                return 1
            for k in sorted(ctx.env):
                self.emit(f"{k}={ctx.env[k]}")
            return 0
        if name == "hostname":
            self.emit(ctx.hostname)
            return 0
        if name in ("id", "whoami", "uname", "pwd"):
            self.emit({"id": "uid=0(root) gid=0(root) groups=0(root),10(wheel)", "whoami": "root",
                       "uname": "Linux", "pwd": "/"}[name])
            return 0
        if name == "date":
            self.emit(ctx.date(self.t))
            return 0
        if name == "cat":
            status = 0
            for path in (a for a in args if not a.startswith("-")):
                if path in ctx.files:
                    self.emit(ctx.files[path].rstrip("\n"))
                else:
                    self.emit(f"cat: can't open '{path}': No such file or directory")
                    status = 1
            return status
        if name == "tail" and "-f" in args:
            raise _Stop("forever")
        if name in ("test", "["):
            return self.run_test([a for a in args if a != "]"])
        if name in ("nslookup", "wget", "curl", "nc", "ping"):
            return self.run_network(name, [a for a in args if not a.startswith("-")])
        self.emit(f"sh: {name}: not found")
        return 127

    def run_test(self, args: list[str]) -> int:
        if len(args) == 2 and args[0] in ("-f", "-e", "-r", "-s"):
            return 0 if args[1] in self.ctx.files else 1
        if len(args) == 2 and args[0] == "-n":
            return 0 if args[1] else 1
        if len(args) == 2 and args[0] == "-z":
            return 0 if not args[1] else 1
        if len(args) == 3 and args[1] in ("=", "=="):
            return 0 if args[0] == args[2] else 1
        if len(args) == 3 and args[1] == "!=":
            return 0 if args[0] != args[2] else 1
        return 0 if args and args[0] else 1

    def run_network(self, name: str, args: list[str]) -> int:
        if not args:
            return 1
        host = _service_host(args[0])
        ip = self.ctx.resolve(host)
        fqdn = cluster_fqdn(host, self.ctx.namespace)
        if name == "nslookup":
            self.emit(f"Server:\t\t{DNS_SERVER}\nAddress:\t{DNS_SERVER}:53\n")
            self.emit(f"Name:\t{fqdn}\nAddress: {ip}\n" if ip else f"** server can't find {fqdn}: NXDOMAIN\n")
            return 0 if ip else 1
        if ip:
            return 0
        self.emit({"wget": f"wget: bad address '{args[0].split('://')[-1].split('/')[0]}'",
                   "curl": f"curl: (6) Could not resolve host: {host}",
                   "nc": f"nc: bad address '{host}'",
                   "ping": f"ping: bad address '{host}'"}[name])
        return 1


def cluster_fqdn(host: str, namespace: str) -> str:
    """The name the cluster DNS search path turns ``host`` into (external names stay as they are)."""
    parts = host.split(".")
    if len(parts) == 1:
        return f"{host}.{namespace}.svc.cluster.local"
    if len(parts) == 2:
        return f"{host}.svc.cluster.local"
    if len(parts) == 3 and parts[2] == "svc":
        return f"{host}.cluster.local"
    return host


def _outcome(m: _Machine, fn: Callable[[], int]) -> Outcome:
    try:
        code = fn()
        return Outcome("exit", round(m.t, 3), code, m.lines)
    except _Stop as stop:
        return Outcome(stop.kind, round(m.t, 3), stop.code, m.lines, stop.periodic, stop.blocked_on, stop.rest)
    except (ValueError, IndexError) as e:  # unparseable script: the shell reports a syntax error
        m.emit(f"sh: syntax error: {e}")
        return Outcome("exit", round(m.t, 3), 2, m.lines)


def run_argv(argv: list[str], ctx: ScriptContext) -> Outcome:
    """Run a container's argv (a shell, a builtin, or a script) from time 0."""
    m = _Machine(ctx)
    return _outcome(m, lambda: m.run_cmd(list(argv)))


def resume(rest: list[Any], ctx: ScriptContext) -> Outcome:
    """Continue a blocked script with the statements after the loop that blocked it."""
    m = _Machine(ctx)
    return _outcome(m, lambda: m.run_list(rest))


def is_known_binary(name: str) -> bool:
    return name.rsplit("/", 1)[-1] in SHELLS | BUILTINS
