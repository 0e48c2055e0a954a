"""The reverse proxy's forwarding of one admitted request to its upstream, and of the answer back.

Forwarded requests lose hop-by-hop headers (and those their ``Connection``
header names), the proxy's ``Authorization`` header and any client-supplied
``Forwarded``/``X-Forwarded-*``; they gain ``X-Forwarded-For`` (the
client's address), ``X-Forwarded-Proto`` and ``X-Forwarded-Host``. The
original ``Host`` header is passed on. Bodies stay within
``max_request_body`` / ``max_response_body``: a TCP upstream's response is
streamed and cut when it passes the cap; a handler upstream gets the whole
body and returns a whole one.

Threads and loops: a :class:`Forwarder` belongs to its proxy's loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from playground.net.hop_by_hop import HOP_BY_HOP, not_forwarded
from playground.serve.config import ProxyConfig
from playground.serve.responses import plain
from playground.serve.upstream import HandlerUpstream, TCPUpstream, Upstream

__all__ = ["Forwarder", "UpstreamErrorHook"]

logger = logging.getLogger(__name__)

#: Called (on the proxy's loop) each time the upstream fails a request; must not block.
UpstreamErrorHook = Callable[[BaseException], None]

_CLIENT_SUPPLIED = frozenset({"forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip"})
_SKIP_AUTO = frozenset({"User-Agent", "Accept", "Accept-Encoding", "Content-Type"})


class _TooLarge(Exception):
    pass


class Forwarder:
    """Forwards requests to one upstream; owns the HTTP client of a TCP upstream.

    Create on the proxy's loop. ``capacity`` bounds the client's sockets to
    a TCP upstream; ``strip_authorization`` keeps the proxy's token from the
    guest. ``close()`` closes the client; call it once, after the last
    request.
    """

    def __init__(
        self,
        config: ProxyConfig,
        upstream: Upstream,
        *,
        capacity: int,
        strip_authorization: bool,
        on_upstream_error: UpstreamErrorHook | None,
    ) -> None:
        self._config = config
        self._upstream = upstream
        self._strip_authorization = strip_authorization
        self._hook = on_upstream_error
        self._session: aiohttp.ClientSession | None = None
        if isinstance(upstream, TCPUpstream):
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=capacity, limit_per_host=capacity),
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=config.connect_timeout, sock_read=config.idle_timeout
                ),
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=(),
            )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def forward(self, request: web.BaseRequest, client: str) -> tuple[web.StreamResponse, int, str]:
        """Forward ``request`` (already through the gate); return the response, body bytes sent and a log note.

        Upstream failures become 502/504 (or a cut connection when the
        response had begun) and are passed to the error hook.
        """
        if isinstance(self._upstream, TCPUpstream):
            return await self._forward_tcp(request, self._upstream, client)
        return await self._forward_handler(request, self._upstream, client)

    def _upstream_headers(self, request: web.BaseRequest, client: str) -> CIMultiDict[str]:
        dropped = not_forwarded(request.headers.getall("Connection", []))
        headers: CIMultiDict[str] = CIMultiDict()
        for name, value in request.headers.items():
            low = name.lower()
            if low in dropped or low in _CLIENT_SUPPLIED or low == "expect":
                continue
            if low == "authorization" and self._strip_authorization:
                continue  # the proxy's token never reaches the guest
            headers.add(name, value)
        headers["X-Forwarded-For"] = client
        headers["X-Forwarded-Proto"] = "http"
        headers["X-Forwarded-Host"] = request.headers.get("Host", "")
        return headers

    async def _read_body(self, request: web.BaseRequest) -> bytes:
        """Read the whole body, counting as it arrives; ``_TooLarge`` as soon as it passes the cap."""
        cap = self._config.max_request_body
        data = bytearray()
        async for chunk in request.content.iter_any():
            data += chunk
            if len(data) > cap:
                raise _TooLarge
        return bytes(data)

    async def _continue(self, request: web.BaseRequest) -> None:
        if request.headers.get("Expect", "").lower() == "100-continue" and request.version >= (1, 1):
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _upstream_failed(self, exc: BaseException) -> None:
        if self._hook is not None:
            try:
                self._hook(exc)
            except Exception:
                logger.exception("on_upstream_error hook raised")

    async def _forward_tcp(
        self, request: web.BaseRequest, upstream: TCPUpstream, client: str
    ) -> tuple[web.StreamResponse, int, str]:
        assert self._session is not None
        cfg = self._config
        headers = self._upstream_headers(request, client)
        await self._continue(request)
        data: Any = None
        if request.content_length is not None:
            data = request.content if request.content_length else None  # bounded by the checked Content-Length
        elif request.body_exists:
            try:
                data = await self._read_body(request)  # chunked upload: buffered up to the cap
            except _TooLarge:
                return plain(413, f"request body exceeds {cfg.max_request_body} bytes"), 0, "body cap"
        url = URL(f"http://{upstream.authority}{request.raw_path}", encoded=True)
        skip = {h for h in _SKIP_AUTO if h not in headers}
        response: web.StreamResponse | None = None
        sent = 0
        try:
            async with self._session.request(
                request.method, url, headers=headers, data=data, allow_redirects=False, skip_auto_headers=skip
            ) as up:
                length = up.content_length
                if length is not None and length > cfg.max_response_body:
                    return plain(502, "upstream response too large"), 0, "response cap"
                response = web.StreamResponse(status=up.status, reason=up.reason)
                _copy_response_headers(up.headers, response)
                await response.prepare(request)
                async for chunk in up.content.iter_any():
                    sent += len(chunk)
                    if sent > cfg.max_response_body:
                        raise _TooLarge
                    await response.write(chunk)
                await response.write_eof()
                return response, sent, ""
        except _TooLarge:
            if response is None or not response.prepared:
                return plain(502, "upstream response too large"), 0, "response cap"
            _abort(request)
            return response, sent, "response cap: connection cut"
        except TimeoutError as exc:
            self._upstream_failed(exc)
            if response is None or not response.prepared:
                return plain(504, "upstream timed out"), 0, "upstream timeout"
            _abort(request)
            return response, sent, "upstream timeout: connection cut"
        except (aiohttp.ClientError, OSError) as exc:
            self._upstream_failed(exc)
            if response is None or not response.prepared:
                return plain(502, "upstream unavailable"), 0, f"upstream error: {type(exc).__name__}"
            _abort(request)
            return response, sent, f"upstream error mid-response: {type(exc).__name__}"

    async def _forward_handler(
        self, request: web.BaseRequest, upstream: HandlerUpstream, client: str
    ) -> tuple[web.StreamResponse, int, str]:
        cfg = self._config
        headers = list(self._upstream_headers(request, client).items())
        await self._continue(request)
        try:
            body = await self._read_body(request)
        except _TooLarge:
            return plain(413, f"request body exceeds {cfg.max_request_body} bytes"), 0, "body cap"
        try:
            result = await asyncio.wait_for(
                upstream.handler(request.method, request.raw_path, headers, body), cfg.idle_timeout
            )
        except TimeoutError as exc:
            self._upstream_failed(exc)
            return plain(504, "upstream timed out"), 0, "handler timeout"
        except Exception as exc:
            self._upstream_failed(exc)
            return plain(502, "upstream failed"), 0, f"handler error: {type(exc).__name__}"
        try:
            status, out_headers, out_body = result
            if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
                raise TypeError(f"bad status {status!r}")
            if not isinstance(out_body, (bytes, bytearray, memoryview)):
                raise TypeError(f"body must be bytes, got {type(out_body).__name__}")
            response = web.Response(status=status, body=bytes(out_body))
            for name, value in out_headers:
                low = name.lower()
                if low not in HOP_BY_HOP and low != "content-length":
                    response.headers.add(name, value)
        except (TypeError, ValueError) as exc:
            self._upstream_failed(exc)
            return plain(502, "upstream gave a malformed response"), 0, f"handler result: {exc}"
        if len(out_body) > cfg.max_response_body:
            return plain(502, "upstream response too large"), 0, "response cap"
        return response, len(out_body), ""


def _copy_response_headers(source: Any, response: web.StreamResponse) -> None:
    dropped = not_forwarded(source.getall("Connection", []))
    for name, value in source.items():
        if name.lower() not in dropped:
            response.headers.add(name, value)


def _abort(request: web.BaseRequest) -> None:
    if request.transport is not None:
        request.transport.close()
