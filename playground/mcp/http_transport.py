"""Streamable HTTP transport: loopback by default, a required bearer token, Host/Origin checks.

``AccessGuard`` wraps the SDK's Starlette app and refuses, before the MCP
layer sees anything:

* a ``Host`` header that is not this server's own ``host:port`` (421) —
  a DNS-rebinding page reaches us under a foreign host name;
* an ``Origin`` header that is not this server's own origin (403) — a web
  page in the user's browser may not drive the server; requests without an
  Origin (non-browser clients) pass this check;
* a missing or wrong ``Authorization: Bearer <token>`` (401), compared in
  constant time.

The SDK's own DNS-rebinding protection is configured with the same exact
lists as a second layer.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from playground.mcp.state import ServerState

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
#: Tokens shorter than this are refused as guessable.
MIN_TOKEN_LENGTH = 16
#: Largest HTTP request body accepted (code + base64 files fit well below it).
MAX_BODY_BYTES = 32 << 20


def generate_token() -> str:
    """A fresh 256-bit URL-safe bearer token."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """Where and how to listen. ``port=0`` picks a free port.

    Raises:
        ValueError: a short token, a bad port, or a non-loopback host without
            ``allow_remote``.
    """

    token: str
    host: str = "127.0.0.1"
    port: int = 0
    allow_remote: bool = False

    def __post_init__(self) -> None:
        if len(self.token) < MIN_TOKEN_LENGTH or not self.token.isprintable() or " " in self.token:
            raise ValueError(f"the token must be at least {MIN_TOKEN_LENGTH} printable characters without spaces")
        if not 0 <= self.port < 65536:
            raise ValueError(f"bad port {self.port}")
        if not is_loopback(self.host) and not self.allow_remote:
            raise ValueError(
                f"refusing to listen on non-loopback address {self.host}: anyone who can reach it could try "
                "the token; pass --allow-remote to do it anyway"
            )


def _host_forms(host: str) -> list[str]:
    if is_loopback(host):
        return ["127.0.0.1", "localhost", "[::1]"]
    try:
        if ipaddress.ip_address(host).version == 6:
            return [f"[{host}]"]
    except ValueError:
        pass
    return [host]


class AccessGuard:
    """ASGI middleware enforcing the Host, Origin and bearer-token rules above.

    Non-HTTP scopes: ``lifespan`` passes through; websockets are refused.
    """

    def __init__(self, app: ASGIApp, *, token: str, allowed_hosts: list[str], allowed_origins: list[str]) -> None:
        self._app = app
        self._token = token.encode("utf-8")
        self._hosts = frozenset(h.lower() for h in allowed_hosts)
        self._origins = frozenset(o.lower() for o in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # websocket: closing without accepting refuses it
        headers = Headers(scope=scope)
        refusal = self._refusal(headers)
        if refusal is not None:
            status, text = refusal
            extra = {"WWW-Authenticate": 'Bearer realm="playground"'} if status == 401 else None
            log.warning("refused HTTP request: %s", text)
            await PlainTextResponse(text, status_code=status, headers=extra)(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _refusal(self, headers: Headers) -> tuple[int, str] | None:
        host = headers.get("host", "").lower()
        if host not in self._hosts:
            return 421, "invalid Host header"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self._origins:
            return 403, "invalid Origin header"
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode("utf-8"), self._token):
            return 401, "missing or invalid bearer token"
        return None


def bind_socket(options: HttpOptions) -> socket.socket:
    """Bind and listen, so the real port is known before the app is built and early clients queue.

    Raises:
        OSError: the address is in use or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in options.host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((options.host.strip("[]"), options.port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def build_app(server: MCPServer[ServerState], options: HttpOptions, port: int) -> AccessGuard:
    """The guarded ASGI app for ``server`` listening on ``port``."""
    hosts = [f"{h}:{port}" for h in _host_forms(options.host)]
    origins = [f"http://{h}" for h in hosts]
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        ),
        host=options.host,
    )
    return AccessGuard(app, token=options.token, allowed_hosts=hosts, allowed_origins=origins)


async def run_http(
    server: MCPServer[ServerState], options: HttpOptions, *, on_ready: Callable[[str], None] | None = None
) -> None:
    """Serve streamable HTTP until interrupted (SIGINT/SIGTERM).

    ``on_ready`` is called with the endpoint URL once the socket is bound.
    Uvicorn logs through ``logging`` only; nothing is written to stdout.

    Raises:
        OSError: the address cannot be bound.
    """
    sock = bind_socket(options)
    try:
        port = sock.getsockname()[1]
        app = build_app(server, options, port)
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", log_level="warning")
        shown = f"[{options.host.strip('[]')}]" if ":" in options.host.strip("[]") else options.host
        url = f"http://{shown}:{port}{MCP_PATH}"
        log.info("listening on %s", url)
        if on_ready is not None:
            on_ready(url)
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()
