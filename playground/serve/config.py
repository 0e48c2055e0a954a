"""How one reverse proxy behaves: ``ProxyConfig``, ``AuthMode`` and the readiness probes.

Every limit has a default chosen for "a developer opens a guest's web app
in a browser on the same machine"; none of them means "unlimited".
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from dataclasses import dataclass, field

from playground.core.serve import ALL_INTERFACES, LOOPBACK, AuthMode, HTTPReady, ReadinessProbe, TCPReady
from playground.serve.errors import InvalidServeOptions

__all__ = [
    "ALL_INTERFACES",
    "LOOPBACK",
    "AuthMode",
    "HTTPReady",
    "ProxyConfig",
    "ReadinessProbe",
    "TCPReady",
    "generate_token",
]

_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")  # RFC 6750 b64token


def generate_token() -> str:
    """A fresh random bearer token: 256 bits from ``secrets``, URL-safe base64."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyConfig:
    """Settings of one reverse proxy (one exposed guest port).

    Attributes:
        bind: listen address; ``LOOPBACK`` by default. Anything else must be
            asked for explicitly (``ALL_INTERFACES`` or one interface's address).
        port: listen port; 0 picks a free one.
        auth: ``AuthMode.BEARER`` (default) or ``AuthMode.NONE``.
        token: the bearer token; empty with ``BEARER`` means "generate one"
            (see :func:`generate_token`). Must be empty with ``NONE``.
        extra_hosts: ``Host`` header names accepted besides ``127.0.0.1``,
            ``localhost``, ``[::1]`` and the bind address (each with the
            proxy's port). Needed when serving on other interfaces under a
            DNS name. An entry without ``:port`` means the proxy's port.
        rate: sustained requests per second per client IP (token bucket).
            Requests with the right token and requests without it draw
            from separate buckets, so a flood without the token never
            spends the token holder's share.
        burst: bucket size: requests a client may send at once.
        max_connections: concurrent client connections; more are answered
            503 and closed, except that with ``AuthMode.BEARER`` a reserve
            of ``auth_reserve(max_connections)`` further connections is
            kept for clients whose first request carries the token (see
            ``playground.serve.connections``).
        max_request_body: bytes; larger bodies get 413 (checked against
            ``Content-Length`` up front and counted while streaming).
        max_header_bytes: request line plus headers; more gets 431.
        max_response_body: bytes per response from the upstream. Responses
            are streamed, never buffered whole (a handler's body is already in
            memory), so this bounds endless streams rather than host memory.
            Over the cap: 502 if nothing was sent yet, else the connection is
            cut.
        idle_timeout: seconds a keep-alive client connection may sit idle,
            and the longest the proxy waits for the upstream's next bytes
            (or for one handler call).
        connect_timeout: seconds to connect to a TCP upstream.
        ttl: seconds after start when the proxy stops by itself
            (``StopReason.TTL_EXPIRED``); ``None`` means no TTL and must be
            asked for.
        ready: the readiness probe run before the proxy listens.
        log_lines: size of the access-log ring buffer.
    """

    bind: str = LOOPBACK
    port: int = 0
    auth: AuthMode = AuthMode.BEARER
    token: str = field(default="", repr=False)
    extra_hosts: tuple[str, ...] = ()
    rate: float = 50.0
    burst: int = 100
    max_connections: int = 64
    max_request_body: int = 10 << 20
    max_header_bytes: int = 16 << 10
    max_response_body: int = 1 << 30
    idle_timeout: float = 60.0
    connect_timeout: float = 10.0
    ttl: float | None = 3600.0
    ready: ReadinessProbe = field(default_factory=TCPReady)
    log_lines: int = 500

    def __post_init__(self) -> None:
        try:
            bind = ipaddress.ip_address(self.bind)
        except (TypeError, ValueError):
            raise InvalidServeOptions(f"bind must be an IP address, got {self.bind!r}") from None
        object.__setattr__(self, "bind", str(bind))
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 <= self.port < 65536:
            raise InvalidServeOptions(f"port out of range: {self.port!r}")
        if not isinstance(self.auth, AuthMode):
            raise InvalidServeOptions(f"auth must be an AuthMode, got {self.auth!r}")
        if self.auth is AuthMode.NONE and self.token:
            raise InvalidServeOptions("a token was given with AuthMode.NONE")
        if self.token and not _TOKEN.fullmatch(self.token):
            raise InvalidServeOptions("token must be a non-empty RFC 6750 b64token (letters, digits, -._~+/ and =)")
        hosts = tuple(h.strip().lower() for h in self.extra_hosts)
        if any(not h or any(c in h for c in " /\r\n@") for h in hosts):
            raise InvalidServeOptions(f"bad extra_hosts entry in {self.extra_hosts!r}")
        object.__setattr__(self, "extra_hosts", hosts)
        for name in (
            "burst",
            "max_connections",
            "max_request_body",
            "max_header_bytes",
            "max_response_body",
            "log_lines",
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < (0 if name == "max_request_body" else 1)
            ):
                raise InvalidServeOptions(f"{name} must be a positive int, got {value!r}")
        if self.max_header_bytes < 256:
            raise InvalidServeOptions("max_header_bytes must be at least 256")
        for name in ("rate", "idle_timeout", "connect_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise InvalidServeOptions(f"{name} must be a positive number of seconds, got {value!r}")
        if self.ttl is not None and (
            isinstance(self.ttl, bool) or not isinstance(self.ttl, (int, float)) or not self.ttl > 0
        ):
            raise InvalidServeOptions(f"ttl must be positive seconds or None, got {self.ttl!r}")
        if not isinstance(self.ready, (TCPReady, HTTPReady)) or not self.ready.timeout > 0:
            raise InvalidServeOptions(
                f"ready must be TCPReady or HTTPReady with a positive timeout, got {self.ready!r}"
            )
