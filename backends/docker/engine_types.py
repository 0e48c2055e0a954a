"""What the engine speaks in: its exceptions and the plain values it returns, no SDK types.

Why its own module: every layer above ``engine`` catches these and reads
these (runs, sessions, the pool, the attach stream in ``attachment``)
without importing the wrapper over the ``docker`` SDK itself; ``engine``
re-exports them, so ``from backends.docker.engine import EngineError`` works.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from backends.docker.profile import EngineKind


class EngineError(Exception):
    """A Docker/Podman API call failed. ``detail`` is the daemon's explanation."""

    def __init__(self, message: str, *, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class EngineUnreachable(EngineError):
    """No daemon answers at the endpoint (no socket, refused, timed out)."""


class EnginePermissionDenied(EngineError):
    """The socket exists but this user may not open it."""


class ImageNotFound(EngineError):
    """The image is not present locally (or not in the registry, when pulling)."""


class ImagePullFailed(EngineError):
    """Pulling an image failed (offline, unknown name, registry error)."""


class ContainerGone(EngineError):
    """The container no longer exists (removed by someone else, or auto-removed)."""


class EngineTLSError(EngineUnreachable):
    """The TLS handshake with a ``tcp://`` daemon failed: a certificate was refused on one side or the other."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TLSFiles:
    """Client-side TLS for a ``tcp://`` daemon (see ``remote``): Docker's ``DOCKER_CERT_PATH`` files.

    ``ca`` signed the daemon's certificate (checked, with its host name or
    address, when ``verify``); ``cert`` and ``key`` are ours, which a daemon
    started with ``--tlsverify`` demands.
    """

    ca: str
    cert: str
    key: str
    verify: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineInfo:
    """What the daemon says about itself."""

    kind: EngineKind
    api_version: str
    server_version: str
    os: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerState:
    """The parts of ``State`` the backend needs after a run."""

    running: bool
    exit_code: int
    oom_killed: bool
    error: str = ""
    #: The container's init as the daemon's PID namespace sees it (0 when not running).
    pid: int = 0
    #: When it exited, in seconds since the epoch (0: it has not, or the daemon did not say).
    finished_at: float = 0.0


def parse_timestamp(text: str) -> float:
    """The daemon's ``2026-12-02T07:50:00.123456789Z`` in seconds since the epoch; 0 for its "never"
    (``0001-01-01T00:00:00Z``) or anything it cannot read."""
    found = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?", text.strip())
    if found is None or found[1].startswith("0001-"):
        return 0.0
    zone = "+00:00" if found[3] in (None, "Z") else found[3]
    try:
        moment = datetime.datetime.fromisoformat(found[1] + zone)
    except ValueError:
        return 0.0
    fraction = (found[2] or "")[:6]
    return moment.timestamp() + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)


def version_tuple(version: str) -> tuple[int, ...]:
    """``"1.41"`` -> ``(1, 41)``; junk parts count as 0."""
    parts: list[int] = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkInfo:
    """A Docker network as far as address planning needs it."""

    id: str
    name: str
    subnets: tuple[str, ...]
    internal: bool
    #: The bridge interface's name when the network was created with one (``com.docker.network.bridge.name``).
    bridge: str = ""


class NetworkOverlap(EngineError):
    """The daemon refused a subnet because another network already uses it."""
