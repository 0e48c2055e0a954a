"""The hardening profile is a pure function: checked here without any daemon."""

from __future__ import annotations

import dataclasses

import docker
import pytest

from backends.docker import EngineKind, hardening_profile
from backends.docker.profile import FSIZE_SLACK, PIDS_OVERHEAD, TMP_MIN_INODES
from playground.core import DEFAULT_LIMITS, UNLIMITED, DockerSpec, Limits
from playground.packs import bash

SPEC = DockerSpec(image="x:1", cmd=("bash", "{main}"), main_file="main.sh")
LIMITS = DEFAULT_LIMITS.merged(Limits(memory=64 << 20, fs_quota=8 << 20, max_files=100, max_procs=20, cpu_time=2.5))
RESOLVED = LIMITS.validate()


def host(kind: EngineKind = EngineKind.DOCKER, limits: Limits = LIMITS) -> dict[str, object]:
    config = hardening_profile(limits.validate(), SPEC, kind)["host_config"]
    assert isinstance(config, dict)
    return config


def ulimits(config: dict[str, object]) -> dict[str, tuple[object, object]]:
    items = config["ulimits"]
    assert isinstance(items, list)
    return {u["name"]: (u["soft"], u["hard"]) for u in items}


def test_isolation_flags() -> None:
    config = host()
    assert config["read_only"] is True
    assert config["cap_drop"] == ["ALL"]
    assert config["security_opt"] == ["no-new-privileges"]
    assert config["privileged"] is False
    assert config["network_mode"] == "none"
    assert config["ipc_mode"] == "none"
    assert config["init"] is True
    assert config["binds"] == [] and config["devices"] == []
    assert "volumes" not in config and "cap_add" not in config and "pid_mode" not in config
    assert "docker.sock" not in repr(hardening_profile(RESOLVED, SPEC, EngineKind.DOCKER))
    assert config["log_config"] == {"type": "none", "config": {}}


def test_container_arguments() -> None:
    kwargs = hardening_profile(RESOLVED, SPEC, EngineKind.DOCKER)
    assert kwargs["user"] == "65534:65534"
    assert kwargs["working_dir"] == "/work"
    assert kwargs["network_disabled"] is True
    assert kwargs["tty"] is False


def test_resource_limits() -> None:
    config = host()
    assert config["mem_limit"] == 64 << 20
    assert config["memswap_limit"] == 64 << 20
    assert config["pids_limit"] == 20 + PIDS_OVERHEAD
    assert config["nano_cpus"] == 1_000_000_000
    limits = ulimits(config)
    assert limits["core"] == (0, 0)
    assert limits["fsize"] == ((8 << 20) + FSIZE_SLACK,) * 2
    assert limits["cpu"] == (3, 4)
    assert "nofile" in limits and "nproc" in limits


def test_tmpfs_docker_uses_uid_gid() -> None:
    tmpfs = host()["tmpfs"]
    assert isinstance(tmpfs, dict)
    assert set(tmpfs) == {"/in", "/work", "/out", "/tmp", "/dev/shm"}
    for path, options in tmpfs.items():
        opts = options.split(",")
        assert "size=8388608" in opts and "nosuid" in opts and "nodev" in opts
        assert "U" not in opts
        if path == "/tmp":
            assert "mode=1777" in opts and f"nr_inodes={TMP_MIN_INODES}" in opts
        elif path == "/dev/shm":  # scratch for multiprocessing's semaphores: anyone may write, nobody may run
            assert "mode=1777" in opts and "nr_inodes=100" in opts and "noexec" in opts
        else:
            assert "uid=65534" in opts and "gid=65534" in opts and "nr_inodes=100" in opts
    assert "exec" in tmpfs["/work"].split(",") and "noexec" in tmpfs["/out"].split(",")
    assert "noexec" in tmpfs["/in"].split(",")


def test_tmpfs_podman_uses_U() -> None:
    tmpfs = host(EngineKind.PODMAN)["tmpfs"]
    assert isinstance(tmpfs, dict)
    for path, options in tmpfs.items():
        opts = options.split(",")
        assert not any(o.startswith(("uid=", "gid=", "nr_inodes=")) for o in opts)
        assert ("U" in opts) == (path not in ("/tmp", "/dev/shm"))


def test_unlimited_fields_are_left_out_not_huge() -> None:
    limits = DEFAULT_LIMITS.merged(Limits(memory=UNLIMITED, fs_quota=UNLIMITED, cpu_time=UNLIMITED))
    config = host(limits=limits)
    assert "mem_limit" not in config and "memswap_limit" not in config
    assert "fsize" not in ulimits(config) and "cpu" not in ulimits(config)
    tmpfs = config["tmpfs"]
    assert isinstance(tmpfs, dict)
    assert not any("size=" in v for v in tmpfs.values())


def test_pure_and_deterministic() -> None:
    before = dataclasses.replace(LIMITS)
    first = hardening_profile(RESOLVED, SPEC, EngineKind.DOCKER)
    second = hardening_profile(RESOLVED, SPEC, EngineKind.DOCKER)
    assert first == second and first is not second
    assert before == LIMITS


@pytest.mark.parametrize("kind", list(EngineKind))
def test_sdk_accepts_the_profile(kind: EngineKind) -> None:
    """The SDK builds a HostConfig from it (an explicit API version makes no request)."""
    client = docker.APIClient(base_url="unix:///nonexistent.sock", version="1.41")
    kwargs = hardening_profile(DEFAULT_LIMITS.validate(), bash.PACK.docker or SPEC, kind)
    config = client.create_host_config(**kwargs["host_config"])  # type: ignore[arg-type]
    assert config["ReadonlyRootfs"] is True
    assert config["CapDrop"] == ["ALL"]
    assert config["NetworkMode"] == "none"
    assert config["Memory"] == config["MemorySwap"] == DEFAULT_LIMITS.memory
    assert config["Init"] is True
    assert not config.get("Binds")
