"""Serving guest web services: ``ServeOpts``, ``Service`` and the backend contract.

A backend starts the guest server (``GuestService``) and says how to reach
each guest port: a TCP address on a network only the host can reach (a
container on an internal Docker network) or an in-process handler (the
Wasm handler bridge: one request, one call into the live instance). The
core puts one authenticated reverse proxy per port in front of it, bound to
127.0.0.1 unless asked otherwise, and hands out URLs only after the
readiness probe passed. The proxy implementation is injected as a
``ProxyStarter`` (``playground.assembly`` hands in the aiohttp one of
``playground.serve``), so the core stays stdlib-only, serving included.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import logging
import secrets
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from playground.core.errors import InvalidServeOptions, SandboxError, ServeError
from playground.core.limits import Limits
from playground.core.output import Stream
from playground.core.pack import Pack
from playground.core.result import Outcome
from playground.core.spec import Spec
from playground.core.vfs import VFS

log = logging.getLogger(__name__)

#: Bind only the loopback interface (the default).
LOOPBACK = "127.0.0.1"
#: Bind every interface: the service becomes reachable from other machines.
ALL_INTERFACES = "0.0.0.0"

#: Request or response headers as (name, value) pairs; repeated names are kept.
Headers = Sequence[tuple[str, str]]
#: ``async (method, path_qs, headers, body) -> (status, headers, body)``: one request, one call.
Handler = Callable[[str, str, Headers, bytes], Awaitable[tuple[int, Headers, bytes]]]


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


@dataclass(frozen=True, slots=True)
class TCPAddress:
    """Where the host reaches a guest port: an address only the host can reach."""

    host: str
    port: int


Upstream = TCPAddress | Handler


class LogBuffer:
    """The service's stdout/stderr as a bounded ring of bytes; never stops the guest.

    Thread-safe: the guest's worker appends, anyone reads.
    """

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Stream, bytes], None]] = []

    def write(self, stream: Stream, data: bytes) -> int:
        data = bytes(data)
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            while self._size > self._max and self._chunks:
                dropped = self._chunks.popleft()
                self._size -= len(dropped)
                self._dropped += len(dropped)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(stream, data)
        return len(data)

    def write_stdout(self, data: bytes) -> int:
        return self.write(Stream.STDOUT, data)

    def write_stderr(self, data: bytes) -> int:
        return self.write(Stream.STDERR, data)

    def subscribe(self, listener: Callable[[Stream, bytes], None]) -> None:
        """Also call ``listener`` with every chunk from now on (on the writing thread)."""
        with self._lock:
            self._listeners.append(listener)

    def text(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")

    @property
    def dropped(self) -> int:
        """Bytes that fell off the front of the ring."""
        with self._lock:
            return self._dropped


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeRequest:
    """What the core hands a backend to start a guest server.

    Guest output goes to ``logs`` (a ring, never a cap). ``limits`` apply to
    the guest (memory, files; ``wall_time`` bounds each handler call on the
    handler bridge); the service's life is bounded by ``ServeOpts.ttl``.
    """

    pack: Pack
    spec: Spec
    limits: Limits
    vfs: VFS
    logs: LogBuffer
    stdin: bytes
    ports: tuple[int, ...]


@runtime_checkable
class GuestService(Protocol):
    """A running guest server inside a backend."""

    def upstream(self, guest_port: int) -> Upstream:
        """How the proxy reaches ``guest_port``: a private TCP address or a handler."""
        ...

    async def wait(self) -> Outcome:
        """Return when the guest exits on its own (or raise the limit it hit)."""
        ...

    async def stop(self) -> None:
        """Stop the guest and free everything. Idempotent."""
        ...


@runtime_checkable
class ServeBackend(Protocol):
    """Optional backend extension: backends that can run servers."""

    def serve_unavailable_reason(self, pack: Pack) -> str | None: ...

    async def serve(self, request: ServeRequest) -> GuestService: ...


class ProxyHandle(Protocol):
    """What the core needs of a running reverse proxy (``playground.serve.RunningProxy``)."""

    @property
    def url(self) -> str: ...

    @property
    def addr(self) -> str: ...

    @property
    def token(self) -> str | None: ...

    @property
    def done(self) -> asyncio.Event: ...

    @property
    def error(self) -> BaseException | None: ...

    def recent_logs(self, limit: int | None = None) -> list[str]: ...

    async def stop(self) -> None: ...

    async def fail(self, error: BaseException) -> None: ...


#: Starts one proxy: (options, token or None, the port map, upstream, error hook) -> handle.
#: ``playground.serve.start_service_proxy`` is the one the assembly point hands to ``Sandbox``.
ProxyStarter = Callable[
    [ServeOpts, "str | None", PortMap, Upstream, Callable[[BaseException], None]], Awaitable[ProxyHandle]
]


class Service:
    """A running, exposed guest service. Create with ``Sandbox.serve``.

    ``done`` is set when the service ended for any reason (stopped, TTL,
    guest exit or crash); ``err`` then says why, or is None after a clean
    ``stop()`` or TTL. ``stop()`` is idempotent.
    """

    def __init__(self, guest: GuestService, proxies: dict[int, ProxyHandle], token: str | None,
                 logs: LogBuffer, backend: str) -> None:
        self._guest = guest
        self._proxies = proxies
        self._token = token
        self._logs = logs
        self.backend = backend
        self.done = asyncio.Event()
        self.err: BaseException | None = None
        self.outcome: Outcome | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping: asyncio.Task[None] | None = None

    def _start_watching(self) -> None:
        self._watcher = asyncio.get_running_loop().create_task(self._watch(), name="service-watch")

    @property
    def url(self) -> str:
        """The URL of the first exposed port (send ``Authorization: Bearer <token>``)."""
        return next(iter(self._proxies.values())).url

    @property
    def token(self) -> str | None:
        """The bearer token every request needs, or None without auth."""
        return self._token

    def url_for(self, guest_port: int) -> str:
        return self._proxy(guest_port).url

    def addr(self, guest_port: int) -> str:
        """``host:port`` on the host for ``guest_port``."""
        return self._proxy(guest_port).addr

    def _proxy(self, guest_port: int) -> ProxyHandle:
        try:
            return self._proxies[guest_port]
        except KeyError:
            raise ServeError(f"guest port {guest_port} is not exposed; exposed: {sorted(self._proxies)}") from None

    def logs(self) -> str:
        """What the guest printed recently (stdout and stderr, interleaved)."""
        return self._logs.text()

    def recent_logs(self) -> str:
        """Guest output plus the proxies' access log lines."""
        access = [line for proxy in self._proxies.values() for line in proxy.recent_logs()]
        return self._logs.text() + "".join(line + "\n" for line in access)

    def subscribe_logs(self, listener: Callable[[Stream, bytes], None]) -> None:
        """Stream future guest output to ``listener`` (called on the guest's thread)."""
        self._logs.subscribe(listener)

    async def _watch(self) -> None:
        guest_exit = asyncio.ensure_future(self._guest.wait())
        proxy_done = [asyncio.ensure_future(p.done.wait()) for p in self._proxies.values()]
        try:
            await asyncio.wait([guest_exit, *proxy_done], return_when=asyncio.FIRST_COMPLETED)
            if guest_exit.done():
                exc = guest_exit.exception()
                if exc is None:
                    self.outcome = guest_exit.result()
                    self.err = ServeError(f"the guest server exited with code {self.outcome.exit_code}")
                else:
                    self.err = exc
            else:
                self.err = next((p.error for p in self._proxies.values() if p.error is not None), None)
        except asyncio.CancelledError:
            pass
        finally:
            for task in (guest_exit, *proxy_done):
                task.cancel()
            await self._shutdown()

    async def _shutdown(self) -> None:
        for proxy in self._proxies.values():
            try:
                if self.err is not None:
                    await proxy.fail(self.err)
                else:
                    await proxy.stop()
            except Exception:  # a proxy that fails to stop must not keep the guest alive
                log.exception("stopping a service proxy failed")
        try:
            await self._guest.stop()
        finally:
            self.done.set()

    async def stop(self) -> None:
        """Stop the proxies and the guest; return when both are down. Idempotent."""
        if self._watcher is not None and not self._watcher.done():
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if not self.done.is_set():
            await self._shutdown()

    async def wait(self) -> BaseException | None:
        """Wait until the service ended; return ``err``."""
        await self.done.wait()
        return self.err

    async def __aenter__(self) -> Service:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def start_service(
    backend: ServeBackend, backend_name: str, request: ServeRequest, opts: ServeOpts, starter: ProxyStarter
) -> Service:
    """Start the guest, put a proxy in front of every port, return once all are ready.

    On any failure everything already started is stopped again before the
    error leaves.
    """
    guest = await backend.serve(request)
    proxies: dict[int, ProxyHandle] = {}
    def upstream_failed(exc: BaseException) -> None:
        log.info("service upstream error: %s", exc)

    async def undo() -> None:
        for proxy in proxies.values():
            with contextlib.suppress(Exception):
                await proxy.stop()
        await guest.stop()

    try:
        token: str | None = None
        if opts.auth is AuthMode.BEARER:
            token = opts.token or secrets.token_urlsafe(32)
        for port_map in opts.ports:
            upstream = guest.upstream(port_map.guest)
            proxies[port_map.guest] = await starter(opts, token, port_map, upstream, upstream_failed)
    except SandboxError:
        await undo()
        raise
    except Exception as exc:
        await undo()
        raise ServeError(f"could not expose the service: {exc}") from exc
    except BaseException:
        await undo()
        raise
    service = Service(guest, proxies, token, request.logs, backend_name)
    service._start_watching()
    return service
