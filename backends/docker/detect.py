"""Finding a Docker-compatible daemon, and saying precisely why there is none.

Where we look, in order: ``DOCKER_HOST`` when set (and then nowhere else:
an explicit choice is not second-guessed), else the rootful Docker socket,
rootless Docker's socket, rootless Podman's and rootful Podman's
Docker-compatible sockets. So with Docker absent (or stopped: its socket
file is gone), Podman's socket is found with no setting at all. A socket
file that does not exist is skipped without a connection attempt; one that
exists but cannot be opened is "permission denied"; one that does not
answer within the probe timeout is "does not answer". A ``tcp://``
``DOCKER_HOST`` goes through ``remote``: TLS from ``DOCKER_TLS_VERIFY`` and
``DOCKER_CERT_PATH``, and plain TCP refused (without a connection attempt)
unless explicitly allowed; a certificate either side refuses is a clear
"TLS handshake failed", bounded by the same timeout. Probes are bounded by
that timeout and cached by ``DaemonProbe`` for a few seconds, so asking
often never hangs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from backends.docker.engine import (
    MIN_API_VERSION,
    Engine,
    EngineError,
    EngineInfo,
    EnginePermissionDenied,
    EngineTLSError,
    TLSFiles,
    version_tuple,
)
from backends.docker.profile import EngineKind
from backends.docker.remote import RemoteRefused, is_network_url, remote_refusal, tls_for

START_HINT = (
    "start Docker ('sudo systemctl start docker', or as root 'bash packaging/docker_daemon.sh start') "
    "or Podman's Docker-compatible socket ('systemctl --user start podman.socket')"
)
REMOTE_HINT = (
    "for a daemon on another machine: DOCKER_HOST=tcp://HOST:2376, DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH "
    "holding ca.pem (the daemon's CA), cert.pem and key.pem (a client certificate that CA signed)"
)
PERMISSION_HINT = (
    "add your user to the 'docker' group and log in again, or use rootless Podman "
    "('systemctl --user start podman.socket')"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """A daemon address and why we try it (``"DOCKER_HOST"``, ``"Podman (rootless)"``...).

    ``tls``: how to speak TLS to a ``tcp://`` daemon; ``refused``: why this
    endpoint must not be used as configured (plain TCP, a missing
    certificate), so it is never connected to.
    """

    url: str
    source: str
    tls: TLSFiles | None = None
    refused: str = ""

    @property
    def socket_path(self) -> str | None:
        return self.url[len("unix://") :] if self.url.startswith("unix://") else None

    @property
    def remote(self) -> bool:
        """Reached over the network (``tcp://``): the daemon's containers may run on another machine."""
        return is_network_url(self.url)


def endpoint_for(url: str, source: str, environ: Mapping[str, str] | None = None) -> Endpoint:
    """An ``Endpoint`` for ``url`` with the TLS the environment asks for, or the reason it is refused."""
    try:
        return Endpoint(url=url, source=source, tls=tls_for(url, environ))
    except RemoteRefused as exc:
        return Endpoint(url=url, source=source, refused=str(exc))


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeResult:
    """A daemon that answered (``endpoint`` and ``info``), or ``reason`` and ``hint`` why none did."""

    endpoint: Endpoint | None = None
    info: EngineInfo | None = None
    reason: str | None = None
    hint: str = ""
    checked_at: float = 0.0


def candidate_endpoints(environ: Mapping[str, str] | None = None) -> list[Endpoint]:
    """Where to look for a daemon, most specific first."""
    env = os.environ if environ is None else environ
    host = env.get("DOCKER_HOST", "").strip()
    if host:
        return [endpoint_for(host, "DOCKER_HOST", env)]
    runtime = env.get("XDG_RUNTIME_DIR", "").strip() or f"/run/user/{os.getuid()}"
    found = [
        Endpoint(url="unix:///var/run/docker.sock", source="Docker"),
        Endpoint(url=f"unix://{runtime}/docker.sock", source="Docker (rootless)"),
        Endpoint(url=f"unix://{runtime}/podman/podman.sock", source="Podman (rootless)"),
        Endpoint(url="unix:///run/podman/podman.sock", source="Podman"),
    ]
    unique: dict[str, Endpoint] = {}
    for endpoint in found:
        unique.setdefault(endpoint.url, endpoint)
    return list(unique.values())


def probe(endpoints: list[Endpoint], *, timeout: float) -> ProbeResult:
    """Try each endpoint once; the first that answers with a new enough API wins."""
    problems: list[str] = []
    hint = START_HINT
    for endpoint in endpoints:
        if endpoint.refused:
            problems.append(endpoint.refused)
            hint = REMOTE_HINT
            continue
        path = endpoint.socket_path
        if path is not None and not os.path.exists(path):
            problems.append(f"no socket at {path}")
            continue
        if path is not None and not os.access(path, os.R_OK | os.W_OK):
            problems.append(f"permission denied on {path}")
            hint = PERMISSION_HINT
            continue
        engine: Engine | None = None
        try:
            engine = Engine(endpoint.url, timeout=timeout, tls=endpoint.tls)
            info = engine.ping()
        except EnginePermissionDenied as exc:
            problems.append(f"permission denied on {endpoint.url} ({exc.detail or exc})")
            hint = PERMISSION_HINT
            continue
        except EngineTLSError as exc:
            problems.append(str(exc))
            hint = REMOTE_HINT
            continue
        except EngineError as exc:
            problems.append(f"{endpoint.url} does not answer ({exc.detail or exc})")
            continue
        finally:
            if engine is not None:
                engine.close()
        if version_tuple(info.api_version) < version_tuple(MIN_API_VERSION):
            problems.append(
                f"{endpoint.url} speaks Docker API {info.api_version}, older than the {MIN_API_VERSION} needed"
            )
            hint = "upgrade Docker (20.10 or newer) or Podman (3.0 or newer)"
            continue
        return ProbeResult(endpoint=endpoint, info=info, checked_at=time.monotonic())
    where = "DOCKER_HOST" if endpoints and endpoints[0].source == "DOCKER_HOST" else "no Docker or Podman daemon"
    if where == "DOCKER_HOST":
        reason = f"DOCKER_HOST={endpoints[0].url} is not usable: " + "; ".join(problems)
    else:
        reason = "no Docker or Podman daemon answers: " + "; ".join(problems)
    return ProbeResult(reason=reason, hint=hint, checked_at=time.monotonic())


#: Why rootful Podman (4.3, netavark) cannot have its guest networks firewalled off the host (measured).
PODMAN_FIREWALL_REASON = (
    "Podman's netavark creates a network's bridge only when the first container joins it, and its Docker API "
    "does not report the bridge's name, so the host firewall cannot be in place before the guest can send, "
    "nor its chains be told apart from a crashed run's"
)
#: Why a network-policy run cannot use Podman, whatever ``PLAYGROUND_DOCKER_ALLOW_HOST_REACH`` says.
PODMAN_NETPOLICY_REASON = (
    "network-policy runs are not supported on Podman: its netavark creates a network's bridge and gateway "
    "address only when the first container joins, so neither the egress proxy (it listens on that address) nor "
    "the host firewall (it must guard the bridge before the guest can send) can be set up beforehand"
)


def firewall_refusal(endpoint: Endpoint, info: EngineInfo) -> str | None:
    """Why this daemon's guest networks cannot be firewalled off the host from here (None: ask ``hostfirewall``)."""
    if endpoint.socket_path is None:
        return f"the daemon at {endpoint.url} is not local: cannot firewall its bridges"
    if info.kind is EngineKind.PODMAN:
        return PODMAN_FIREWALL_REASON
    return None


def network_policy_refusal(endpoint: Endpoint, info: EngineInfo) -> str | None:
    """Why a ``NetPolicy`` run cannot work on this daemon at all (so no environment variable lets it try)."""
    if endpoint.remote:
        return remote_refusal(endpoint.url, "a network policy")
    if info.kind is EngineKind.PODMAN:
        return PODMAN_NETPOLICY_REASON
    return None


class DaemonProbe:
    """``probe()`` with a short cache. Thread-safe; concurrent callers share one probe."""

    def __init__(self, *, base_url: str | None = None, ttl: float = 5.0, timeout: float = 2.0) -> None:
        self._base_url = base_url
        self.ttl = ttl
        self.timeout = timeout
        self._lock = threading.Lock()
        self._last: ProbeResult | None = None
        self._key: tuple[str, ...] = ()

    def endpoints(self) -> list[Endpoint]:
        if self._base_url:
            return [endpoint_for(self._base_url, "configured")]
        return candidate_endpoints()

    def get(self) -> ProbeResult:
        """The cached result if fresh and the candidate list unchanged, else a new probe."""
        endpoints = self.endpoints()
        key = tuple(repr(e) for e in endpoints)  # the TLS files and refusals count, not just the address
        with self._lock:
            last = self._last
            if last is not None and key == self._key and time.monotonic() - last.checked_at < self.ttl:
                return last
            result = probe(endpoints, timeout=self.timeout)
            self._last = result
            self._key = key
            return result

    def invalidate(self) -> None:
        with self._lock:
            self._last = None
