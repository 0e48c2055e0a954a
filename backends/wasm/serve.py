"""The Wasm handler bridge: a served program is one live instance, each HTTP request one call into it.

``start_service`` writes the program to ``/work/<main_file>``, starts the
pack's runtime with its serve driver (``qjs --serve /work/main.js``) on
its own worker thread and returns once the program has registered its
handler and the driver waits for the first request. Requests then travel
as frames on the instance's stdin and responses come back on its control
channel (``serve_channel``; the blocking and deadline machinery is the
REPL sessions' ``SessionChannel``).

Guarantees:

* One instance serves every exposed port; requests are serialized into
  it in arrival order (one at a time), so program state (a counter)
  persists across requests and nothing runs concurrently inside it.
* Each request has its own wall-time and CPU budget (``Limits.wall_time``
  and ``cpu_time``); memory and the filesystem quota belong to the
  instance. A request that hits a limit gets an error response (504 for
  time) and kills the instance: ``wait()`` then raises that limit's
  error, and the core ends the service with it.
* A handler that throws gets a 500 (the driver logs the stack); the
  instance lives on. The guest calling ``process.exit()`` ends the
  instance: the request gets a 502 and ``wait()`` returns the outcome.
* Guest stdout/stderr go to the service's ``LogBuffer`` (a ring, never a
  cap) and are never parsed.
* A client that disconnects (the proxy cancels the handler call) does not
  stop a request already inside the guest: it runs to its end within its
  budget and its response is dropped. A request still queued is dropped.

Threads: as for sessions, the worker thread owns the Store; the event
loop hands over tickets and waits on futures settled with
``call_soon_threadsafe``. ``stop()`` kills the instance and joins the
worker off the event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Final

from backends.wasm import launch, live, runner
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.channel import EvalEnd
from backends.wasm.engine import WasmEngine
from backends.wasm.modcache import ModuleCache
from backends.wasm.serve_channel import ServeChannel, ServeTicket, request_payload
from playground.core.errors import (
    BackendUnavailable,
    FSQuotaExceeded,
    LimitExceeded,
    MemoryLimitExceeded,
    ServeError,
    TimeLimitExceeded,
)
from playground.core.handoff import Delivery
from playground.core.output import OutputCapture, Stream
from playground.core.pack import Pack
from playground.core.result import Outcome
from playground.core.serve import Handler, Headers, LogBuffer, ServeRequest
from playground.core.spec import Spec

log = logging.getLogger(__name__)

_service_ids = itertools.count(1)
_TEXT: Final = (("Content-Type", "text/plain; charset=utf-8"),)

Reply = tuple[int, Headers, bytes]


def bridge_unavailable_reason(pack: Pack) -> str | None:
    """None when ``pack`` has a handler bridge on this backend; else why not."""
    spec = pack.wasm
    if spec is None or spec.module is None or not spec.serve_args:
        return f"no handler bridge for {pack.name}"
    if spec.transform:
        return f"no handler bridge for {pack.name} (it needs a {spec.transform} transform first)"
    return None


def serve_argv(pack: Pack, spec: Spec) -> list[str]:
    """argv of the serving instance: ``[pack.name, *driver args]``."""
    assert pack.wasm is not None
    result = [pack.name]
    for template in pack.wasm.serve_args:
        if template == "{args}":
            result.extend(spec.args)
        else:
            result.append(template.replace("{main}", launch.main_path(pack, spec)))
    return result


class LogOutput(OutputCapture):
    """Guest output into the service's ``LogBuffer``: forwarded as it comes, never capped, never kept here."""

    def __init__(self, logs: LogBuffer) -> None:
        super().__init__(None)
        self._logs = logs

    def write(self, stream: Stream, data: bytes | bytearray | memoryview) -> int:
        if data:
            self._logs.write(stream, bytes(data))
        return len(data)


def _plain(status: int, text: str) -> Reply:
    return status, _TEXT, (text + "\n").encode("utf-8")


