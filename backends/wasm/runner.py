"""One run: one Store, one instance, one call of ``_start``, on the calling (worker) thread.

How a run ends, and how it is reported:

* ``proc_exit(code)``: ``Outcome(exit_code=code & 0xFF)`` (POSIX wait-status
  semantics, so ``exit(-1)`` is 255 as on a native host).
* ``_start`` returns: exit code 0.
* Wall deadline or CPU budget (see ``engine``): ``TimeLimitExceeded``
  (``limit`` is ``"cpu_time"`` for the latter).
* Cancelled: ``RunCancelled`` (the backend turns it into ``CancelledError``).
* Output cap: ``OutputLimitExceeded``.
* Memory: one budget per Store (``memlimit``) holds the sum of every
  linear memory (from the engine's memory creator, which refuses growth
  past the budget: the guest's ``memory.grow`` returns -1) and of every
  table (``tablelimit``: declared minimums and growth headroom, charged
  before instantiation; the store limiter bounds growth). A refusal is
  recorded, and a run whose guest was refused memory is reported as
  ``MemoryLimitExceeded``, whatever the guest did next (CPython's
  MemoryError, QuickJS's "out of memory", Lua's "not enough memory", a C
  malloc returning NULL), even if it caught the error and exited 0: a
  limit was hit. One 1 GiB request at a 128 MiB limit is caught exactly
  like a slow climb; so are declared minimums that do not fit (memories
  at instantiation, tables before it).
* Any other trap (stack overflow, ``unreachable``, out-of-bounds): exit
  code 134 (as a native abort) and one ``wasm trap: <kind>`` line on stderr;
  classified by ``TrapCode``, never by message text.
* A failure inside a host function (a bug of ours): ``HostFailure``.
* A module that cannot be linked (an import we do not provide, e.g. a
  ``wasi:`` preview2 or ``env`` import): ``InvalidSpec``.

The Store is closed in ``finally``; nothing of the run outlives the call.

A REPL session is one such run that lasts (``Launch.session``): its
driver blocks in ``fd_read`` between evals and each eval re-arms the
deadlines on the same ``RunControl`` (see ``channel`` and ``session``);
the messages above name the budget of the eval that tripped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import wasmtime

from backends.wasm import tablelimit
from backends.wasm.engine import WasmEngine
from backends.wasm.fds import DirDesc
from backends.wasm.memlimit import MemoryBudget, budget_scope
from backends.wasm.state import GuestChannel, RunControl, RunState, StopReason
from playground.core.attempts import AttemptLog
from playground.core.errors import (
    CPUTimeLimitExceeded,
    InvalidSpec,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    SandboxError,
    TimeLimitExceeded,
)
from playground.core.keyboard import InputStream
from playground.core.output import OutputCapture, Stream
from playground.core.result import Outcome
from playground.core.vfs import VFS, Dir

log = logging.getLogger(__name__)

#: Exit code reported for a trap (128 + SIGABRT, like a native crash).
TRAP_EXIT_CODE: Final = 134


class RunCancelled(Exception):
    """The run was cancelled before or while the guest ran."""


class HostFailure(SandboxError):
    """A host function of the Wasm backend failed (a bug in the sandbox, not the guest)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Launch:
    """Everything one run needs. ``memory_limit`` etc. are None for UNLIMITED."""

    module: wasmtime.Module
    argv: Sequence[str]
    env: Mapping[str, str]
    stdin: bytes
    vfs: VFS
    output: OutputCapture
    memory_limit: int | None
    wall_limit: float | None
    cpu_limit: float | None
    extra: Mapping[str, str] = field(default_factory=dict)
    #: A REPL session's stdin/control channel (its own preopen at fd 4); None for a one-shot run.
    session: GuestChannel | None = None
    #: A one-shot run's keyboard, read after ``stdin`` (``Request.input``; see ``keyboard``).
    keyboard: InputStream | None = None
    #: The export that runs the program: ``_start`` (a WASI command), or a reactor's entry, called after
    #: ``_initialize`` (when exported) with its i32 result as the exit code.
    entry: str = "_start"
    #: More preopened directories after the root (and a session's ``/.session``): (guest path, directory),
    #: e.g. a runtime's data tree (``mounts``).
    preopens: Sequence[tuple[str, Dir]] = ()
    #: Where the host functions record what the guest tried beyond its sandbox (``Request.attempts``).
    attempts: AttemptLog = field(default_factory=AttemptLog)
    #: Paths outside the tree the runtime probes on its own (``WasmSpec.quiet_paths``): not attempts.
    quiet_paths: Sequence[str] = ()


