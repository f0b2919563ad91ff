"""Workload profiles: how a simulated image behaves, as data keyed by image repository and tag.

A profile answers the questions a real node answers by running the image: does the tag exist,
how long until it listens, which paths answer, how much memory it holds and how fast that grows,
which environment and files it insists on, what it logs, and how it exits. The kubelet reads
profiles; tasks add their own with ``ProfileRegistry.register``. Document fields (all optional
except ``image``):

    image: shop/api                # repository; docker.io/library prefixes are normalised away
    tags: ["1.0", "1.1"]           # tags the simulated registry has ("*" = any); others → ErrImagePull
    pull_seconds, image_size_bytes, startup_seconds, fatal_after_seconds
    ports: [8080]                  # what tcp/http probes can reach once started (omitted: any port)
    http_paths: ["/", "/healthz"]  # paths answering 200 (omitted: every path); others → 404
    readiness: {path, port, depends_on: [svc | svc.ns]}   # deps need ready endpoints, else 503
    memory: {working_set_mi, growth_mi_per_min}            # above limits.memory → OOMKilled (137)
    cpu: {millicores}                                      # a lower CPU limit stretches start-up
    requires_env: [NAME | {name, pattern}]                 # missing/invalid → FATAL line, exit 1
    requires_files: [/etc/app/config.yaml]                 # from ConfigMap/Secret volume mounts
    logs: {starting, ready, running, running_period_seconds, completion, shutdown,
           fatal_missing_env, fatal_invalid_env, fatal_missing_file, dependency_unavailable}
    exit_codes: {missing_env, invalid_env, missing_file, sigterm}
    completion: {duration_seconds, exit_code}              # run-to-completion (Job) images
    command_driven: true, default_command: [sh]            # busybox-like: behaviour from the command
    entrypoints: [/app/api]        # binaries the image has; another command → StartError (128)

Log templates may use {time}, {now:%Y/%m/%d %H:%M:%S}, {clf_time}, {pod}, {namespace},
{container}, {pod_ip}, {node}, {image}, {tag}, {port}, {env[NAME]} and seeded randoms {ms},
{us}, {bytes}, {rand}, {status}, {port_ephemeral}; fatal messages use {name}, {value}, {path}.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from importlib import resources as importlib_resources
from typing import Any, Mapping

import yaml

from .fields import ProfileError, Reader as _Reader


# -- value types ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Readiness:
    path: str | None = None
    port: int | None = None
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Memory:
    working_set_mi: float = 16.0
    growth_mi_per_min: float = 0.0


@dataclass(frozen=True)
class EnvRequirement:
    name: str
    pattern: str | None = None  # a regex the value must match in full


@dataclass(frozen=True)
class Completion:
    duration_seconds: float = 5.0
    exit_code: int = 0


@dataclass(frozen=True)
class Logs:
    starting: tuple[str, ...] = ()
    ready: tuple[str, ...] = ()
    running: tuple[str, ...] = ()
    running_period_seconds: float = 30.0
    completion: tuple[str, ...] = ()
    shutdown: tuple[str, ...] = ()
    fatal_missing_env: str = "FATAL: required environment variable {name} is not set"
    fatal_invalid_env: str = "FATAL: invalid value for environment variable {name}: {value!r}"
    fatal_missing_file: str = "FATAL: open {path}: no such file or directory"
    dependency_unavailable: str = "dependency {name} is not ready"


@dataclass(frozen=True)
class ExitCodes:
    missing_env: int = 1
    invalid_env: int = 1
    missing_file: int = 1
    sigterm: int = 137  # most apps ignore SIGTERM as PID 1 and are killed after the grace period


@dataclass(frozen=True)
class Profile:
    image: str  # normalised repository, e.g. "nginx", "shop/api", "registry.k8s.io/pause"
    tags: tuple[str, ...] = ("latest",)
    description: str = ""
    pull_seconds: float | None = None
    image_size_bytes: int | None = None
    startup_seconds: float = 0.0
    ports: tuple[int, ...] = ()
    http_paths: tuple[str, ...] | None = None  # None: every path answers 200
    readiness: Readiness | None = None
    memory: Memory = field(default_factory=Memory)
    cpu_millicores: float = 5.0
    requires_env: tuple[EnvRequirement, ...] = ()
    requires_files: tuple[str, ...] = ()
    logs: Logs = field(default_factory=Logs)
    exit_codes: ExitCodes = field(default_factory=ExitCodes)
    completion: Completion | None = None
    command_driven: bool = False
    default_command: tuple[str, ...] = ()
    entrypoints: tuple[str, ...] = ()
    fatal_after_seconds: float = 0.5
    telemetry: Mapping[str, Any] | None = None  # service-graph behaviour, read by kubesim.telemetry

    def has_tag(self, tag: str) -> bool:
        return "*" in self.tags or tag in self.tags

    def serves_path(self, path: str) -> bool:
        if self.readiness and self.readiness.path and path == self.readiness.path:
            return True
        return self.http_paths is None or path in self.http_paths

    def pull_duration(self, image: str) -> float:
        if self.pull_seconds is not None:
            return self.pull_seconds
        return round(0.8 + (_digest_int(image) % 2400) / 1000.0, 3)

    def size_bytes(self, image: str) -> int:
        if self.image_size_bytes is not None:
            return self.image_size_bytes
        return 5_000_000 + _digest_int(image + "/size") % 90_000_000


def _digest_int(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


# -- image references ------------------------------------------------------------------------

@dataclass(frozen=True)
class ImageRef:
    repository: str  # normalised: docker.io/library prefixes removed
    tag: str | None
    digest: str | None

    @property
    def full_name(self) -> str:
        """The fully qualified name containerd reports, e.g. docker.io/library/nginx:1.25."""
        repo = self.repository
        first = repo.split("/", 1)[0]
        if not _is_registry_host(first) or "/" not in repo:
            repo = f"docker.io/{repo}" if "/" in repo else f"docker.io/library/{repo}"
        if self.digest:
            return f"{repo}@{self.digest}"
        return f"{repo}:{self.tag or 'latest'}"


def _is_registry_host(component: str) -> bool:
    return "." in component or ":" in component or component == "localhost"


def parse_image(image: str) -> ImageRef:
    """Split "registry/repo/name:tag@sha256:..." into a normalised repository, tag and digest."""
    text = (image or "").strip()
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
    tag = None
    last = text.rsplit("/", 1)[-1]
    if ":" in last:
        text, tag = text.rsplit(":", 1)
    parts = text.split("/")
    if len(parts) > 1 and parts[0] in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        parts = parts[1:]
    if len(parts) > 1 and parts[0] == "library" and not _is_registry_host(parts[0]):
        parts = parts[1:]
    return ImageRef("/".join(parts).lower(), tag, digest)


def effective_tag(ref: ImageRef) -> str:
    return ref.tag or "latest"


# -- parsing --------------------------------------------------------------------------------

_TOP_FIELDS = {"image", "tags", "description", "pull_seconds", "image_size_bytes", "startup_seconds", "ports",
               "http_paths", "readiness", "memory", "cpu", "requires_env", "requires_files", "logs", "exit_codes",
               "completion", "command_driven", "default_command", "entrypoints", "fatal_after_seconds",
               "telemetry"}


def _parse_env(r: _Reader) -> tuple[EnvRequirement, ...]:
    value = r.data.get("requires_env", [])
    if not isinstance(value, (list, tuple)):
        raise r.fail("requires_env", "must be a list of names or {name, pattern} mappings")
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str) and item:
            out.append(EnvRequirement(item))
            continue
        if not isinstance(item, Mapping):
            raise r.fail(f"requires_env[{i}]", f"must be a name or a {{name, pattern}} mapping, got {item!r}")
        sub = _Reader(r.image, item, r._path(f"requires_env[{i}]"), ("name", "pattern"))
        name = sub.string("name", None)
        if not name:
            raise sub.fail("name", "required")
        pattern = sub.string("pattern", None)
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as e:
                raise sub.fail("pattern", f"invalid regular expression: {e}") from None
        out.append(EnvRequirement(name, pattern))
    return tuple(out)


def _parse_logs(r: _Reader) -> Logs:
    d = Logs()
    sub = r.child("logs", Logs.__dataclass_fields__)
    if sub is None:
        return d
    return Logs(
        starting=sub.strings("starting"),
        ready=sub.strings("ready"),
        running=sub.strings("running"),
        running_period_seconds=sub.number("running_period_seconds", d.running_period_seconds, 0.1),
        completion=sub.strings("completion"),
        shutdown=sub.strings("shutdown"),
        fatal_missing_env=sub.string("fatal_missing_env", d.fatal_missing_env),
        fatal_invalid_env=sub.string("fatal_invalid_env", d.fatal_invalid_env),
        fatal_missing_file=sub.string("fatal_missing_file", d.fatal_missing_file),
        dependency_unavailable=sub.string("dependency_unavailable", d.dependency_unavailable),
    )


def parse_profile(data: Mapping[str, Any]) -> Profile:
    """Validate a profile document (YAML/JSON mapping) into a Profile."""
    if not isinstance(data, Mapping):
        raise ProfileError("?", "(document)", f"must be a mapping, got {type(data).__name__}")
    image_value = data.get("image")
    if not isinstance(image_value, str) or not image_value.strip():
        raise ProfileError("?", "image", "required (a repository name such as shop/api)")
    ref = parse_image(image_value)
    if ref.tag or ref.digest:
        raise ProfileError(image_value, "image", "must be a repository without tag or digest; list tags in 'tags'")
    image = ref.repository
    r = _Reader(image, data, "", _TOP_FIELDS)
    tags = r.strings("tags", ("latest",))
    if not tags:
        raise r.fail("tags", "must list at least one tag (or \"*\" for any)")

    readiness = None
    rd = r.child("readiness", ("path", "port", "depends_on"))
    if rd is not None:
        path = rd.string("path", None)
        if path is not None and not path.startswith("/"):
            raise rd.fail("path", f"must start with '/', got {path!r}")
        readiness = Readiness(path, rd.integer("port", None, 1, 65535), rd.strings("depends_on"))

    mem = Memory()
    md = r.child("memory", ("working_set_mi", "growth_mi_per_min"))
    if md is not None:
        mem = Memory(md.number("working_set_mi", mem.working_set_mi), md.number("growth_mi_per_min", 0.0))

    cpu = 5.0
    cd = r.child("cpu", ("millicores",))
    if cd is not None:
        cpu = cd.number("millicores", cpu)

    ec = ExitCodes()
    ed = r.child("exit_codes", ExitCodes.__dataclass_fields__)
    if ed is not None:
        ec = ExitCodes(*(ed.integer(k, getattr(ec, k), 0, 255) for k in ExitCodes.__dataclass_fields__))

    completion = None
    cm = r.child("completion", ("duration_seconds", "exit_code"))
    if cm is not None:
        completion = Completion(cm.number("duration_seconds", 5.0), cm.integer("exit_code", 0, 0, 255))

    size = r.integer("image_size_bytes", None, 0)
    return Profile(
        image=image,
        tags=tags,
        description=r.string("description", "") or "",
        pull_seconds=r.number("pull_seconds", None),
        image_size_bytes=size,
        startup_seconds=r.number("startup_seconds", 0.0),
        ports=r.ints("ports"),
        http_paths=r.strings("http_paths", None),
        readiness=readiness,
        memory=mem,
        cpu_millicores=cpu,
        requires_env=_parse_env(r),
        requires_files=r.strings("requires_files"),
        logs=_parse_logs(r),
        exit_codes=ec,
        completion=completion,
        command_driven=r.boolean("command_driven", False),
        default_command=r.strings("default_command"),
        entrypoints=r.strings("entrypoints"),
        fatal_after_seconds=r.number("fatal_after_seconds", 0.5),
        telemetry=r.mapping("telemetry"),
    )


# -- registry -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Resolution:
    """What the simulated registry says about an image reference."""

    profile: Profile | None
    ref: ImageRef
    problem: str | None  # None | "unknown_repository" | "unknown_tag"


class ProfileRegistry:
    """Profiles by (repository, tag); a profile listing "*" answers for any tag of its repository."""

    def __init__(self) -> None:
        self._by_tag: dict[tuple[str, str], Profile] = {}
        self._any_tag: dict[str, Profile] = {}
        self._first: dict[str, Profile] = {}

    @classmethod
    def builtin(cls) -> "ProfileRegistry":
        reg = cls()
        for doc in load_builtin_documents():
            reg.register(doc)
        return reg

    def register(self, profile: Profile | Mapping[str, Any]) -> Profile:
        """Add a profile (later registrations win for the tags they list)."""
        p = profile if isinstance(profile, Profile) else parse_profile(profile)
        for tag in p.tags:
            if tag == "*":
                self._any_tag[p.image] = p
            else:
                self._by_tag[(p.image, tag)] = p
        self._first.setdefault(p.image, p)
        return p

    def resolve(self, image: str) -> Resolution:
        ref = parse_image(image)
        repo = ref.repository
        known = repo in self._first
        if not known:
            return Resolution(None, ref, "unknown_repository")
        if ref.tag is None and ref.digest:
            p = self._by_tag.get((repo, "latest")) or self._any_tag.get(repo) or self._first[repo]
            return Resolution(p, ref, None)
        p = self._by_tag.get((repo, effective_tag(ref))) or self._any_tag.get(repo)
        return Resolution(p, ref, None if p else "unknown_tag")

    def lookup(self, image: str) -> Profile | None:
        return self.resolve(image).profile

    def images(self) -> list[str]:
        return sorted(self._first)

    def tags(self, repository: str) -> list[str]:
        repo = parse_image(repository).repository
        tags = {t for (r, t) in self._by_tag if r == repo}
        if repo in self._any_tag:
            tags.add("*")
        return sorted(tags)


def packaged_yaml_documents(package: str, folder: str) -> list[dict[str, Any]]:
    """Every YAML document in ``<package>/<folder>/*.yaml`` (one or more per file), files in name order."""
    docs: list[dict[str, Any]] = []
    root = importlib_resources.files(package).joinpath(folder)
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            docs.extend(d for d in yaml.safe_load_all(entry.read_text()) if d)
    return docs


def load_builtin_documents() -> list[dict[str, Any]]:
    """The profile documents shipped in kubesim/profiles/*.yaml."""
    return packaged_yaml_documents("kubesim", "profiles")
