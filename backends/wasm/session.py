"""REPL sessions on the Wasm backend: one live instance per session, on its own worker thread.

``open_session`` starts the pack's runtime with its REPL driver (the
pack's ``WasmSpec.session``: a script of ours from ``resources/drivers``
passed on the command line, or ``qjs --repl``) and
returns when the driver first waits for input; a pack with a session
snapshot (``WasmSpec.session_snapshot``: Python) starts from it instead, a
fresh instance of the interpreter captured with the driver compiled
(``image_source``), and falls back to a cold start where a one-shot run
would. The instance then lives
on its worker thread, blocked in ``fd_read`` on stdin between evals (no
deadline, no epoch ticks); each ``eval`` hands it one framed input and
waits for the driver to ask for the next (see ``channel`` for the
framing, the control channel and why guest output can never end an eval).
``interrupt`` (Ctrl-C) stops a running eval without killing the
interpreter: JavaScript and Lua drivers poll the channel's interrupt
flag; for Python the host sets CPython's own SIGINT words
(``cpython_signals``, pinned per runtime binary) and the driver's handler
raises ``KeyboardInterrupt``.

Limits: each eval has its own wall and CPU budget (``RunControl.arm`` on
the same store, on the guest thread) and its own ``OutputCapture``;
memory (the run's ``memlimit`` budget) and the filesystem quota belong to the
whole session. A limit, a trap, ``exit()`` in the guest or a cancelled
eval ends the instance: ``alive`` turns False and the core decides
between ``SessionKilled`` and a restart.

Threads: the worker thread owns the Store from creation to close; the
event loop only hands over tickets and waits on futures settled with
``call_soon_threadsafe``. ``close()`` stops the instance and joins the
worker (a few milliseconds: a waiting driver wakes at once, running wasm
stops at the next epoch tick).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Final

import wasmtime

from backends.wasm import cpython_signals, live, runner, snapshot
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.channel import SESSION_DIR, EvalEnd, EvalTicket, SessionChannel
from backends.wasm.cpython_signals import SignalWords
from backends.wasm.engine import WasmEngine
from backends.wasm.modcache import ModuleCache
from playground.core.attempts import AttemptLog
from playground.core.errors import BackendUnavailable, SessionClosed
from playground.core.handoff import Delivery
from playground.core.keyboard import InputStream
from playground.core.limits import ResolvedLimits
from playground.core.output import OutputCapture
from playground.core.pack import Pack, WasmSnapshot
from playground.core.result import Outcome
from playground.core.session import SessionRequest
from playground.resource_files import resource_path

log = logging.getLogger(__name__)

#: Where our driver scripts live (data files of the repository, next to the packages).
DRIVER_DIR: Final = resource_path("drivers")
#: Start-up (driver import, first prompt) may take at least this long, whatever the per-eval limit.
#: Output the driver may produce before its first prompt (kept for the error message if it fails).
STARTUP_OUTPUT: Final = 64 << 10
_session_ids = itertools.count(1)
#: id(session_snapshot) -> (it, the driver script, it with the script in place); it is held, so its id is not reused.
_snapshots: dict[int, tuple[WasmSnapshot, str, WasmSnapshot]] = {}
_snapshots_lock = threading.Lock()


def signal_words_of(pack: Pack) -> SignalWords | None:
    """The SIGINT words for ``pack``'s runtime when its driver is interrupted by signal, else None."""
    spec = pack.wasm
    if spec is None or spec.module is None or spec.session is None or spec.session.interrupt != "signal":
        return None
    return cpython_signals.words_for(spec.module.sha256)


def driver_unavailable_reason(pack: Pack) -> str | None:
    """None when ``pack`` names a REPL driver this backend has; else why not."""
    spec = pack.wasm
    if spec is None or spec.module is None:
        return f"{pack.name} has no interpreter to keep alive"
    driver = spec.session
    if driver is None:
        return f"{pack.name} names no REPL driver"
    if spec.transform:
        return f"{pack.name} needs a source transform, which sessions do not apply"
    if driver.script and not (DRIVER_DIR / driver.script).is_file():
        return f"REPL driver {driver.script} is missing from {DRIVER_DIR}"
    return None


