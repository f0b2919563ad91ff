"""Profiles: validation with field-naming errors, image reference normalisation, registry lookups."""

from __future__ import annotations

import pytest

from kubesim.workloads.profiles import ProfileError, ProfileRegistry, parse_image, parse_profile


def test_builtin_catalogue_loads_generic_images():
    reg = ProfileRegistry.builtin()
    for image in ("nginx:1.25", "busybox:1.36", "alpine:3.20", "redis:7", "postgres:16", "perl:5.34.0",
                  "hashicorp/http-echo:1.0", "kubesim/http-service:1.0", "registry.k8s.io/pause:3.9"):
        assert reg.lookup(image) is not None, image
    assert reg.lookup("busybox").command_driven
    assert reg.lookup("postgres:16").requires_env[0].name == "POSTGRES_PASSWORD"


@pytest.mark.parametrize("image,repo,tag,digest", [
    ("nginx", "nginx", None, None),
    ("nginx:1.25", "nginx", "1.25", None),
    ("docker.io/library/nginx:1.25", "nginx", "1.25", None),
    ("index.docker.io/shop/api:1.0", "shop/api", "1.0", None),
    ("registry.k8s.io/pause:3.9", "registry.k8s.io/pause", "3.9", None),
    ("localhost:5000/team/app", "localhost:5000/team/app", None, None),
    ("nginx@sha256:abcd", "nginx", None, "sha256:abcd"),
    ("nginx:1.25@sha256:abcd", "nginx", "1.25", "sha256:abcd"),
])
def test_parse_image_normalises_docker_hub_names(image, repo, tag, digest):
    ref = parse_image(image)
    assert (ref.repository, ref.tag, ref.digest) == (repo, tag, digest)


def test_full_name_is_what_containerd_reports():
    assert parse_image("nginx:1.25").full_name == "docker.io/library/nginx:1.25"
    assert parse_image("shop/api").full_name == "docker.io/shop/api:latest"
    assert parse_image("registry.k8s.io/pause:3.9").full_name == "registry.k8s.io/pause:3.9"


def test_lookup_distinguishes_unknown_tag_from_unknown_repository():
    reg = ProfileRegistry.builtin()
    assert reg.lookup("docker.io/library/nginx:1.25") is reg.lookup("nginx:1.25")
    assert reg.resolve("nginx:does-not-exist").problem == "unknown_tag"
    assert reg.resolve("nosuch/image:1").problem == "unknown_repository"
    assert reg.lookup("shop/api") is None  # no tag means latest, which shop/api does not publish
    assert reg.lookup("nginx@sha256:0123") is not None  # digests are tolerated


def test_register_task_profile_with_any_tag_and_per_tag_override():
    reg = ProfileRegistry()
    reg.register({"image": "acme/geo", "tags": ["*"], "ports": [8083]})
    assert reg.lookup("acme/geo:whatever").ports == (8083,)
    reg.register({"image": "acme/geo", "tags": ["app3"], "ports": [8083], "requires_env": ["MONGO_URL"]})
    assert reg.lookup("acme/geo:app3").requires_env[0].name == "MONGO_URL"
    assert reg.lookup("acme/geo:app1").requires_env == ()


def test_full_profile_document_round_trips():
    p = parse_profile({
        "image": "shop/api", "tags": ["1.0", 1.1], "startup_seconds": 2, "ports": [8080],
        "readiness": {"path": "/healthz", "port": 8080, "depends_on": ["db"]},
        "memory": {"working_set_mi": 180, "growth_mi_per_min": 5}, "cpu": {"millicores": 120},
        "requires_env": ["DB_URL", {"name": "PORT", "pattern": "[0-9]+"}], "requires_files": ["/etc/app/config.yaml"],
        "logs": {"running": ["listening"], "fatal_missing_env": "FATAL: required env {name} not set"},
        "exit_codes": {"missing_env": 2}, "completion": {"duration_seconds": 3, "exit_code": 0},
    })
    assert p.tags == ("1.0", "1.1")
    assert p.readiness.depends_on == ("db",)
    assert p.memory.growth_mi_per_min == 5
    assert p.requires_env[1].pattern == "[0-9]+"
    assert p.exit_codes.missing_env == 2 and p.exit_codes.invalid_env == 1
    assert p.completion.duration_seconds == 3


@pytest.mark.parametrize("doc,field", [
    ({"tags": ["1"]}, "image"),
    ({"image": "x:1"}, "image"),
    ({"image": "x", "startup": 3}, "startup"),
    ({"image": "x", "startup_seconds": "soon"}, "startup_seconds"),
    ({"image": "x", "ports": [80, 70000]}, "ports[1]"),
    ({"image": "x", "memory": {"working_set_mi": -1}}, "memory.working_set_mi"),
    ({"image": "x", "memory": {"workingset": 1}}, "memory.workingset"),
    ({"image": "x", "readiness": {"path": "healthz"}}, "readiness.path"),
    ({"image": "x", "requires_env": [{"pattern": "a"}]}, "requires_env[0].name"),
    ({"image": "x", "requires_env": [{"name": "A", "pattern": "("}]}, "requires_env[0].pattern"),
    ({"image": "x", "logs": {"running": "one line", "fatal": "x"}}, "logs.fatal"),
    ({"image": "x", "exit_codes": {"missing_env": 300}}, "exit_codes.missing_env"),
    ({"image": "x", "tags": []}, "tags"),
])
def test_invalid_documents_name_the_field(doc, field):
    with pytest.raises(ProfileError) as err:
        parse_profile(doc)
    assert err.value.field == field
    assert field in str(err.value)
