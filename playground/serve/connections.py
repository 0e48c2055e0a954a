"""Which client connections the reverse proxy takes, and the per-connection handler that keeps count.

``max_connections`` bounds the connections anyone may hold. With bearer
auth, a further :func:`auth_reserve` connections are admitted *on
probation* beyond it. A probation connection must present a request head
within :data:`PROBATION_HEAD_TIMEOUT` and that first request must carry the
token, else it is answered 503 and closed (the refusal itself is
:class:`~playground.serve.gate.RequestGate`'s); when the reserve is full,
the oldest probation connection that has not proved the token is closed to
let a new one try. So idle or slow unauthenticated connections can fill
``max_connections`` (the slowloris pattern) but cannot keep the token
holder out. Connections beyond all that get :class:`RefuseConnection`.

Threads and loops: everything here runs on the proxy's loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong
from aiohttp.web_protocol import RequestHandler

from playground.serve.responses import RefuseConnection, plain

__all__ = ["PROBATION_HEAD_TIMEOUT", "ConnectionAdmission", "ProxyConnection", "auth_reserve"]

logger = logging.getLogger(__name__)

#: Seconds a connection admitted on probation (over ``max_connections``) has to send a complete request head.
PROBATION_HEAD_TIMEOUT = 5.0


def auth_reserve(max_connections: int) -> int:
    """Connections kept beyond ``max_connections`` for clients that show the token (at least 2, a quarter more)."""
    return max(2, max_connections // 4)


class ProxyConnection(RequestHandler):
    """aiohttp's connection handler, plus connection accounting and 431 for over-long header lines.

    ``probation``: admitted over ``max_connections``; its first request must
    carry the token, and its head must arrive within
    ``PROBATION_HEAD_TIMEOUT``. ``trusted``: a request on it carried the
    token. ``active``: requests in progress (such a connection is never
    evicted).
    """

    def __init__(
        self,
        manager: web.Server,
        *,
        on_lost: Callable[[ProxyConnection], None],
        probation: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(manager, **kwargs)
        self._on_lost: Callable[[ProxyConnection], None] | None = on_lost
        self.probation = probation
        self.trusted = False
        self.active = 0
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self.probation:
            self._head_timer = asyncio.get_running_loop().call_later(PROBATION_HEAD_TIMEOUT, self._head_overdue)

    def _head_overdue(self) -> None:
        self._head_timer = None
        if not self.trusted and self.active == 0:
            self.force_close()

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if self._on_lost is not None:
            on_lost, self._on_lost = self._on_lost, None
            on_lost(self)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, LineTooLong) or (isinstance(exc, BadHttpMessage) and "headers" in str(exc).lower()):
            response = plain(431, "request header fields too large")
            response.force_close()
            return response
        return super().handle_error(request, status, exc, message)

    def log_exception(self, *args: Any, **kw: Any) -> None:
        logger.debug(*args, **kw)  # malformed client requests are not our errors


class ConnectionAdmission:
    """The proxy's open client connections, oldest first, and the rule that admits a new one.

    ``reserve`` is 0 without bearer auth (no probation then). ``note`` is
    told, in words, about every refused or evicted connection.
    """

    def __init__(self, max_connections: int, reserve: int, note: Callable[[str], None]) -> None:
        self._max = max_connections
        self._reserve = reserve
        self._note = note
        self._open: dict[ProxyConnection, None] = {}  # insertion order: oldest first

    @property
    def capacity(self) -> int:
        """The most connections ever open at once: ``max_connections`` plus the reserve."""
        return self._max + self._reserve

    def admit(self, manager: web.Server, handler_kwargs: dict[str, Any]) -> asyncio.BaseProtocol:
        """The protocol for a new connection: a :class:`ProxyConnection` (maybe on probation) or a 503."""
        probation = len(self._open) >= self._max
        if probation and not self._reserve:
            self._note("connection refused: max_connections reached")
            return RefuseConnection()
        if len(self._open) >= self.capacity and not self._evict_unproven():
            self._note("connection refused: max_connections reached and the token holders' reserve is in use")
            return RefuseConnection()
        connection = ProxyConnection(
            manager,
            loop=asyncio.get_running_loop(),
            on_lost=self._lost,
            probation=probation,
            **handler_kwargs,
        )
        self._open[connection] = None
        return connection

    def _evict_unproven(self) -> bool:
        """Close the oldest probation connection that has not shown the token and is not mid-request."""
        for connection in self._open:
            if connection.probation and not connection.trusted and connection.active == 0:
                self._note("closed an unauthenticated connection on probation to admit a new one")
                del self._open[connection]
                connection.force_close()
                return True
        return False

    def _lost(self, connection: ProxyConnection) -> None:
        self._open.pop(connection, None)
