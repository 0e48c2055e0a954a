"""``ServiceController``: serve the editor's program (``Sandbox.serve``) and drive the Service pane.

One service at a time. Starting, the readiness wait and stopping are
coroutines on the qasync loop (the core's backends do their blocking work
in threads), so the window keeps painting. Guest output reaches the pane
through an ``OutputBuffer`` (the core calls the log listener on the guest's
reader thread); everything else happens on the GUI thread.
"""

from __future__ import annotations

import asyncio
import enum
import importlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from playground.app.output_buffer import OutputBuffer
from playground.app.request_policy import ProxyTarget
from playground.app.tasks import BackgroundTasks
from playground.core import (
    UNLIMITED,
    Limits,
    PortMap,
    Sandbox,
    SandboxError,
    ServeOpts,
    Service,
    Spec,
    Stream,
    format_duration,
    parse_duration,
)

log = logging.getLogger(__name__)

DEFAULT_PORT = 8080
DEFAULT_TTL = "15m"
#: The longest TTL the pane accepts: a forgotten service must end on its own.
MAX_TTL = 24 * 3600.0


def _import_proxy() -> None:
    """Import the serve proxy layer (aiohttp; 0.1-0.4 s cold), which ``Sandbox.serve`` would import on the loop."""
    importlib.import_module("playground.serve")


class Phase(enum.Enum):
    IDLE = "idle"
    STARTING = "starting"
    SERVING = "serving"
    STOPPING = "stopping"


class ServiceView(Protocol):
    """What the controller needs from the Service pane (``ServicePane`` provides it)."""

    def serve_texts(self) -> tuple[str, str]: ...
    def set_phase(self, phase: Phase) -> None: ...
    def set_status(self, text: str, kind: str) -> None: ...
    def set_deadline(self, deadline: float | None) -> None: ...
    def begin_logs(self, buffer: OutputBuffer) -> None: ...
    def open_page(self, url: str, target: ProxyTarget) -> bool: ...
    def close_page(self, reason: str) -> None: ...


def parse_port(text: str) -> int:
    """The guest port field: 1-65535, empty means ``DEFAULT_PORT``.

    Raises:
        ValueError: not a port number.
    """
    cleaned = text.strip() or str(DEFAULT_PORT)
    if not cleaned.isdigit() or not 1 <= int(cleaned) <= 65535:
        raise ValueError(f"the guest port must be a number from 1 to 65535, not {text!r}")
    return int(cleaned)


def parse_ttl(text: str) -> float:
    """The TTL field (``15m``, ``90s``, ``1h``); empty means ``DEFAULT_TTL``. Never unlimited.

    Raises:
        ValueError: not a duration, not positive, unlimited or above ``MAX_TTL``.
    """
    value = parse_duration(text.strip() or DEFAULT_TTL)
    if value is UNLIMITED:
        raise ValueError("a served app needs a TTL (up to 24h), so a forgotten one ends by itself")
    assert isinstance(value, float)
    if not 0 < value <= MAX_TTL:
        raise ValueError(f"the TTL must be more than 0 and at most 24h, not {text!r}")
    return value


@dataclass(frozen=True, slots=True)
class Timings:
    """Seconds from pressing Serve: until the URL was handed out, until the page finished loading."""

    ready: float
    page: float | None = None


