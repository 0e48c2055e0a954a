"""Finding a Docker-compatible daemon, and saying precisely why there is none.

Where we look, in order: ``DOCKER_HOST`` when set (and then nowhere else:
an explicit choice is not second-guessed), else the rootful Docker socket,
rootless Docker's socket, rootless Podman's and rootful Podman's
Docker-compatible sockets. A socket file that does not exist is skipped
without a connection attempt; one that exists but cannot be opened is
"permission denied"; one that does not answer within the probe timeout is
"does not answer". Probes are bounded by that timeout and cached by
``DaemonProbe`` for a few seconds, so asking often never hangs.
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
    version_tuple,
)

START_HINT = (
    "start Docker ('sudo systemctl start docker', or as root 'bash packaging/docker_daemon.sh start') "
    "or Podman's Docker-compatible socket ('systemctl --user start podman.socket')"
)
PERMISSION_HINT = (
    "add your user to the 'docker' group and log in again, or use rootless Podman "
    "('systemctl --user start podman.socket')"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """A daemon address and why we try it (``"DOCKER_HOST"``, ``"Podman (rootless)"``...)."""

    url: str
    source: str

    @property
    def socket_path(self) -> str | None:
        return self.url[len("unix://") :] if self.url.startswith("unix://") else None


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
        return [Endpoint(url=host, source="DOCKER_HOST")]
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
            engine = Engine(endpoint.url, timeout=timeout)
            info = engine.ping()
        except EnginePermissionDenied as exc:
            problems.append(f"permission denied on {endpoint.url} ({exc.detail or exc})")
            hint = PERMISSION_HINT
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
            return [Endpoint(url=self._base_url, source="configured")]
        return candidate_endpoints()

    def get(self) -> ProbeResult:
        """The cached result if fresh and the candidate list unchanged, else a new probe."""
        endpoints = self.endpoints()
        key = tuple(e.url for e in endpoints)
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