class WasmGuestService:
    """A served program (``GuestService``): one live instance behind one handler for every port.

    Lifecycle: running -> (a limit, a trap, the guest's own exit, or
    ``stop()``) -> ended. Ended is final; requests then get 503.
    """

    def __init__(
        self, channel: ServeChannel, thread: threading.Thread, ended: asyncio.Future[Outcome], request: ServeRequest
    ) -> None:
        self._channel = channel
        self._thread = thread
        self._ended = ended
        self._output = LogOutput(request.logs)
        self._wall = request.limits.wall_time_cap
        self._cpu = request.limits.cpu_time_cap
        self._lock = asyncio.Lock()
        self._stopped = False
        #: The limit a request hit that doomed the instance (set on the worker thread before it stops).
        self._fatal: LimitExceeded | None = None

    def upstream(self, guest_port: int) -> Handler:
        """The in-process handler; the same instance answers every port."""
        return self._handle

    async def wait(self) -> Outcome:
        """Return the outcome when the guest exits on its own; raise the limit error that killed it.

        Raises:
            TimeLimitExceeded, MemoryLimitExceeded, FSQuotaExceeded: a request hit a limit.
            ServeError: the service was stopped.
            HostFailure: the instance failed (a bug of ours).
        """
        try:
            return await asyncio.shield(self._ended)
        except runner.RunCancelled:
            if self._fatal is not None:  # the channel stopped the instance because of this limit
                raise self._fatal from None
            raise ServeError("the service was stopped") from None

    async def stop(self) -> None:
        """Kill the instance and wait for its worker thread. Idempotent, never raises."""
        if self._stopped:
            return
        self._stopped = True
        try:
            await asyncio.to_thread(live.stop_instance, self._channel, self._thread, "service")
        except Exception:  # no executor left (the loop is shutting down): stop it without waiting
            log.exception("stopping a wasm service failed")
            self._channel.kill()

    async def _handle(self, method: str, path_qs: str, headers: Headers, body: bytes) -> Reply:
        """One request, one call into the instance (queued behind earlier ones).

        Cancellation: a request still queued is dropped; one already inside
        the guest runs to its end (within its budget) and its response is
        dropped, so a client hanging up never kills the service.
        """
        payload = request_payload(method, path_qs, headers, body)
        submitted = asyncio.Event()
        exchange = asyncio.ensure_future(self._exchange(payload, submitted))
        try:
            return await asyncio.shield(exchange)
        except asyncio.CancelledError:
            if not submitted.is_set():
                exchange.cancel()
            raise

    async def _exchange(self, payload: bytes, submitted: asyncio.Event) -> Reply:
        async with self._lock:
            if self._stopped or not self._channel.usable:
                return _plain(503, "the service is not running")
            delivery: Delivery[Outcome] = Delivery(live.translate)
            done = delivery.future

            def on_done(result: EvalEnd) -> None:  # worker thread, before the instance stops
                if isinstance(result, LimitExceeded):
                    self._fatal = result
                delivery.settle(result)

            ticket = ServeTicket(
                code=payload, output=self._output, wall_limit=self._wall, cpu_limit=self._cpu, on_done=on_done
            )
            try:
                self._channel.submit(ticket)
            except RuntimeError:
                return _plain(503, "the service is not running")
            submitted.set()
            await asyncio.wait({done})
        if done.cancelled():  # never: only the worker settles it
            return _plain(502, "the request was lost")
        error = done.exception()
        if error is not None:
            return _error_reply(error, self._wall)
        response = ticket.response
        if response is None:
            outcome = done.result()
            if not self._channel.usable:
                return _plain(502, f"the guest exited (code {outcome.exit_code}) while handling the request")
            return _plain(502, "the guest gave no response")
        return response.status, response.headers, response.body


def _retrieve(done: asyncio.Future[Outcome]) -> None:
    if not done.cancelled():
        done.exception()


def _error_reply(error: BaseException, wall: float | None) -> Reply:
    if isinstance(error, TimeLimitExceeded):
        if error.limit == "cpu_time":
            return _plain(504, "the request handler exceeded its CPU time limit; the service was stopped")
        return _plain(504, f"the request handler exceeded its wall time limit of {wall:g} s; the service was stopped")
    if isinstance(error, MemoryLimitExceeded):
        return _plain(503, "the service ran out of memory and was stopped")
    if isinstance(error, FSQuotaExceeded):
        return _plain(503, "the service exceeded its filesystem quota and was stopped")
    if isinstance(error, LimitExceeded):
        return _plain(503, f"the service hit a limit and was stopped: {error}")
    if isinstance(error, runner.RunCancelled):
        return _plain(503, "the service was stopped")
    log.warning("wasm service request failed: %r", error)
    return _plain(502, "the service failed")


async def start_service(
    engine: WasmEngine,
    modules: ModuleCache,
    artifacts: ArtifactStore,
    request: ServeRequest,
    start_worker: Callable[[Callable[[], None], str], threading.Thread],
) -> WasmGuestService:
    """Start the program with its serve driver; return once its handler waits for the first request.

    Start-up (compiling the runtime, evaluating the program) has at least
    ``live.STARTUP_TIME`` of wall and CPU time, whatever the per-request limit.

    Cancellation: stops the start-up; the worker is waited for.

    Raises:
        BackendUnavailable: no handler bridge for the pack, runtime missing or corrupt.
        FSQuotaExceeded: the program does not fit in the filesystem quota.
        TimeLimitExceeded, MemoryLimitExceeded: start-up hit a limit.
        ServeError: the program ended before serving (a syntax error, no
            handler registered, ``process.exit``); the message carries what
            it printed.
    """
    pack = request.pack
    reason = bridge_unavailable_reason(pack)
    if reason is not None:
        raise BackendUnavailable(f"wasm backend cannot serve {pack.name}: {reason}")
    spec = pack.wasm
    assert spec is not None and spec.module is not None
    launch.place_program(request.vfs, launch.main_path(pack, request.spec), request.spec.code_bytes)
    control = live.startup_control(request.limits)
    memory_limit = request.limits.memory_cap
    ready_delivery: Delivery[Outcome | None] = Delivery(live.translate)
    ready = ready_delivery.future
    ended_delivery: Delivery[Outcome] = Delivery(live.translate)
    ended = ended_delivery.future
    ended.add_done_callback(_retrieve)  # nobody need ever wait() for it

    def on_ready(result: EvalEnd | None) -> None:
        # None: the driver waits for its first request. Anything else: the instance ended first.
        ready_delivery.settle(result)

    channel = ServeChannel(control, memory_limit=memory_limit, ticker=engine, on_ready=on_ready)
    thread = live.start_instance(
        engine=engine, modules=modules, artifacts=artifacts, pack=pack, channel=channel, control=control,
        argv=serve_argv(pack, request.spec), env=launch.environment(pack, request.spec), vfs=request.vfs,
        output=LogOutput(request.logs), memory_limit=memory_limit, start_worker=start_worker,
        name=f"wasm-serve-{next(_service_ids)}", on_end=ended_delivery.settle,
    )  # fmt: skip
    service = WasmGuestService(channel, thread, ended, request)
    try:
        ended_early = await asyncio.shield(ready)
    except runner.RunCancelled:
        await service.stop()
        raise asyncio.CancelledError() from None
    except BaseException:
        await service.stop()
        raise
    if ended_early is not None:
        await service.stop()
        text = request.logs.text().strip()
        raise ServeError(
            f"the {pack.name} program did not start serving (exit code {ended_early.exit_code}): {text[-2000:]}"
        )
    return service
