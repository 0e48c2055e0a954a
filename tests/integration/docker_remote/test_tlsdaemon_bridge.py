"""The private TLS daemon must not break the machine's own: its bridge is its own and the host's survives.

A dockerd started with ``--bridge=none`` deletes the host's ``docker0`` at
start-up (the machine's own daemon then fails to network until it restarts).
This starts and stops a private daemon (no images) and checks that every
bridge the host had, in particular the local daemon's default bridge, is
still there while it runs and after it stopped, and that its own bridge is
gone afterwards (also when the start fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from backends.docker.detect import DaemonProbe

from . import tlsdaemon


def _skip_or_fail(message: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def _bridges() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show", "type", "bridge"], capture_output=True, text=True,
                         check=True, timeout=10).stdout  # fmt: skip
    return {line.split(":", 2)[1].strip() for line in out.splitlines() if line.count(":") >= 2}


def _main_daemon_bridge() -> str | None:
    """The default bridge of the machine's own daemon (``docker0`` on Docker), when it has one."""
    probe = DaemonProbe(timeout=3.0).get()
    if probe.endpoint is None or probe.endpoint.socket_path is None:
        return None
    import docker  # type: ignore[import-untyped]

    api = docker.APIClient(base_url=probe.endpoint.url, timeout=10, version="1.41")
    try:
        options = api.inspect_network("bridge").get("Options") or {}
    except docker.errors.APIError:
        return None
    finally:
        api.close()
    name = options.get("com.docker.network.bridge.name")
    return str(name) if name else None


@pytest.fixture
def can_start_dockerd() -> None:
    if os.geteuid() != 0:
        _skip_or_fail("a second dockerd needs root")
    for tool in ("dockerd", "openssl", "ip"):
        if shutil.which(tool) is None:
            _skip_or_fail(f"{tool} is not installed")


def test_private_daemon_leaves_the_hosts_bridges_alone(can_start_dockerd: None) -> None:
    main_bridge = _main_daemon_bridge()
    before = _bridges()
    if main_bridge is not None:
        assert main_bridge in before, f"the local daemon's bridge {main_bridge} is missing before we start"
    daemon = tlsdaemon.start_tls_daemon()
    try:
        during = _bridges()
        assert daemon.bridge in during, "the private daemon runs without its own bridge"
        assert before <= during, f"bridges deleted by the private daemon's start: {sorted(before - during)}"
    finally:
        daemon.stop()
    after = _bridges()
    assert before <= after, f"bridges gone after the private daemon stopped: {sorted(before - after)}"
    assert daemon.bridge not in after, f"the private bridge {daemon.bridge} was left behind"
    if main_bridge is not None:
        assert main_bridge in after


def test_a_failed_start_removes_its_bridge(can_start_dockerd: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """dockerd exits at once (an option it refuses): the bridge made for it must not stay."""
    before = _bridges()
    real_popen = subprocess.Popen

    def popen_with_bad_flag(argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        if argv and argv[0].endswith("dockerd"):
            argv = [*argv, "--no-such-flag-for-this-test"]
        return real_popen(argv, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(subprocess, "Popen", popen_with_bad_flag)
    with pytest.raises(RuntimeError, match="exited"):
        tlsdaemon.start_tls_daemon()
    monkeypatch.undo()
    assert _bridges() == before, f"bridges changed by a failed start: {sorted(_bridges() ^ before)}"
