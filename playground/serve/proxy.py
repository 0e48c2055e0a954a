"""The host-side reverse proxy that exposes one guest service port.

:func:`start_proxy` probes the upstream until it is ready, then listens and
forwards each request through the guards, in this order: connection cap
(503), header size (431), bearer token (sorts the request into the
authenticated or the unauthenticated class), rate limit of that class per
client (429), ``Host`` header (421), missing or wrong token (401), request
target (400), body size (413). Forwarded requests
lose hop-by-hop headers, the proxy's ``Authorization`` header and any
client-supplied ``Forwarded``/``X-Forwarded-*``; they gain
``X-Forwarded-For`` (the client's address), ``X-Forwarded-Proto`` and
``X-Forwarded-Host``. The original ``Host`` header is passed on.

Why authentication comes before the rate limit and the connection cap has a
reserve: every local client has the same address (127.0.0.1), so a limit
that does not know who is asking lets anyone who can reach the port spend
the token holder's share. Unauthenticated requests therefore draw from
their own buckets (a flood of them is answered 429 and its connections are
closed), and only requests with the right token draw from the token
holder's. Connections work the same way: ``max_connections`` bounds the
connections anyone may hold, and a further :func:`auth_reserve` connections
are admitted *on probation* beyond it. A probation connection must present
a request head within ``PROBATION_HEAD_TIMEOUT`` and that first request
must carry the token, else it is answered 503 and closed; when the reserve
is full, the oldest probation connection that has not proved the token is
closed to let a new one try. So idle or slow unauthenticated connections
can fill ``max_connections`` (the slowloris pattern) but cannot keep the
token holder out.

Threads and loops: a :class:`RunningProxy` belongs to the loop that started
it; call its coroutine methods from that loop (``recent_logs()`` and the
read-only properties are safe anywhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong
from aiohttp.web_protocol import RequestHandler
from multidict import CIMultiDict
from yarl import URL

from playground.net.hop_by_hop import HOP_BY_HOP
from playground.serve.config import AuthMode, ProxyConfig, generate_token
from playground.serve.errors import InvalidServeOptions
from playground.serve.guards import CHALLENGE, BearerCheck, RateLimiter, allowed_hosts, host_ok
from playground.serve.readiness import wait_ready
from playground.serve.upstream import HandlerUpstream, TCPUpstream, Upstream

logger = logging.getLogger(__name__)

#: Called (on the proxy's loop) each time the upstream fails a request; must not block.
UpstreamErrorHook = Callable[[BaseException], None]

_SHUTDOWN_GRACE = 0.5  # aiohttp waits twice: for the handler, then for its cancellation
#: Seconds a connection admitted on probation (over ``max_connections``) has to send a complete request head.
PROBATION_HEAD_TIMEOUT = 5.0
_CLIENT_SUPPLIED = frozenset({"forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip"})
_SKIP_AUTO = frozenset({"User-Agent", "Accept", "Accept-Encoding", "Content-Type"})


class StopReason(enum.Enum):
    """Why a proxy stopped."""

    #: ``stop()`` was called.
    STOPPED = "stopped"
    #: The configured TTL elapsed.
    TTL_EXPIRED = "ttl_expired"
    #: ``fail(error)`` was called, e.g. because the guest exited; ``RunningProxy.error`` holds the cause.
    FAILED = "failed"


class _TooLarge(Exception):
    pass


class RunningProxy:
    """A listening reverse proxy for one upstream. Create with :func:`start_proxy`.

    Lifecycle: running until ``stop()``, ``fail(error)`` or the TTL, whichever
    comes first; the first one decides :attr:`reason` (and :attr:`error`).
    Both are idempotent and safe to call concurrently; when they return the
    listener is closed, open connections are cut (in-flight requests get up
    to one second to finish), the upstream client is closed and :attr:`done`
    is set. Cancelling a caller of ``stop()`` does not interrupt the shutdown.
    """

    def __init__(self, config: ProxyConfig, upstream: Upstream, on_upstream_error: UpstreamErrorHook | None) -> None:
        self._config = config
        self._upstream = upstream
        self._hook = on_upstream_error
        self._token = (config.token or generate_token()) if config.auth is AuthMode.BEARER else None
        self._bearer = BearerCheck(self._token) if self._token else None
        # Separate buckets: unauthenticated traffic can only ever exhaust its own (see the module docstring).
        self._limiter = RateLimiter(config.rate, config.burst)
        self._anon_limiter = RateLimiter(config.rate, config.burst)
        self._reserve = auth_reserve(config.max_connections) if self._bearer is not None else 0
        self._log: deque[str] = deque(maxlen=config.log_lines)
        self._done = asyncio.Event()
        self._reason: StopReason | None = None
        self._error: BaseException | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._ttl_handle: asyncio.TimerHandle | None = None
        self._connections: dict[_ProxyRequestHandler, None] = {}  # open ones, oldest first
        self._requests = 0
        self._host = config.bind
        self._port = 0
        self._allowed: frozenset[str] = frozenset()
        self._session: aiohttp.ClientSession | None = None
        self._web_server: web.Server | None = None
        self._handler_kwargs: dict[str, Any] = {}
        self._server: asyncio.Server | None = None

    # -- public face ---------------------------------------------------------------------------------------------

    @property
    def config(self) -> ProxyConfig:
        return self._config

    @property
    def upstream(self) -> Upstream:
        return self._upstream

    @property
    def host(self) -> str:
        """The bound address (as configured, e.g. ``127.0.0.1``)."""
        return self._host

    @property
    def port(self) -> int:
        """The bound port (the real one when the config asked for 0)."""
        return self._port

    @property
    def addr(self) -> str:
        """``host:port`` the proxy listens on (IPv6 in brackets)."""
        return f"[{self._host}]:{self._port}" if ":" in self._host else f"{self._host}:{self._port}"

    @property
    def url(self) -> str:
        """``http://host:port/`` to open locally (a wildcard bind is shown as loopback)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(self._host)
        return f"http://{host}:{self._port}/" if host else f"http://{self.addr}/"

    @property
    def token(self) -> str | None:
        """The bearer token clients must send (generated when none was configured); ``None`` with ``AuthMode.NONE``."""
        return self._token

    @property
    def done(self) -> asyncio.Event:
        """Set once the proxy has fully stopped (for any reason)."""
        return self._done

    @property
    def reason(self) -> StopReason | None:
        """Why the proxy stopped (or is stopping); ``None`` while running."""
        return self._reason

    @property
    def error(self) -> BaseException | None:
        """The error passed to ``fail()``, if that is how the proxy stopped."""
        return self._error

    @property
    def requests(self) -> int:
        """Requests seen so far (refused ones included)."""
        return self._requests

    def recent_logs(self, limit: int | None = None) -> list[str]:
        """The newest access-log lines, oldest first (at most ``config.log_lines``; ``limit`` trims further).

        A line is ``<UTC time> <client> "<METHOD> <path>" <status> <bytes>B <ms>ms [note]``; tokens are never logged.
        """
        lines = list(self._log)
        return lines[-limit:] if limit is not None and limit >= 0 else lines

    async def wait(self) -> StopReason:
        """Wait until the proxy has stopped; return why."""
        await self._done.wait()
        assert self._reason is not None
        return self._reason

    async def stop(self) -> None:
        """Stop serving (``StopReason.STOPPED`` unless something else stopped it first). Idempotent."""
        await self._finish(StopReason.STOPPED, None)

    async def fail(self, error: BaseException) -> None:
        """Stop because of ``error`` (e.g. the guest exited): ``reason`` becomes ``FAILED``. Idempotent."""
        await self._finish(StopReason.FAILED, error)

    async def __aenter__(self) -> RunningProxy:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- lifecycle -----------------------------------------------------------------------------------------------

    async def _start(self) -> None:
        cfg = self._config
        loop = asyncio.get_running_loop()
        if isinstance(self._upstream, TCPUpstream):
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._max_sockets, limit_per_host=self._max_sockets),
                timeout=aiohttp.ClientTimeout(total=None, connect=cfg.connect_timeout, sock_read=cfg.idle_timeout),
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=(),
            )
        self._handler_kwargs = {
            "keepalive_timeout": cfg.idle_timeout,
            "max_line_size": cfg.max_header_bytes,
            "max_field_size": cfg.max_header_bytes,
            "access_log": None,
            "auto_decompress": False,
        }
        self._web_server = web.Server(self._handle, handler_cancellation=True, **self._handler_kwargs)
        try:
            self._server = await loop.create_server(self._protocol_factory, host=cfg.bind, port=cfg.port)
        except BaseException:
            if self._session is not None:
                await self._session.close()
            raise
        self._port = int(self._server.sockets[0].getsockname()[1])
        self._allowed = allowed_hosts(self._port, cfg.bind, cfg.extra_hosts)
        if cfg.ttl is not None:
            self._ttl_handle = loop.call_later(cfg.ttl, self._on_ttl)
        self._note(f"listening on {self.addr} for {self._upstream.authority}")

    def _on_ttl(self) -> None:
        if self._stopping is None:
            self._note(f"TTL of {self._config.ttl:g}s expired")
            self._stopping = asyncio.get_running_loop().create_task(self._shutdown())
            self._reason = StopReason.TTL_EXPIRED

    async def _finish(self, reason: StopReason, error: BaseException | None) -> None:
        if self._stopping is None:
            self._reason, self._error = reason, error
            self._note(f"stopping: {reason.value}" + (f" ({error!r})" if error is not None else ""))
            self._stopping = asyncio.get_running_loop().create_task(self._shutdown())
        await asyncio.shield(self._stopping)

    async def _shutdown(self) -> None:
        try:
            if self._ttl_handle is not None:
                self._ttl_handle.cancel()
            if self._server is not None:
                self._server.close()
            if self._web_server is not None:
                for connection in self._web_server.connections:
                    connection.close()  # idle keep-alive connections end now, busy ones after their request
                await self._web_server.shutdown(_SHUTDOWN_GRACE)
            if self._session is not None:
                await self._session.close()
            if self._server is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._server.wait_closed(), _SHUTDOWN_GRACE)
        finally:
            self._done.set()

    def _note(self, text: str) -> None:
        self._log.append(f"{_utc_now()} - {text}")
        logger.debug("proxy %s: %s", self.addr, text)

    # -- connections ---------------------------------------------------------------------------------------------

    @property
    def _max_sockets(self) -> int:
        return self._config.max_connections + self._reserve

    def _protocol_factory(self) -> asyncio.BaseProtocol:
        assert self._web_server is not None
        if self._stopping is not None:
            self._note("refused: stopping")
            return _Refuse503()
        probation = len(self._connections) >= self._config.max_connections
        if probation and not self._reserve:
            self._note("connection refused: max_connections reached")
            return _Refuse503()
        if len(self._connections) >= self._max_sockets and not self._evict_unproven():
            self._note("connection refused: max_connections reached and the token holders' reserve is in use")
            return _Refuse503()
        handler = _ProxyRequestHandler(
            self._web_server,
            loop=asyncio.get_running_loop(),
            on_lost=self._connection_lost,
            probation=probation,
            **self._handler_kwargs,
        )
        self._connections[handler] = None
        return handler

    def _evict_unproven(self) -> bool:
        """Close the oldest probation connection that has not shown the token and is not mid-request."""
        for handler in self._connections:
            if handler.probation and not handler.trusted and handler.active == 0:
                self._note("closed an unauthenticated connection on probation to admit a new one")
                del self._connections[handler]
                handler.force_close()
                return True
        return False

    def _connection_lost(self, handler: _ProxyRequestHandler) -> None:
        self._connections.pop(handler, None)

    # -- requests ------------------------------------------------------------------------------------------------

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        started = time.monotonic()
        self._requests += 1
        client = request.remote or "-"
        path = request.raw_path
        note = ""
        status, sent = 500, 0
        connection = request.protocol
        if isinstance(connection, _ProxyRequestHandler):
            connection.active += 1
        try:
            refusal = self._guard(request, client, connection)
            if refusal is not None:
                refused, note = refusal
                status, sent = refused.status, refused.content_length or 0
                return refused
            if isinstance(self._upstream, TCPUpstream):
                response, sent, note = await self._forward_tcp(request, self._upstream, client)
            else:
                response, sent, note = await self._forward_handler(request, self._upstream, client)
            status = response.status
            return response
        except asyncio.CancelledError:
            note = note or "client gone or proxy stopping"
            status = 499
            raise
        finally:
            if isinstance(connection, _ProxyRequestHandler):
                connection.active -= 1
            ms = (time.monotonic() - started) * 1000
            line = f'{_utc_now()} {client} "{request.method} {path[:200]}" {status} {sent}B {ms:.0f}ms'
            self._log.append(f"{line} {note}".rstrip())

    def _guard(self, request: web.BaseRequest, client: str, connection: object) -> tuple[web.Response, str] | None:
        """The refusal for ``request``, or None to forward it (order: see the module docstring).

        Every refusal of a request without the right token also closes its
        connection, so unauthenticated clients cannot sit on connection slots
        with keep-alive.
        """
        cfg = self._config
        head = len(request.method) + len(request.raw_path) + 12
        head += sum(len(k) + len(v) + 4 for k, v in request.raw_headers)
        if head > cfg.max_header_bytes:
            return _plain(431, f"request headers exceed {cfg.max_header_bytes} bytes"), "header cap"
        problem = self._bearer.check(request.headers.get("Authorization")) if self._bearer is not None else None
        trusted = problem is None
        probation = isinstance(connection, _ProxyRequestHandler) and connection.probation
        if trusted and isinstance(connection, _ProxyRequestHandler):
            connection.trusted = True
        elif probation:
            resp = _plain(503, "too many connections")
            resp.headers["Retry-After"] = "1"
            return _closing(resp), "over max_connections without the token"
        wait = (self._limiter if trusted else self._anon_limiter).take(client)
        if wait:
            resp = _plain(429, "rate limit exceeded")
            resp.headers["Retry-After"] = RateLimiter.retry_after(wait)
            return (resp, "rate limited") if trusted else (_closing(resp), f"rate limited, auth {problem}")
        if not host_ok(request.headers.get("Host"), self._allowed):
            resp = _plain(421, "this proxy does not serve that Host")
            return (resp if trusted else _closing(resp)), "host mismatch"
        if problem is not None:
            resp = _plain(401, "bearer token required")
            challenge = CHALLENGE if problem == "missing" else f'{CHALLENGE}, error="invalid_token"'
            resp.headers["WWW-Authenticate"] = challenge
            return _closing(resp), f"auth {problem}"
        if not request.raw_path.startswith("/"):
            return _plain(400, "only origin-form request targets are served"), "bad target"
        length = request.content_length
        if length is not None and length > cfg.max_request_body:
            return _plain(413, f"request body exceeds {cfg.max_request_body} bytes"), "body cap"
        return None

    def _upstream_headers(self, request: web.BaseRequest, client: str) -> CIMultiDict[str]:
        named = {t.strip().lower() for v in request.headers.getall("Connection", []) for t in v.split(",")}
        headers: CIMultiDict[str] = CIMultiDict()
        for name, value in request.headers.items():
            low = name.lower()
            if low in HOP_BY_HOP or low in named or low in _CLIENT_SUPPLIED or low == "expect":
                continue
            if low == "authorization" and self._bearer is not None:
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
                return _plain(413, f"request body exceeds {cfg.max_request_body} bytes"), 0, "body cap"
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
                    return _plain(502, "upstream response too large"), 0, "response cap"
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
                return _plain(502, "upstream response too large"), 0, "response cap"
            _abort(request)
            return response, sent, "response cap: connection cut"
        except TimeoutError as exc:
            self._upstream_failed(exc)
            if response is None or not response.prepared:
                return _plain(504, "upstream timed out"), 0, "upstream timeout"
            _abort(request)
            return response, sent, "upstream timeout: connection cut"
        except (aiohttp.ClientError, OSError) as exc:
            self._upstream_failed(exc)
            if response is None or not response.prepared:
                return _plain(502, "upstream unavailable"), 0, f"upstream error: {type(exc).__name__}"
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
            return _plain(413, f"request body exceeds {cfg.max_request_body} bytes"), 0, "body cap"
        try:
            result = await asyncio.wait_for(
                upstream.handler(request.method, request.raw_path, headers, body), cfg.idle_timeout
            )
        except TimeoutError as exc:
            self._upstream_failed(exc)
            return _plain(504, "upstream timed out"), 0, "handler timeout"
        except Exception as exc:
            self._upstream_failed(exc)
            return _plain(502, "upstream failed"), 0, f"handler error: {type(exc).__name__}"
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
            return _plain(502, "upstream gave a malformed response"), 0, f"handler result: {exc}"
        if len(out_body) > cfg.max_response_body:
            return _plain(502, "upstream response too large"), 0, "response cap"
        return response, len(out_body), ""


