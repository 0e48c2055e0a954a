"""The process-wide wasmtime Engine, its Linker, the epoch ticker and the run registry.

One ``WasmEngine`` per process (``shared_engine()``, created lazily and
thread-safely): Cranelift, epoch interruption, ``max_wasm_stack`` = 2 MiB
(larger values abort the process), Wasm exceptions on, and
``memory_may_move=False`` (so ``GuestMemory`` can keep a view).

Per-run wall time and cancellation (how one run is stopped alone): every
Store gets a one-tick epoch deadline and an epoch-deadline callback
(``wasmtime_store_epoch_deadline_callback``). A single daemon ticker thread
bumps the engine epoch every ``TICK`` seconds while at least one run is
active; each bump makes every running store call its callback, which
looks the run up by its Store context and either extends the deadline by
one tick or returns an error when *that* run's control says stop
(cancelled, wall deadline passed, CPU budget spent). The epoch is shared,
the decision is per store, so cancelling one run never trips another.

CPU time: the callback runs on the guest's own thread, so it compares
``time.thread_time()`` (the guest thread's CPU time, wasm and host
functions alike) against the run's CPU budget. This replaces fuel: it
measures CPU seconds directly, needs no second Engine (and no second
compiled copy of every runtime), and costs nothing per instruction. It is
precise to one tick (~5 ms) plus the time until the guest next reaches
an epoch check (function entry or loop back-edge).

Memory: linear memories (and the GC heap) are allocated by
``memlimit.MemoryCreator``, which charges every creation and growth to the
budget of the run on the calling thread (one budget per store: the sum of
all its memories and its tables) and records a refusal, so a denied
``memory.grow`` is known, not guessed. Tables are charged before
instantiation and bounded by the store limiter (``tablelimit``): the
features that let a module hold more (multi-memory, reference types with
growable tables, GC, exceptions) stay on, because each is counted.

Host functions are defined once per engine as unchecked callbacks (see
``hostcall``); they find their run through ``runs``: Store context
address -> ``RunState``, registered for exactly the life of the Store.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import wasmtime

from backends.wasm import abi, capi, door, hostcall, wasi, wasi_fs, wasi_path
from backends.wasm.memlimit import MemoryCreator
from backends.wasm.state import RunState, StopReason

log = logging.getLogger(__name__)

#: Epoch tick period in seconds: the granularity of wall time, CPU time and cancellation.
TICK: Final = 0.005
#: Never raise: a larger wasm stack aborts the whole process (see notes/wasm.md).
MAX_WASM_STACK: Final = 2 << 20

_STOP_MESSAGES: Final = {reason: f"sandbox: {reason.value}".encode() for reason in StopReason}


def _config(memories: MemoryCreator) -> wasmtime.Config:
    config = wasmtime.Config()
    config.strategy = "cranelift"
    config.epoch_interruption = True
    config.max_wasm_stack = MAX_WASM_STACK
    config.wasm_exceptions = True
    config.memory_may_move = False
    # Exact memory limits: every linear memory comes from our allocator. Copy-on-write memory images
    # need wasmtime's own mmap memories (wasmtime 50 panics otherwise), so data segments are copied.
    config.memory_init_cow = False
    memories.install(config)
    return config


def wasmtime_version() -> str:
    from importlib.metadata import version

    return version("wasmtime")


class WasmEngine:
    """An Engine with its Linker, ticker and run registry. Thread-safe; lives for the process.

    ``description`` names everything that makes a compiled module
    incompatible (wasmtime version and the config); the module cache keys
    on it.
    """

    def __init__(self) -> None:
        self.memories = MemoryCreator()
        self.engine = wasmtime.Engine(_config(self.memories))
        self.version = wasmtime_version()
        self.description = (
            f"wasmtime={self.version};cranelift;epoch;stack={MAX_WASM_STACK};exceptions;static-memory;host-memory"
        )
        self.runs: dict[int, RunState] = {}
        self.linker = wasmtime.Linker(self.engine)
        self._keep: list[object] = hostcall.define_all(
            self.linker, abi.MODULE, [*wasi.FUNCTIONS, *wasi_fs.FUNCTIONS, *wasi_path.FUNCTIONS], self.runs
        )
        self._keep += hostcall.define_all(self.linker, door.MODULE, door.FUNCTIONS, self.runs)
        self._epoch_callback = capi.EPOCH_CALLBACK(self._on_epoch)
        self._lock = threading.Lock()
        self._active = 0
        self._wake = threading.Condition(self._lock)
        self._ticker: threading.Thread | None = None
        self._tick_hooks: tuple[Callable[[], None], ...] = ()

    # -- per-store wiring ------------------------------------------------------------

    @contextmanager
    def attach(self, store: wasmtime.Store, run: RunState) -> Iterator[None]:
        """Bind ``run`` to ``store`` for the duration of the block and keep the ticker going.

        Installs the epoch callback and a one-tick deadline. On exit the run
        is unregistered before the caller closes the store.
        """
        run.ctx = capi.store_context(store)
        self.runs[run.ctx] = run
        capi.set_epoch_callback(store, self._epoch_callback)
        store.set_epoch_deadline(1)
        self._activate()
        try:
            yield
        finally:
            self._deactivate()
            self.runs.pop(run.ctx, None)

    def _on_epoch(self, ctx: int, data: int, delta: Any, kind: Any) -> int:
        try:
            run = self.runs.get(ctx)
            if run is None:
                return capi.new_error(b"sandbox: store without a run")
            reason = run.control.check()
            if reason is not None:
                return capi.new_error(_STOP_MESSAGES[reason])
            session = run.session
            if session is not None and (session.signal_due or session.flush_at <= time.monotonic()):
                session.on_tick(run)  # a safe point on the guest thread (see cpython_signals)
            delta[0] = 1
            kind[0] = 0  # WASMTIME_UPDATE_DEADLINE_CONTINUE
            return 0
        except BaseException:
            log.exception("epoch callback failed")
            return capi.new_error(b"sandbox: epoch callback failed")

    # -- ticker ------------------------------------------------------------------------

    def _activate(self) -> None:
        with self._lock:
            self._active += 1
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick, name="wasm-epoch-ticker", daemon=True)
                self._ticker.start()
            self._wake.notify()

    def _deactivate(self) -> None:
        with self._lock:
            self._active -= 1

    def release_ticker(self) -> None:
        """An attached store stops needing ticks for now (a session waiting for input).

        Must be balanced by ``hold_ticker`` before the store runs wasm again
        and before ``attach`` exits. Any thread.
        """
        self._deactivate()

    def hold_ticker(self) -> None:
        """Undo ``release_ticker``: the store runs wasm again. Any thread."""
        self._activate()

    def on_tick(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` on the ticker thread after each tick, that is every ``TICK`` while any run is active.

        For periodic work that only matters while a guest runs (a worker
        process's output batches, ``procworker``): it rides on the wake the
        ticker takes anyway, where a thread of its own woke once or twice
        per short run. ``hook`` must be quick and must not raise.
        """
        with self._lock:
            self._tick_hooks = (*self._tick_hooks, hook)

    def _tick(self) -> None:
        increment = self.engine.increment_epoch
        while True:
            with self._lock:
                while self._active == 0:
                    self._wake.wait()
                hooks = self._tick_hooks
            increment()
            for hook in hooks:
                try:
                    hook()
                except Exception:
                    log.exception("tick hook failed")
            time.sleep(TICK)

    @property
    def active_runs(self) -> int:
        with self._lock:
            return self._active


_shared: dict[str, WasmEngine] = {}
_shared_lock = threading.Lock()


def shared_engine() -> WasmEngine:
    """The process's engine, built on first use (about 2 ms for the Linker). Thread-safe."""
    with _shared_lock:
        engine = _shared.get("default")
        if engine is None:
            engine = _shared["default"] = WasmEngine()
        return engine
