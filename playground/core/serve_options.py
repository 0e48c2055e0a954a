"""How a guest service is exposed: ``ServeOpts`` and its parts (ports, bind address, auth, readiness probe).

Plain validated values, no I/O. Every limit has a default for "open the
guest's app in my browser"; none means "unlimited", and a service without a
TTL must be asked for.
"""

from __future__ import annotations

import enum
import ipaddress
from dataclasses import dataclass, field

from playground.core.errors import InvalidServeOptions

#: Bind only the loopback interface (the default).
LOOPBACK = "127.0.0.1"
#: Bind every interface: the service becomes reachable from other machines.
ALL_INTERFACES = "0.0.0.0"


class AuthMode(enum.Enum):
    """Authentication at the proxy."""

    #: ``Authorization: Bearer <token>`` required on every request (the default).
    BEARER = "bearer"
    #: No authentication: anyone who can reach the port can use the service.
    NONE = "none"


@dataclass(frozen=True, slots=True, kw_only=True)
class TCPReady:
    """Ready once the upstream accepts a TCP connection. A handler upstream is ready at once."""

    timeout: float = 15.0


@dataclass(frozen=True, slots=True, kw_only=True)
class HTTPReady:
    """Ready once ``GET path`` answers 2xx or 3xx (redirects are not followed)."""

    path: str = "/"
    timeout: float = 15.0

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path.startswith("/") or any(c in self.path for c in " \r\n"):
            raise InvalidServeOptions(f"HTTPReady path must start with '/' and hold no spaces, got {self.path!r}")


ReadinessProbe = TCPReady | HTTPReady


@dataclass(frozen=True, slots=True, kw_only=True)
class PortMap:
    """Expose guest port ``guest`` on host port ``host`` (0: any free port)."""

    guest: int
    host: int = 0

    def __post_init__(self) -> None:
        for name in ("guest", "host"):
            value = getattr(self, name)
            low = 1 if name == "guest" else 0
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value < 65536:
                raise InvalidServeOptions(f"port map {name} port out of range: {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOpts:
    """How a service is exposed. Defaults suit "open the guest's app in my browser".

    ``ttl`` (seconds) stops the service; ``None`` means no TTL and must be
    asked for. ``token`` empty with ``AuthMode.BEARER`` means a random
    256-bit token is generated. ``rate``/``burst`` are per client IP.
    """

    ports: tuple[PortMap, ...] = (PortMap(guest=8080),)
    bind: str = LOOPBACK
    ttl: float | None = 3600.0
    auth: AuthMode = AuthMode.BEARER
    token: str = field(default="", repr=False)
    ready: ReadinessProbe = field(default_factory=TCPReady)
    max_connections: int = 64
    max_request_body: int = 10 << 20
    max_header_bytes: int = 16 << 10
    idle_timeout: float = 60.0
    rate: float = 50.0
    burst: int = 100
    log_bytes: int = 256 << 10

    def __post_init__(self) -> None:
        object.__setattr__(self, "ports", tuple(self.ports))
        if not self.ports:
            raise InvalidServeOptions("serve needs at least one port")
        if len({p.guest for p in self.ports}) != len(self.ports):
            raise InvalidServeOptions("a guest port is mapped twice")
        try:
            ipaddress.ip_address(self.bind)
        except ValueError:
            raise InvalidServeOptions(f"bind must be an IP address, got {self.bind!r}") from None
        if self.ttl is not None and (isinstance(self.ttl, bool) or not self.ttl > 0):
            raise InvalidServeOptions("ttl must be positive seconds, or None for no TTL")
        if self.auth is AuthMode.NONE and self.token:
            raise InvalidServeOptions("a token was given with AuthMode.NONE")
        for name in ("max_connections", "max_request_body", "max_header_bytes", "burst", "log_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidServeOptions(f"{name} must be a positive int, got {value!r}")
        for name in ("idle_timeout", "rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise InvalidServeOptions(f"{name} must be positive, got {value!r}")
