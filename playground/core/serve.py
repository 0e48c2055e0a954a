"""Serving guest web services: the ``Service`` lifecycle, from ``start_service`` to ``stop()``.

``start_service`` has the backend start the guest server, puts one
authenticated reverse proxy per port in front of it (bound to 127.0.0.1
unless asked otherwise) and hands out URLs only after the readiness probe
passed; ``Service`` then watches guest and proxies and takes both down
together. The parts it builds on have modules of their own: the options
(:mod:`playground.core.serve_options`), the backend contract
(:mod:`playground.core.serve_backend`) and the proxy contract
(:mod:`playground.core.serve_proxy`). Their names are re-exported here, so
``playground.core.serve`` stays the one import for all of serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable

from playground.core.errors import SandboxError, ServeError
from playground.core.output import Stream
from playground.core.result import Outcome
from playground.core.serve_backend import (
    GuestService,
    Handler,
    Headers,
    LogBuffer,
    ServeBackend,
    ServeRequest,
    TCPAddress,
    Upstream,
)
from playground.core.serve_options import (
    ALL_INTERFACES,
    LOOPBACK,
    AuthMode,
    HTTPReady,
    PortMap,
    ReadinessProbe,
    ServeOpts,
    TCPReady,
)
from playground.core.serve_proxy import ProxyHandle, ProxyStarter

__all__ = [
    "ALL_INTERFACES",
    "LOOPBACK",
    "AuthMode",
    "GuestService",
    "HTTPReady",
    "Handler",
    "Headers",
    "LogBuffer",
    "PortMap",
    "ProxyHandle",
    "ProxyStarter",
    "ReadinessProbe",
    "ServeBackend",
    "ServeOpts",
    "ServeRequest",
    "Service",
    "TCPAddress",
    "TCPReady",
    "Upstream",
    "start_service",
]

log = logging.getLogger(__name__)


class Service:
    """A running, exposed guest service. Create with ``Sandbox.serve``.

    ``done`` is set when the service ended for any reason (stopped, TTL,
    guest exit or crash); ``err`` then says why, or is None after a clean
    ``stop()`` or TTL. ``stop()`` is idempotent.
    """

    def __init__(
        self, guest: GuestService, proxies: dict[int, ProxyHandle], token: str | None, logs: LogBuffer, backend: str
    ) -> None:
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
