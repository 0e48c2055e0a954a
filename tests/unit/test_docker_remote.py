"""Remote daemons and Podman, without a daemon: TLS from the environment, plain TCP refused, what each refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.docker.detect import (
    PODMAN_FIREWALL_REASON,
    PODMAN_NETPOLICY_REASON,
    Endpoint,
    candidate_endpoints,
    firewall_refusal,
    network_policy_refusal,
    probe,
)
from backends.docker.engine import EngineInfo, TLSFiles
from backends.docker.profile import EngineKind, oneshot_profile
from backends.docker.remote import INSECURE_ENV, RemoteRefused, tls_for
from backends.docker.wrapper import wrapper_script
from playground.core import DEFAULT_LIMITS
from playground.packs import bash

DOCKER = EngineInfo(kind=EngineKind.DOCKER, api_version="1.41", server_version="20.10")
PODMAN = EngineInfo(kind=EngineKind.PODMAN, api_version="1.41", server_version="4.3.1")


@pytest.fixture
def certs(tmp_path: Path) -> Path:
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("not checked here\n")
    return tmp_path


def test_a_local_socket_needs_no_tls() -> None:
    assert tls_for("unix:///var/run/docker.sock", {}) is None


@pytest.mark.parametrize("url", ["tcp://10.0.0.2:2375", "http://10.0.0.2:2375", "https://10.0.0.2:2376"])
def test_plain_or_unverified_tcp_is_refused_without_the_opt_in(url: str) -> None:
    with pytest.raises(RemoteRefused, match="plain TCP") as caught:
        tls_for(url, {})
    assert INSECURE_ENV in str(caught.value) and "DOCKER_TLS_VERIFY" in str(caught.value)


def test_the_opt_in_allows_plain_tcp_and_unverified_tls(certs: Path) -> None:
    assert tls_for("tcp://10.0.0.2:2375", {INSECURE_ENV: "1"}) is None
    unverified = tls_for("tcp://10.0.0.2:2376", {INSECURE_ENV: "1", "DOCKER_TLS": "1", "DOCKER_CERT_PATH": str(certs)})
    assert unverified is not None and not unverified.verify


def test_verified_tls_takes_docker_cert_path(certs: Path) -> None:
    found = tls_for("tcp://10.0.0.2:2376", {"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": str(certs)})
    assert found == TLSFiles(ca=str(certs / "ca.pem"), cert=str(certs / "cert.pem"), key=str(certs / "key.pem"))


def test_missing_certificate_files_are_named(certs: Path) -> None:
    (certs / "key.pem").unlink()
    (certs / "ca.pem").unlink()
    with pytest.raises(RemoteRefused, match=r"needs ca\.pem, key\.pem in "):
        tls_for("tcp://10.0.0.2:2376", {"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": str(certs)})


def test_a_refused_endpoint_is_never_connected_to() -> None:
    [endpoint] = candidate_endpoints({"DOCKER_HOST": "tcp://203.0.113.7:2375"})
    assert endpoint.refused and endpoint.remote and endpoint.tls is None
    found = probe([endpoint], timeout=0.1)  # 203.0.113.0/24 is TEST-NET-3: a connection would hang, not fail
    assert found.endpoint is None and found.reason is not None and "plain TCP" in found.reason
    assert "DOCKER_TLS_VERIFY" in found.hint


def test_what_podman_and_remote_daemons_refuse() -> None:
    local = Endpoint(url="unix:///run/podman/podman.sock", source="Podman")
    remote = Endpoint(url="tcp://10.0.0.2:2376", source="DOCKER_HOST")
    assert network_policy_refusal(local, DOCKER) is None and firewall_refusal(local, DOCKER) is None
    assert network_policy_refusal(local, PODMAN) == PODMAN_NETPOLICY_REASON
    assert firewall_refusal(local, PODMAN) == PODMAN_FIREWALL_REASON
    for info in (DOCKER, PODMAN):
        why = network_policy_refusal(remote, info)
        assert why is not None and "remote" in why and "egress proxy" in why
        assert "not local" in (firewall_refusal(remote, info) or "")


def test_podman_runs_give_the_mounts_to_the_guest() -> None:
    """Podman cannot hand tmpfs mounts to a uid: the root wrapper chowns them, with CAP_CHOWN there only."""
    limits = DEFAULT_LIMITS.validate()
    assert bash.PACK.docker is not None
    for kind, chown in ((EngineKind.DOCKER, False), (EngineKind.PODMAN, True)):
        host = oneshot_profile(limits, bash.PACK.docker, kind)["host_config"]
        assert isinstance(host, dict)
        assert ("CHOWN" in host["cap_add"]) is chown
        assert not any("U" in opts.split(",") for opts in host["tmpfs"].values())
    assert "chown 65534:65534 /in /work /out /opt/playground/site-packages" in wrapper_script(bash.PACK.docker, ())