class ServiceController:
    """Owns at most one ``Service``. GUI thread only; ``await shutdown()`` stops it."""

    def __init__(self, sandbox: Sandbox, view: ServiceView, limits: Callable[[], Limits],
                 inputs: Callable[[], Mapping[str, bytes]], tasks: BackgroundTasks, *,
                 route: Callable[[str], Sandbox] | None = None) -> None:
        self.sandbox = sandbox
        #: The sandbox the user's backend choice routes a language to (the window's Auto/Wasm/Docker).
        self._route = route or (lambda _language: sandbox)
        self.view = view
        self.service: Service | None = None
        self.phase = Phase.IDLE
        self.closed = False
        self.timings: Timings | None = None
        self.services_ended = 0
        self.end_reason = ""
        self._limits = limits
        self._inputs = inputs
        self._tasks = tasks
        self._start_task: asyncio.Task[None] | None = None
        self._started_at = 0.0
        self._stop_requested = False
        self._backend: str | None = None

    def backend_in_use(self) -> str | None:
        """The backend of the service being started, served or stopped (None when idle), for the quit logic."""
        if self.service is not None:
            return self.service.backend
        return self._backend if self.phase is not Phase.IDLE else None

    def _set_phase(self, phase: Phase) -> None:
        self.phase = phase
        if not self.closed:
            self.view.set_phase(phase)

    def start(self, language: str, code: str) -> None:
        """Serve ``code`` as ``language`` with the pane's port and TTL. Ignored unless idle."""
        if self.phase is not Phase.IDLE or self.closed:
            return
        port_text, ttl_text = self.view.serve_texts()
        try:
            port = parse_port(port_text)
            ttl = parse_ttl(ttl_text)
            limits = self._limits()
            if not language:
                raise ValueError("no language is selected")
            spec = Spec(lang=language, code=code, files=dict(self._inputs()), limits=limits)
            opts = ServeOpts(ports=(PortMap(guest=port),), ttl=ttl)
        except (ValueError, SandboxError) as exc:  # InvalidLimits, InvalidSpec, InvalidServeOptions are ValueErrors
            self.view.set_status(f"Not served: {exc}", "error")
            return
        self._stop_requested = False
        self.timings = None
        sandbox = self._route(language)
        self._backend = sandbox.serve_status(language).backend
        self._set_phase(Phase.STARTING)
        self.view.set_status(f"Starting {language} (guest port {port}, TTL {format_duration(ttl)})…", "running")
        self._start_task = self._tasks.spawn(self._serve(sandbox, spec, opts, port, ttl))

    def stop(self) -> None:
        """Stop the service, or abandon a start in progress. Idempotent."""
        if self.phase is Phase.STARTING and self._start_task is not None:
            self._stop_requested = True
            self._start_task.cancel()
        elif self.phase is Phase.SERVING and self.service is not None:
            self._stop_requested = True
            self._set_phase(Phase.STOPPING)
            self.view.set_status("Stopping…", "running")
            self._tasks.spawn(self.service.stop())

    def page_loaded(self, ok: bool) -> None:
        """The pane finished loading the service's page (the first load is the start-up figure)."""
        if ok and self.timings is not None and self.timings.page is None and self.phase is Phase.SERVING:
            self.timings = Timings(self.timings.ready, time.monotonic() - self._started_at)
            log.info("service page shown %.2f s after Serve was pressed", self.timings.page)

    async def _serve(self, sandbox: Sandbox, spec: Spec, opts: ServeOpts, port: int, ttl: float) -> None:
        self._started_at = started = time.monotonic()
        try:
            await asyncio.to_thread(_import_proxy)  # off the GUI thread: the window keeps painting
            service = await sandbox.serve(spec, opts)
        except asyncio.CancelledError:  # the core stopped whatever it had started
            self._set_phase(Phase.IDLE)
            if not self.closed:
                self.view.set_status("Start cancelled.", "note")
            raise
        except SandboxError as exc:
            self._set_phase(Phase.IDLE)
            self.view.set_status(f"Not served: {exc}", "error")
            return
        except Exception as exc:
            log.exception("serve failed")
            self._set_phase(Phase.IDLE)
            self.view.set_status(f"Not served: internal error: {exc!r}", "error")
            return
        self.service = service
        if self.closed:
            await service.stop()
            return
        ready = time.monotonic() - started
        self.timings = Timings(ready)
        buffer = OutputBuffer()
        service.subscribe_logs(buffer.write)
        # What the guest printed before we subscribed goes first (a chunk written in between may repeat).
        earlier = service.logs()
        if earlier:
            buffer.prepend(Stream.STDOUT, earlier.encode("utf-8"))
        self.view.begin_logs(buffer)
        # The proxy's TTL clock starts a little after ``started``: never shows more time than is left.
        self.view.set_deadline(started + ttl)
        self._set_phase(Phase.SERVING)
        url = service.url_for(port)
        shown = self.view.open_page(url, ProxyTarget.from_addr(service.addr(port), service.token or ""))
        where = f"Serving on {url} ({service.backend}, ready after {ready:.1f} s)"
        if not shown:
            where += "; open it with the header Authorization: Bearer <token> (the token is in service.token)"
        self.view.set_status(where, "ok")
        self._tasks.spawn(self._watch(service, buffer, ttl))

    async def _watch(self, service: Service, buffer: OutputBuffer, ttl: float) -> None:
        try:
            err = await service.wait()
        finally:
            buffer.finish()
        if err is not None:
            reason, kind = f"The service ended: {err}", "error"
        elif self._stop_requested:
            reason, kind = "Stopped by you.", "note"
        elif time.monotonic() - self._started_at >= ttl - 1.0:
            reason, kind = f"The service ended: its TTL of {format_duration(ttl)} ran out.", "note"
        else:
            reason, kind = "The service ended.", "note"
        self.end_reason = reason
        self.service = None
        self.services_ended += 1
        self._set_phase(Phase.IDLE)
        if not self.closed:
            self.view.set_deadline(None)
            self.view.close_page(reason)
            self.view.set_status(reason, kind)

    async def shutdown(self) -> None:
        """Stop the service (if any) and wait until it is down. Idempotent."""
        self.closed = True
        if self._start_task is not None and not self._start_task.done():
            self._start_task.cancel()
            await asyncio.gather(self._start_task, return_exceptions=True)
        service, self.service = self.service, None
        if service is not None:
            await service.stop()
