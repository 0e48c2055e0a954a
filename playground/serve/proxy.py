"""The host-side reverse proxy that exposes one guest service port: its lifecycle.

:func:`start_proxy` probes the upstream until it is ready, then listens and
returns a :class:`RunningProxy`, which runs until stopped, failed or past its
TTL and keeps the access log. Each piece of the work is its own module:

- :mod:`playground.serve.connections`: which connections are taken
  (``max_connections`` plus a reserve on probation for token holders);
- :mod:`playground.serve.gate`: which requests are refused, in this order:
  header size (431), bearer token (sorts the request into the authenticated
  or the unauthenticated class), rate limit of that class per client (429),
  ``Host`` header (421), missing or wrong token (401), request target (400),
  body size (413);
- :mod:`playground.serve.forward`: how an admitted request and its answer
  pass between client and upstream, and which headers are rewritten.

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
from typing import Any

from aiohttp import web

from playground.serve.config import AuthMode, ProxyConfig, generate_token
from playground.serve.connections import PROBATION_HEAD_TIMEOUT, ConnectionAdmission, ProxyConnection, auth_reserve
from playground.serve.errors import InvalidServeOptions
from playground.serve.forward import Forwarder, UpstreamErrorHook
from playground.serve.gate import RequestGate
from playground.serve.readiness import wait_ready
from playground.serve.responses import RefuseConnection
from playground.serve.upstream import HandlerUpstream, TCPUpstream, Upstream

__all__ = ["PROBATION_HEAD_TIMEOUT", "RunningProxy", "StopReason", "UpstreamErrorHook", "auth_reserve", "start_proxy"]

logger = logging.getLogger(__name__)

_SHUTDOWN_GRACE = 0.5  # aiohttp waits twice: for the handler, then for its cancellation


class StopReason(enum.Enum):
    """Why a proxy stopped."""

    #: ``stop()`` was called.
    STOPPED = "stopped"
    #: The configured TTL elapsed.
    TTL_EXPIRED = "ttl_expired"
    #: ``fail(error)`` was called, e.g. because the guest exited; ``RunningProxy.error`` holds the cause.
    FAILED = "failed"


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
        self._gate = RequestGate(config, self._token)
        reserve = auth_reserve(config.max_connections) if self._gate.authenticates else 0
        self._admission = ConnectionAdmission(config.max_connections, reserve, self._note)
        self._log: deque[str] = deque(maxlen=config.log_lines)
        self._done = asyncio.Event()
        self._reason: StopReason | None = None
        self._error: BaseException | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._ttl_handle: asyncio.TimerHandle | None = None
        self._requests = 0
        self._host = config.bind
        self._port = 0
        self._forwarder: Forwarder | None = None
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
        self._forwarder = Forwarder(
            cfg,
            self._upstream,
            capacity=self._admission.capacity,
            strip_authorization=self._gate.authenticates,
            on_upstream_error=self._hook,
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
            await self._forwarder.close()
            raise
        self._port = int(self._server.sockets[0].getsockname()[1])
        self._gate.listening_on(self._port)
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
            if self._forwarder is not None:
                await self._forwarder.close()
            if self._server is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._server.wait_closed(), _SHUTDOWN_GRACE)
        finally:
            self._done.set()

    def _note(self, text: str) -> None:
        self._log.append(f"{_utc_now()} - {text}")
        logger.debug("proxy %s: %s", self.addr, text)

    def _protocol_factory(self) -> asyncio.BaseProtocol:
        assert self._web_server is not None
        if self._stopping is not None:
            self._note("refused: stopping")
            return RefuseConnection()
        return self._admission.admit(self._web_server, self._handler_kwargs)

    # -- one request: gate, forward, access log ------------------------------------------------------------------

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        assert self._forwarder is not None
        started = time.monotonic()
        self._requests += 1
        client = request.remote or "-"
        path = request.raw_path
        note = ""
        status, sent = 500, 0
        connection = request.protocol
        if isinstance(connection, ProxyConnection):
            connection.active += 1
        try:
            refusal = self._gate.check(request, client, connection)
            if refusal is not None:
                refused, note = refusal
                status, sent = refused.status, refused.content_length or 0
                return refused
            response, sent, note = await self._forwarder.forward(request, client)
            status = response.status
            return response
        except asyncio.CancelledError:
            note = note or "client gone or proxy stopping"
            status = 499
            raise
        finally:
            if isinstance(connection, ProxyConnection):
                connection.active -= 1
            ms = (time.monotonic() - started) * 1000
            line = f'{_utc_now()} {client} "{request.method} {path[:200]}" {status} {sent}B {ms:.0f}ms'
            self._log.append(f"{line} {note}".rstrip())


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