def session_snapshot(pack: Pack) -> WasmSnapshot | None:
    """``pack``'s session snapshot with its driver script in place of ``{driver}``; None: sessions start cold.

    Cold also for a runtime with mounts (its data tree is placed per session) and without its driver file.
    """
    spec = pack.wasm
    if spec is None or spec.session_snapshot is None or spec.session is None or spec.mounts:
        return None
    try:
        script = (DRIVER_DIR / spec.session.script).read_text("utf-8")
    except OSError:  # driver_unavailable_reason says so
        return None
    snap = spec.session_snapshot
    with _snapshots_lock:
        cached = _snapshots.get(id(snap))
        if cached is not None and cached[0] is snap and cached[1] == script:
            return cached[2]  # the same object: ``Snapshots.key`` remembers its key by identity
        made = dataclasses.replace(snap, capture_args=tuple(a.replace("{driver}", script) for a in snap.capture_args))
        if len(_snapshots) >= 16:  # pack data: a handful
            _snapshots.clear()
        _snapshots[id(snap)] = (snap, script, made)
        return made


def image_source(
    snapshots: snapshot.Snapshots, pack: Pack, env: Mapping[str, str]
) -> live.ImageSource | None:
    """Where a session of ``pack`` with ``env`` starts from its snapshot; None: it starts cold.

    Cold where a one-shot run would be (an environment variable the
    interpreter reads while it starts), and when the snapshot cannot be
    built here (``Snapshots.image`` then returns None on the worker thread).
    """
    snap = session_snapshot(pack)
    if snap is None or snap.needs_cold_start(env, pack.wasm.env if pack.wasm else None):
        return None
    assert pack.wasm is not None and pack.wasm.session is not None
    data = snapshot.payload(snap, [pack.name, *pack.wasm.session.args], dict(env))
    if data is None or len(data) > snapshot.MAX_PAYLOAD:
        return None

    def start() -> tuple[wasmtime.Module, runner.ImageStart] | None:
        got = snapshots.image(pack, None, snap, preopens=(SESSION_DIR,))
        if got is None:
            return None
        module, image = got
        snapshots.warm_up(pack, module, image, snap=snap, preopens=(SESSION_DIR,))
        return module, image.start(f"the {pack.name} session snapshot", data)

    return start


def driver_argv(pack: Pack) -> list[str]:
    """argv of the session's instance: ``[pack.name, *driver args]``."""
    assert pack.wasm is not None and pack.wasm.session is not None
    driver = pack.wasm.session
    script = (DRIVER_DIR / driver.script).read_text("utf-8") if driver.script else ""
    if script and pack.wasm.session_prelude:
        script = pack.wasm.session_prelude + "\n" + script
    return [pack.name, *(arg.replace("{driver}", script) for arg in driver.args)]


class WasmGuestSession:
    """One live interpreter (``GuestSession``). One eval at a time; ``close()`` from any thread.

    Lifecycle: starting -> alive -> (a limit, a trap, the guest's own
    exit, a cancelled eval, or ``close()``) -> dead. Dead is final.
    """

    def __init__(self, channel: SessionChannel, thread: threading.Thread, *, interruptible: bool = False) -> None:
        self._channel = channel
        self._thread = thread
        self._closed = False
        self._interruptible = interruptible

    @property
    def alive(self) -> bool:
        return not self._closed and self._channel.usable

    def interrupt(self) -> bool:
        """Ask the running eval to stop and keep the interpreter; True if this driver can (any thread).

        The eval then ends soon (within a few thousand guest operations)
        with an error outcome and its ``interrupted`` message on stderr;
        globals survive. False for drivers that cannot be interrupted (a
        Python runtime without pinned signal words): the caller must cancel
        the eval, which ends the session.
        Harmless when nothing runs (the flag belongs to one eval only).
        """
        if self._closed or not self._interruptible:
            return False
        self._channel.interrupt()
        return True

    async def eval(
        self, code: str, output: OutputCapture, limits: ResolvedLimits, *, input: InputStream | None = None,
        attempts: AttemptLog | None = None,
    ) -> Outcome:
        """Run ``code`` in the live interpreter; see ``GuestSession.eval``.

        ``input`` is what the code reads from its stdin: the drivers of
        Python and Lua make ``/.session/stdin`` their user code's stdin, and
        JavaScript's ``readStdin()`` / ``fs.readFileSync(0)`` read it up to
        Ctrl-D (see ``channel``).

        Cancellation: stops the eval and kills the instance; the worker
        thread has closed the Store before ``CancelledError`` leaves.

        Raises:
            SessionClosed: closed before or during the eval.
            TimeLimitExceeded, MemoryLimitExceeded, OutputLimitExceeded,
            FSQuotaExceeded: a limit tripped; the instance is dead.
            HostFailure: the instance could not run (a bug of ours).
        """
        if self._closed:
            raise SessionClosed("the session is closed")
        delivery: Delivery[Outcome] = Delivery(live.translate)
        ticket = EvalTicket(
            code=code.encode("utf-8", "replace"),
            output=output,
            wall_limit=limits.wall_time_cap,
            cpu_limit=limits.cpu_time_cap,
            on_done=delivery.settle,
            keyboard=input,
            attempts=attempts if attempts is not None else AttemptLog(),
        )
        try:
            self._channel.submit(ticket)
        except RuntimeError:
            raise SessionClosed("the session's interpreter is not running") from None
        try:
            return await delivery.wait(self._channel.kill)
        except runner.RunCancelled:
            raise SessionClosed("the session was closed during the eval") from None

    def close(self, *, join: bool = True) -> None:
        """Stop the instance and wait for its worker thread (``join`` False: don't wait). Idempotent, never raises."""
        if self._closed:
            return
        self._closed = True
        live.stop_instance(self._channel, self._thread, "session", join=join)