def run(engine: WasmEngine, launch: Launch, control: RunControl) -> Outcome:
    """Run ``launch`` to its end on this thread; see the module docstring for the outcomes.

    Cancellation: ``control.cancel()`` from any thread stops the guest
    within one epoch tick (or at once if it is sleeping in ``poll_oneoff``).

    Raises:
        RunCancelled, TimeLimitExceeded, MemoryLimitExceeded,
        OutputLimitExceeded, HostFailure, InvalidSpec (unlinkable module).
    """
    if control.reason is StopReason.CANCELLED:
        raise RunCancelled()
    budget = MemoryBudget(launch.memory_limit)
    store = wasmtime.Store(engine.engine)
    if not tablelimit.limit_store(store, launch.module, budget):
        store.close()
        raise memory_exceeded(budget, None)
    state = RunState(
        control=control, vfs=launch.vfs, output=launch.output, stdin=launch.stdin, args=launch.argv, env=launch.env,
        session=launch.session, keyboard=launch.keyboard, attempts=launch.attempts, quiet_paths=launch.quiet_paths,
    )  # fmt: skip
    if launch.session is not None:
        launch.session.attach(state)
    for name, directory in launch.preopens:
        state.fds.add(DirDesc(directory, directory, preopen_name=name))
    peak = 0
    failure: Exception | None = None
    trap_code: wasmtime.TrapCode | None = None
    state.budget = budget
    try:
        with budget_scope(budget), engine.attach(store, state):
            control.start_clock()  # bounds a looping start function
            try:
                try:
                    instance = engine.linker.instantiate(store, launch.module)
                except wasmtime.WasmtimeError as exc:
                    if control.reason is not None or budget.refused or isinstance(exc, wasmtime.Trap):
                        raise
                    raise InvalidSpec(f"the module cannot be instantiated: {_first_line(exc)}") from None
                control.start_clock()  # the user's wall time starts now
                launch.attempts.restart_clock()  # and the attempts' first_at
                _enter(store, instance, launch.entry, control)
            except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                failure = exc
                trap_code = exc.trap_code if isinstance(exc, wasmtime.Trap) else None
            finally:
                peak = _peak_memory(store, state)
    finally:
        state.release()
        store.close()
    return _classify(launch, control, failure=failure, trap_code=trap_code, peak=max(peak, budget.peak), budget=budget)


def _enter(store: wasmtime.Store, instance: wasmtime.Instance, entry: str, control: RunControl) -> None:
    """Call the module's entry: ``_start``, or a reactor's ``_initialize`` then its entry (result: exit code)."""
    exports = instance.exports(store)
    start = exports.get(entry)
    if not isinstance(start, wasmtime.Func):
        raise HostFailure(f"module has no {entry} function (not a WASI command)")
    if entry == "_start":
        start(store)
        return
    initialize = exports.get("_initialize")
    if isinstance(initialize, wasmtime.Func):
        initialize(store)
    code = start(store)
    if isinstance(code, int):
        control.stop(StopReason.EXIT, exit_code=code)


def _peak_memory(store: wasmtime.Store, state: RunState) -> int:
    state.memory.refresh()
    return state.memory.peak


def _classify(
    launch: Launch,
    control: RunControl,
    *,
    failure: Exception | None,
    trap_code: wasmtime.TrapCode | None,
    peak: int,
    budget: MemoryBudget,
) -> Outcome:
    reason = control.reason
    if reason is StopReason.CANCELLED:
        raise RunCancelled()
    if reason is StopReason.WALL_TIME:
        raise TimeLimitExceeded(f"wall time limit of {control.wall_limit:g} s exceeded")
    if reason is StopReason.CPU_TIME:
        raise CPUTimeLimitExceeded(f"CPU time limit of {control.cpu_limit:g} s exceeded")
    if reason is StopReason.OUTPUT_LIMIT:
        raise OutputLimitExceeded("output limit exceeded")
    if reason is StopReason.HOST_ERROR:
        raise HostFailure(f"a WASI host function failed: {control.error!r}") from control.error
    if reason is StopReason.EXIT:
        exit_code = control.exit_code & 0xFF
    elif failure is None:
        exit_code = 0
    else:
        exit_code = TRAP_EXIT_CODE
    outcome = Outcome(exit_code=exit_code, peak_memory=peak)
    if budget.refused:
        raise memory_exceeded(budget, outcome)
    if failure is not None and reason is None:
        _report_trap(launch.output, failure, trap_code)
    return outcome


def memory_exceeded(budget: MemoryBudget, outcome: Outcome | None) -> MemoryLimitExceeded:
    """The error for a run whose guest was refused memory (``outcome`` None: refused before it started)."""
    if budget.reason is not None:
        message = f"memory limit of {budget.limit} bytes: {budget.reason}"
    else:
        message = (
            f"memory limit of {budget.limit} bytes exceeded (the guest asked for {budget.requested} bytes "
            "in all: its linear memories and tables)"
        )
    return MemoryLimitExceeded(message, outcome=outcome)


def _report_trap(output: OutputCapture, failure: Exception, trap_code: wasmtime.TrapCode | None) -> None:
    if trap_code is not None:
        message = f"wasm trap: {trap_code.name.lower().replace('_', ' ')}\n"
    else:
        lines = [line.strip() for line in str(failure).splitlines() if line.strip()]
        message = f"wasm error: {lines[-1] if lines else type(failure).__name__}\n"
    output.write(Stream.STDERR, message.encode("utf-8", "replace"))


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
