"""The reverse proxy's own answers: plain-text error responses, and the raw 503 for a connection over the cap."""

from __future__ import annotations

import asyncio

from aiohttp import web

__all__ = ["RefuseConnection", "closing", "plain"]


def plain(status: int, text: str) -> web.Response:
    """A ``text/plain`` response ``"<status>: <text>"`` (never carries guest or token data)."""
    return web.Response(status=status, text=f"{status}: {text}\n")


def closing(response: web.Response) -> web.Response:
    """``response`` sent with ``Connection: close``: the connection ends after it."""
    response.force_close()
    return response


class RefuseConnection(asyncio.Protocol):
    """Answers one connection over the cap with 503 and closes it (no HTTP parsing, no handler)."""

    _BODY = b"503 Service Unavailable: too many connections\n"
    _RESPONSE = (
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
        b"Connection: close\r\nContent-Length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
    )

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        transport.write(self._RESPONSE)
        if transport.can_write_eof():
            transport.write_eof()
        # read (and drop) what the client sends for a moment, so closing does not reset the connection
        self._timer = asyncio.get_running_loop().call_later(1.0, transport.close)

    def data_received(self, data: bytes) -> None:
        pass

    def eof_received(self) -> bool:
        if self._transport is not None:
            self._transport.close()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