async def open_session(
    engine: WasmEngine,
    modules: ModuleCache,
    artifacts: ArtifactStore,
    request: SessionRequest,
    start_worker: Callable[[Callable[[], None], str], threading.Thread],
    *,
    snapshots: snapshot.Snapshots | None = None,
) -> WasmGuestSession:
    """Start the pack's interpreter with its REPL driver; return once it waits for input.

    With ``snapshots``, a pack with a session snapshot starts from it (a
    fresh instance of the captured interpreter whose driver then runs:
    ``image_source``); otherwise, or where that is not possible, cold.

    Cancellation: stops the start-up at once; the worker is not waited for
    (it may still be compiling the runtime), but no guest code runs after it.

    Raises:
        BackendUnavailable: no driver for the pack, runtime missing or corrupt.
        TimeLimitExceeded, MemoryLimitExceeded: start-up hit a limit.
        HostFailure: the driver exited or crashed before its first prompt
            (the message carries what it printed).
    """
    pack = request.pack
    reason = driver_unavailable_reason(pack)
    if reason is not None:
        raise BackendUnavailable(f"wasm sessions cannot run {pack.name}: {reason}")
    spec = pack.wasm
    assert spec is not None and spec.module is not None
    control = live.startup_control(request.limits)
    memory_limit = request.limits.memory_cap
    ready_delivery: Delivery[Outcome | None] = Delivery(live.translate)
    ready = ready_delivery.future

    def on_ready(result: EvalEnd | None) -> None:
        # None: the driver waits for its first input. Anything else: the instance ended first.
        ready_delivery.settle(result)

    driver = spec.session
    assert driver is not None  # driver_unavailable_reason above
    signal_words = signal_words_of(pack)
    channel = SessionChannel(
        control, memory_limit=memory_limit, ticker=engine, on_ready=on_ready, signal_words=signal_words
    )
    startup_output = OutputCapture(STARTUP_OUTPUT)
    env = {**spec.env, **request.env}
    image = image_source(snapshots, pack, env) if snapshots is not None else None
    thread = live.start_instance(
        engine=engine, modules=modules, artifacts=artifacts, pack=pack, channel=channel, control=control,
        argv=driver_argv(pack), env=env, vfs=request.vfs, output=startup_output, memory_limit=memory_limit,
        start_worker=start_worker, name=f"wasm-session-{next(_session_ids)}", image=image,
        cold=(lambda: snapshots.cold_start(pack, None)) if snapshots is not None else None,
    )  # fmt: skip
    interruptible = driver.interrupt == "poll" or signal_words is not None
    session = WasmGuestSession(channel, thread, interruptible=interruptible)
    try:
        ended_early = await asyncio.shield(ready)
    except runner.RunCancelled:
        session.close()
        raise asyncio.CancelledError() from None
    except asyncio.CancelledError:
        # The worker may still be compiling the runtime (a cold cache: seconds, not interruptible): the
        # kill alone ensures no guest code runs, so the event loop does not wait for it (see stop_instance).
        session.close(join=False)
        raise
    except BaseException:
        session.close()
        raise
    if ended_early is not None:
        session.close()
        text = (startup_output.stderr() or startup_output.stdout()).decode("utf-8", "replace").strip()
        raise runner.HostFailure(
            f"the {pack.name} REPL driver stopped before its first prompt "
            f"(exit code {ended_early.exit_code}): {text[-2000:]}"
        )
    return session
