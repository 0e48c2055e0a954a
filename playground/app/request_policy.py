"""What the service browser does with each request its page makes: add the token, let it pass, or block it.

Pure functions, no Qt: ``web_browser.TokenInterceptor`` applies them to every
request of the page (main frame, sub-resources, XHR/fetch, WebSocket
handshakes). The bearer token goes to the service's proxy only, matched by
scheme, exact host and exact port. Every other network request is blocked:
the page is the guest's code, and the user's browser must not become its
way to the user's network (LAN hosts, other local servers) or the internet.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

#: Schemes that never leave the browser: allowed, never given the token.
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})
#: Schemes the proxy speaks (WebSocket handshakes are HTTP requests to it).
PROXY_SCHEMES = frozenset({"http", "ws"})
_DEFAULT_PORTS = {"http": 80, "ws": 80}


class Decision(enum.Enum):
    AUTHORIZE = "authorize"  # to the proxy: add Authorization: Bearer <token>
    ALLOW = "allow"  # local content (data:, blob:, about:): no header
    BLOCK = "block"  # anywhere else


@dataclass(frozen=True, slots=True)
class ProxyTarget:
    """The one origin that gets the token: ``http://host:port``."""

    host: str
    port: int
    token: str = field(repr=False)

    @classmethod
    def from_addr(cls, addr: str, token: str) -> ProxyTarget:
        """From the core's ``Service.addr()`` (``"127.0.0.1:41234"``; IPv6 as ``"[::1]:41234"``).

        Raises:
            ValueError: ``addr`` has no numeric port.
        """
        host, sep, port = addr.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(f"not a host:port address: {addr!r}")
        return cls(host.strip("[]").lower(), int(port), token)

    def header(self) -> bytes:
        return f"Bearer {self.token}".encode("ascii")


def decide(target: ProxyTarget | None, scheme: str, host: str, port: int) -> Decision:
    """The decision for a request to ``scheme://host:port`` (``port`` -1 when the URL names none)."""
    scheme = scheme.lower()
    if scheme in LOCAL_SCHEMES:
        return Decision.ALLOW
    if target is None or scheme not in PROXY_SCHEMES:
        return Decision.BLOCK
    if port < 0:
        port = _DEFAULT_PORTS[scheme]
    if host.strip("[]").lower() == target.host and port == target.port:
        return Decision.AUTHORIZE
    return Decision.BLOCK
