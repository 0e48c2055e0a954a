"""The guest's only way out: a host-side HTTP forward proxy that enforces a ``NetPolicy``.

Supports absolute-form ``http://`` requests (forwarded with ``Connection:
close``, one request per client connection) and ``CONNECT host:port`` tunnels
(for HTTPS; the proxy never sees inside TLS). For every request it

1. checks the guest's ``Proxy-Authorization`` when a proxy token is set
   (:mod:`playground.net.proxy_auth`),
2. asks :class:`~playground.net.guard.EgressPolicyGuard` about the host and port,
3. resolves the name itself through the injectable resolver (never the guest's DNS),
4. checks every answer, and
5. connects to a checked address through the connector - the address is
   *pinned*: nothing re-resolves the name, so DNS rebinding cannot swap it
   (steps 2 to 5 are :func:`~playground.net.pinned.open_pinned`).

Each request, allowed or refused, is recorded as a
:class:`~playground.core.NetLogEntry` in :attr:`EgressProxy.log`.

Caps: ``max_requests`` counts every request the guest sends (refused ones
too); ``max_bytes`` counts every byte received from upstreams (response
heads, bodies and tunnel traffic). When ``max_bytes`` runs out mid-transfer
the proxy forwards the bytes that fit and then cuts both connections; the log
entry says so. Zero in the policy means :data:`DEFAULT_MAX_REQUESTS` /
:data:`DEFAULT_MAX_BYTES`.

This module holds the proxy's lifecycle, its caps and the flow of one
exchange; the wire format (h11 plus strictness checks) is
:mod:`playground.net.http1` and moving the bytes of an allowed exchange is
:mod:`playground.net.relay`.

Threads and loops: an :class:`EgressProxy` belongs to the loop that started
it; call its methods from that loop only (``log`` snapshots are plain
values and may be handed anywhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import urllib.parse
from collections import deque

from playground.core import NetLogEntry, NetPolicy
from playground.net import relay
from playground.net.guard import EgressPolicyGuard
from playground.net.http1 import (
    MAX_HEAD,
    Refused,
    Request,
    Upstream,
    close_writer,
    read_request,
    send_error,
    split_authority,
)
from playground.net.pinned import open_pinned
from playground.net.proxy_auth import check_proxy_auth
from playground.net.resolver import Connector, Resolver, direct_connector, system_resolver

logger = logging.getLogger(__name__)

_MAX_URL_IN_LOG = 2048

#: Request cap when ``NetPolicy.max_requests`` is 0.
DEFAULT_MAX_REQUESTS = 1000
#: Received-bytes cap when ``NetPolicy.max_bytes`` is 0 (100 MiB).
DEFAULT_MAX_BYTES = 100 << 20


class EgressProxy:
    """A running egress proxy. Create with :func:`start_egress_proxy`.

    ``stop()`` is idempotent and safe to call concurrently: it stops
    accepting, cuts every open exchange and returns when all handlers have
    finished. After it returns, :attr:`log` is final. Use as ``async with``
    to stop on exit.
    """

    def __init__(
        self,
        policy: NetPolicy,
        *,
        resolver: Resolver,
        connector: Connector,
        proxy_token: str | None,
        max_connections: int,
        idle_timeout: float,
        connect_timeout: float,
        max_log_entries: int,
    ) -> None:
        self._guard = EgressPolicyGuard(policy)
        self._policy = policy
        self._resolver = resolver
        self._connector = connector
        self._token = proxy_token
        self._max_connections = max_connections
        self._idle = idle_timeout
        self._connect_timeout = connect_timeout
        self._max_requests = policy.max_requests or DEFAULT_MAX_REQUESTS
        self._max_bytes = policy.max_bytes or DEFAULT_MAX_BYTES
        self._log: deque[NetLogEntry] = deque(maxlen=max_log_entries)
        self._log_dropped = 0
        self._requests = 0
        self._bytes = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._address: tuple[str, int] = ("", 0)
        self._stopping: asyncio.Task[None] | None = None

    # -- public face ---------------------------------------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` the proxy listens on."""
        return self._address

    @property
    def url(self) -> str:
        """``http://host:port`` - the value for the guest's ``HTTP_PROXY`` / ``HTTPS_PROXY``, without credentials."""
        host, port = self._address
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    @property
    def policy(self) -> NetPolicy:
        return self._policy

    @property
    def log(self) -> list[NetLogEntry]:
        """A snapshot of the recorded requests, oldest first (at most ``max_log_entries``)."""
        return list(self._log)

    @property
    def log_dropped(self) -> int:
        """How many old entries fell out of the log because it was full."""
        return self._log_dropped

    @property
    def requests(self) -> int:
        """Requests received so far (allowed or not)."""
        return self._requests

    @property
    def bytes_received(self) -> int:
        """Bytes received from upstreams so far."""
        return self._bytes

    @property
    def closed(self) -> bool:
        return self._stopping is not None

    async def stop(self) -> None:
        """Stop accepting, cut open exchanges, wait for the handlers. Idempotent.

        Cancellation: the shutdown runs in its own task; cancelling the caller
        does not interrupt it (a later ``stop()`` waits for the same task).
        """
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._shutdown())
        await asyncio.shield(self._stopping)

    async def __aenter__(self) -> EgressProxy:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- lifecycle -----------------------------------------------------------------------------------------------

    async def _start(self, bind: str, port: int) -> None:
        self._server = await asyncio.start_server(self._on_client, host=bind, port=port, limit=MAX_HEAD)
        sockname = self._server.sockets[0].getsockname()
        self._address = (str(sockname[0]), int(sockname[1]))
        logger.debug("egress proxy listening on %s", self.url)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5.0)

    def _record(self, entry: NetLogEntry) -> None:
        if len(self._log) == self._log.maxlen:
            self._log_dropped += 1
        self._log.append(entry)

    # -- per connection ------------------------------------------------------------------------------------------

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if self._stopping is not None or task is None:
            writer.close()
            return
        if len(self._tasks) >= self._max_connections:
            await send_error(writer, 503, "too many connections to the egress proxy")
            await close_writer(writer)
            return
        self._tasks.add(task)
        try:
            await self._serve_one(reader, writer)
        except asyncio.CancelledError:
            pass  # stop(): the writer is closed below
        except Exception:  # a bug, not a guest mistake: keep the proxy up
            logger.exception("egress proxy: unexpected error")
        finally:
            self._tasks.discard(task)
            await close_writer(writer)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started = time.time()
        t0 = time.monotonic()
        method, url = "", ""
        ex = relay.Exchange()
        try:
            try:
                request = await read_request(reader, self._idle)
            except (TimeoutError, ConnectionError):
                return  # no request at all: nothing to log
            if request is None:
                return
            method, url = request.method, request.target[:_MAX_URL_IN_LOG]
            self._requests += 1
            if self._requests > self._max_requests:
                raise Refused(429, f"max_requests ({self._max_requests}) exceeded")
            check_proxy_auth(request, self._token)
            if self._bytes >= self._max_bytes:
                raise Refused(403, f"max_bytes ({self._max_bytes}) exhausted")
            if request.method == "CONNECT":
                host, port = split_authority(request.target)
                upstream = await self._open(host, port)
                ex.status = 200
                await relay.tunnel(
                    reader,
                    writer,
                    upstream,
                    request.early_data,
                    ex,
                    allow=self._allow_bytes,
                    idle=self._idle,
                    max_bytes=self._max_bytes,
                )
            else:
                await self._forward(request, reader, writer, ex)
        except Refused as refusal:
            ex.status, ex.error = refusal.status, refusal.reason
            await send_error(writer, refusal.status, refusal.reason)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            ex.error = ex.error or f"connection lost: {exc!r}"
        except asyncio.CancelledError:
            ex.error = ex.error or "the egress proxy stopped before the exchange closed"
            raise
        finally:
            if method or ex.error:
                self._record(
                    NetLogEntry(
                        timestamp=started,
                        method=method,
                        url=url,
                        status_code=ex.status,
                        bytes_transferred=ex.received,
                        duration=time.monotonic() - t0,
                        error=ex.error,
                    )
                )

    async def _open(self, raw_host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to a checked destination at a checked address (:func:`open_pinned`). Raises ``Refused``."""
        return await open_pinned(
            self._guard,
            raw_host,
            port,
            resolver=self._resolver,
            connector=self._connector,
            timeout=self._connect_timeout,
        )

    def _allow_bytes(self, n: int) -> int:
        """Account ``n`` received bytes; return how many may pass (``< n`` means the cap was hit)."""
        room = max(self._max_bytes - self._bytes, 0)
        passed = min(n, room)
        self._bytes += passed
        return passed

    async def _forward(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, ex: relay.Exchange
    ) -> None:
        parts = urllib.parse.urlsplit(request.target)
        if parts.scheme.lower() != "http":
            if parts.scheme.lower() == "https":
                raise Refused(400, "https:// must go through CONNECT")
            raise Refused(400, f"only absolute http:// URLs or CONNECT are proxied, got {request.target[:100]!r}")
        if "@" in parts.netloc:
            raise Refused(400, "credentials in the URL are refused")
        raw_host, port = split_authority(parts.netloc, default_port=80)
        request.check_framing()
        wire = Upstream()
        head = wire.head(request, parts, raw_host, port)
        upstream = await self._open(raw_host, port)
        await relay.forward(
            request,
            reader,
            writer,
            upstream,
            ex,
            head=head,
            wire=wire,
            allow=self._allow_bytes,
            idle=self._idle,
            max_bytes=self._max_bytes,
        )


async def start_egress_proxy(
    policy: NetPolicy,
    *,
    resolver: Resolver | None = None,
    connector: Connector | None = None,
    bind: str = "127.0.0.1",
    port: int = 0,
    proxy_token: str | None = None,
    max_connections: int = 64,
    idle_timeout: float = 60.0,
    connect_timeout: float = 10.0,
    max_log_entries: int = 10_000,
) -> EgressProxy:
    """Start an egress proxy enforcing ``policy`` and return it once it listens.

    Args:
        policy: what the guest may reach.
        resolver: name lookup; default :func:`~playground.net.resolver.system_resolver`.
        connector: opens the TCP connection to a checked address; default
            :func:`~playground.net.resolver.direct_connector`.
        bind: listen address. The Docker backend binds the guest network's
            gateway address; the default only serves local processes.
        port: listen port; 0 picks a free one.
        proxy_token: when set, every request must carry it in
            ``Proxy-Authorization`` (``Basic`` with any user name, or ``Bearer``);
            compared in constant time. Refusals are answered 407.
        max_connections: concurrent client connections; more are answered 503.
        idle_timeout: seconds without traffic (either direction) before an
            exchange is cut; also bounds reading a request head.
        connect_timeout: bound on one lookup and on each connect attempt.
        max_log_entries: the log keeps the newest this many entries.

    Raises:
        OSError: the listen address is unavailable.
        TypeError: ``policy`` is not a ``NetPolicy``.
        ValueError: a numeric argument is out of range.
    """
    if max_connections < 1 or idle_timeout <= 0 or connect_timeout <= 0 or max_log_entries < 1:
        raise ValueError("max_connections, idle_timeout, connect_timeout and max_log_entries must be positive")
    if proxy_token is not None and not proxy_token:
        raise ValueError("proxy_token must be non-empty (or None for no proxy authentication)")
    proxy = EgressProxy(
        policy,
        resolver=resolver or system_resolver,
        connector=connector or direct_connector,
        proxy_token=proxy_token,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        connect_timeout=connect_timeout,
        max_log_entries=max_log_entries,
    )
    await proxy._start(bind, port)
    return proxy


__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_REQUESTS", "EgressProxy", "start_egress_proxy"]