class _ProxyRequestHandler(RequestHandler):
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
        on_lost: Callable[[_ProxyRequestHandler], None],
        probation: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(manager, **kwargs)
        self._on_lost: Callable[[_ProxyRequestHandler], None] | None = on_lost
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
            response = _plain(431, "request header fields too large")
            response.force_close()
            return response
        return super().handle_error(request, status, exc, message)

    def log_exception(self, *args: Any, **kw: Any) -> None:
        logger.debug(*args, **kw)  # malformed client requests are not our errors


class _Refuse503(asyncio.Protocol):
    """Answers one connection over the cap with 503 and closes it."""

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


def _plain(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=f"{status}: {text}\n")


def _closing(response: web.Response) -> web.Response:
    """``response`` sent with ``Connection: close``: the connection ends after it."""
    response.force_close()
    return response


def auth_reserve(max_connections: int) -> int:
    """Connections kept beyond ``max_connections`` for clients that show the token (at least 2, a quarter more)."""
    return max(2, max_connections // 4)


def _copy_response_headers(source: Any, response: web.StreamResponse) -> None:
    named = {t.strip().lower() for v in source.getall("Connection", []) for t in v.split(",")}
    for name, value in source.items():
        low = name.lower()
        if low in HOP_BY_HOP or low in named:
            continue
        response.headers.add(name, value)


def _abort(request: web.BaseRequest) -> None:
    if request.transport is not None:
        request.transport.close()


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


async def start_proxy(
    config: ProxyConfig, upstream: Upstream, *, on_upstream_error: UpstreamErrorHook | None = None
) -> RunningProxy:
    """Wait until ``upstream`` is ready, then listen and return the running proxy.

    The URL is handed out only after the readiness probe passed: when this
    returns, the service answered the probe and the proxy accepts
    connections. ``on_upstream_error`` is told about every failed upstream
    exchange (connection refused, reset, timeout, handler exception); the
    caller decides whether the guest is gone and then calls ``fail()``.

    Cancellation: cancelling this coroutine during the probe or the bind
    leaves nothing listening.

    Raises:
        ServiceNotReady: the probe did not pass within its timeout.
        OSError: the listen address or port is unavailable.
        InvalidServeOptions: ``config``/``upstream`` is not of the right type.
    """
    if not isinstance(config, ProxyConfig):
        raise InvalidServeOptions(f"config must be a ProxyConfig, got {type(config).__name__}")
    if not isinstance(upstream, (TCPUpstream, HandlerUpstream)):
        raise InvalidServeOptions(f"upstream must be TCPUpstream or HandlerUpstream, got {type(upstream).__name__}")
    await wait_ready(config.ready, upstream)
    proxy = RunningProxy(config, upstream, on_upstream_error)
    await proxy._start()
    return proxy
