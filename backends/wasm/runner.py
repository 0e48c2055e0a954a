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

The Store is closed in ``finally`` (or handed to ``Launch.dispose``, which
closes it later: a worker process, once its answer is sent); nothing of
the run is used after the call.

A run can start from an instance made before it (``prepare``,
``Launch.prepared``: a worker process makes the next run's while its
parent hands that run over): a Store with the module instantiated under
the run's memory limit, its image mapped and grown, and no code of the
module run. The run takes it only when it ``fits`` (same module, image and
memory limit); else it is closed and the run makes its own. Everything
else (descriptors, arguments, environment, source, clocks) is the run's.

A run can start from a memory image (``Launch.image``, see ``snapshot``):
the instance's memory is mapped from the image, grown to its size (charged
to the budget: a limit below the image is ``MemoryLimitExceeded`` before
the guest runs), and the image's entry is called with the run's source
(``ImageStart``) instead of ``_start``. A capture (``Launch.capture``)
runs ``_start`` until the guest reaches the snapshot point, then hands the
live instance to ``capture`` before the Store closes.

A REPL session is one such run that lasts (``Launch.session``): its
driver blocks in ``fd_read`` between evals and each eval re-arms the
deadlines on the same ``RunControl`` (see ``channel`` and ``session``);
the messages above name the budget of the eval that tripped.
"""

from __future__ import annotations

import ctypes
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Final

import wasmtime

from backends.wasm import capi, tablelimit
from backends.wasm.engine import WasmEngine
from backends.wasm.fds import DirDesc
from backends.wasm.memlimit import ImageSlot, MemoryBudget, MemoryImage, budget_scope, image_scope
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
class ImageStart:
    """How a run starts from a memory image (``snapshot``).

    The memory is mapped from ``image`` and grown to its size. With a
    ``payload`` (a snapshot run), the payload is written just below
    ``stack_pointer``, the stack pointer export ``stack_export`` is set
    below it, and ``entry`` (i32 source, i32 flags) -> i32 is called: 0 is
    exit code 0, anything else exit code 1. With an ``alloc`` export too
    (the runtime's own entry, ``WasmSnapshot.entry_export``), the payload
    goes where ``alloc`` (i32 length) -> i32 puts it and ``entry`` (i32
    source, i32 length) -> i32 returns the exit code; a capture runs that
    way too and is taken when the entry returns 0. Without a payload (a
    capture at a snapshot point, or a cold start), the module's entry runs
    as usual.
    """

    image: MemoryImage
    #: What the image is, for messages ("the python snapshot").
    label: str
    #: The module's declared memory minimum in bytes: the memory that gets the image.
    minimum: int
    stack_pointer: int = 0
    #: The host's monotonic clock (ns) at the capture: the guest's monotonic clock goes on from there.
    monotonic: int | None = None
    payload: bytes | None = None
    entry: str = ""
    stack_export: str = ""
    alloc: str = ""


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
    #: Start from a memory image (a snapshot run or a capture); None: the module's own data.
    image: ImageStart | None = None
    #: A capture: called with the live Store and instance once the guest reached its snapshot point.
    capture: Callable[[wasmtime.Store, wasmtime.Instance], None] | None = None
    #: A calibration (``warmpages``): called with the live Store and instance once the guest ended.
    inspect: Callable[[wasmtime.Store, wasmtime.Instance], None] | None = None
    #: The instance this run starts from when it ``fits`` (made before the run: ``prepare``); else it is closed.
    prepared: Prepared | None = None
    #: Takes the Store once the run is over, to close it later (a worker process: after its answer is sent);
    #: None: the run closes it.
    dispose: Callable[[wasmtime.Store], None] | None = None


@dataclass(slots=True, eq=False)
class Prepared:
    """An instance made before its run (``prepare``): no guest code has run in it.

    Why: a worker process (``procworker``) idles between runs while its
    parent hands the next one over, about as long as a short run takes,
    and a run's Store, instantiation, image mapping and growth are a fifth
    of a hello world; made in that gap, they leave the run's path
    (``WasmBackend.prepare_next``). Only what no
    run decides goes in: the module, the image and the memory limit (the
    tables' bounds are set from it before instantiation, and the image's
    pages are charged to it). The run's arguments, environment, source,
    stdin, tree, descriptors and clocks are its own, set at ``run``.
    """

    module: wasmtime.Module
    #: The memory image it was made over (a snapshot's, or the runtime's data: ``snapshot.cold_start``); None: the
    #: module's own data segments.
    image: MemoryImage | None
    memory_limit: int | None
    store: wasmtime.Store
    instance: wasmtime.Instance
    budget: MemoryBudget
    #: A run started from it (it is that run's now).
    taken: bool = False

    def fits(self, launch: Launch) -> bool:
        """Whether ``launch`` is a run this instance was made for (its module, image and memory limit)."""
        image = launch.image.image if launch.image is not None else None
        return (
            image is self.image and launch.module is self.module and launch.memory_limit == self.memory_limit
            and launch.session is None and launch.capture is None and launch.inspect is None
        )  # fmt: skip

    def close(self) -> None:
        self.store.close()


def prepare(
    engine: WasmEngine, module: wasmtime.Module, start: ImageStart | None, memory_limit: int | None
) -> Prepared:
    """Make the instance of a run of ``module`` (from ``start``, if any) under ``memory_limit``, ahead of the run.

    The memories and tables are charged to the budget the run will use, so
    a limit below the image is refused here as it would be in the run.

    Raises:
        MemoryLimitExceeded, HostFailure, wasmtime.WasmtimeError: the run
        would meet the same failure (its caller runs it the usual way).
    """
    budget = MemoryBudget(memory_limit)
    store = wasmtime.Store(engine.engine)
    try:
        if not tablelimit.limit_store(store, module, budget):
            raise memory_exceeded(budget, None)
        # Instantiating a module with data segments (Lua's runtime) checks the epoch: a new Store's deadline has
        # passed already, so it trapped. One tick, as a run's Store has (``WasmEngine.attach``); no function of
        # the module runs (our runtimes have no start function, and user modules are never prepared).
        store.set_epoch_deadline(1)
        slot_scope = image_scope(start.image, start.minimum) if start is not None else nullcontext()
        with budget_scope(budget), slot_scope as slot:
            instance = engine.linker.instantiate(store, module)
        if start is not None:  # not prefaulted: that copies pages a run alone may never write, and they would wait
            _fill_image(store, instance, start, budget, slot, prefault=False)
    except BaseException:
        store.close()
        raise
    image = start.image if start is not None else None
    return Prepared(
        module=module, image=image, memory_limit=memory_limit, store=store, instance=instance, budget=budget
    )


def run(engine: WasmEngine, launch: Launch, control: RunControl) -> Outcome:
    """Run ``launch`` to its end on this thread; see the module docstring for the outcomes.

    Cancellation: ``control.cancel()`` from any thread stops the guest
    within one epoch tick (or at once if it is sleeping in ``poll_oneoff``).

    Raises:
        RunCancelled, TimeLimitExceeded, MemoryLimitExceeded,
        OutputLimitExceeded, HostFailure, InvalidSpec (unlinkable module).
    """
    prepared = launch.prepared
    if prepared is not None and (control.reason is StopReason.CANCELLED or not prepared.fits(launch)):
        prepared.close()
        prepared = None
    if control.reason is StopReason.CANCELLED:
        raise RunCancelled()
    instance: wasmtime.Instance | None = None
    if prepared is not None:
        prepared.taken = True
        budget, store, instance = prepared.budget, prepared.store, prepared.instance
    else:
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
    start = launch.image
    #: A capture through the runtime's own entry is taken when it returns, not at a snapshot point.
    captures_at_return = launch.capture is not None and start is not None and bool(start.alloc)
    state.snapshot_point = launch.capture is not None and not captures_at_return
    peak = 0
    failure: Exception | None = None
    trap_code: wasmtime.TrapCode | None = None
    state.budget = budget
    slot_scope = image_scope(start.image, start.minimum) if start is not None and instance is None else nullcontext()
    try:
        with budget_scope(budget), engine.attach(store, state), slot_scope as slot:
            control.start_clock()  # bounds a looping start function
            try:
                if instance is None:
                    try:
                        instance = engine.linker.instantiate(store, launch.module)
                    except wasmtime.WasmtimeError as exc:
                        if start is not None and budget.refused:
                            raise _image_exceeded(budget, start) from None
                        if control.reason is not None or budget.refused or isinstance(exc, wasmtime.Trap):
                            raise
                        raise InvalidSpec(f"the module cannot be instantiated: {_first_line(exc)}") from None
                    if start is not None:  # only with another run going do copy-on-write faults interrupt it
                        _fill_image(store, instance, start, budget, slot, prefault=engine.active_runs > 1)
                control.start_clock()  # the user's wall time starts now
                launch.attempts.restart_clock()  # and the attempts' first_at
                if start is not None and start.payload is not None:
                    if start.monotonic is not None:
                        state.monotonic_offset = time.monotonic_ns() - start.monotonic
                    _enter_image(store, instance, start, control)
                else:
                    _enter(store, instance, launch.entry, control)
            except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                failure = exc
                trap_code = exc.trap_code if isinstance(exc, wasmtime.Trap) else None
            finally:
                peak = _peak_memory(store, state)
            at_point = control.reason is StopReason.SNAPSHOT or (
                captures_at_return and failure is None and control.reason is None
            )
            if at_point and launch.capture is not None and instance is not None:
                launch.capture(store, instance)
            elif launch.inspect is not None and instance is not None:
                launch.inspect(store, instance)
    finally:
        state.release()
        if launch.dispose is not None:
            launch.dispose(store)
        else:
            store.close()
    return _classify(launch, control, failure=failure, trap_code=trap_code, peak=max(peak, budget.peak), budget=budget)


def _enter(store: wasmtime.Store, instance: wasmtime.Instance, entry: str, control: RunControl) -> None:
    """Call the module's entry: ``_start``, or a reactor's ``_initialize`` then its entry (result: exit code)."""
    start = capi.instance_export(store, instance, entry)
    if not isinstance(start, wasmtime.Func):
        raise HostFailure(f"module has no {entry} function (not a WASI command)")
    if entry == "_start":
        capi.call_i32(store, start, results=0)
        return
    initialize = capi.instance_export(store, instance, "_initialize")
    if isinstance(initialize, wasmtime.Func):
        initialize(store)
    code = start(store)
    if isinstance(code, int):
        control.stop(StopReason.EXIT, exit_code=code)


def _fill_image(
    store: wasmtime.Store, instance: wasmtime.Instance, start: ImageStart, budget: MemoryBudget,
    slot: ImageSlot | None, *, prefault: bool,
) -> None:
    """After instantiation: check the image went into the memory, grow it to the image, maybe prefault it."""
    if slot is None or not slot.mapped:
        raise HostFailure(f"{start.label}: the memory image was not mapped into the module's memory")
    _grow_to_image(store, instance, start, budget)
    if prefault:
        _prefault(store, instance, start)


def _grow_to_image(store: wasmtime.Store, instance: wasmtime.Instance, start: ImageStart, budget: MemoryBudget) -> None:
    """Grow the mapped memory to the image's size, charged to the budget.

    Raises:
        MemoryLimitExceeded: the limit is below the image (the guest never ran).
        HostFailure: the module exports no memory.
    """
    memory = capi.instance_export(store, instance, "memory")
    if not isinstance(memory, wasmtime.Memory):
        raise HostFailure(f"{start.label}: the module exports no memory")
    pages = start.image.length // 65536
    current = memory.size(store)
    if pages <= current:
        return
    try:
        memory.grow(store, pages - current)
    except wasmtime.WasmtimeError:
        if not budget.refused:
            raise
        raise _image_exceeded(budget, start) from None


def _prefault(store: wasmtime.Store, instance: wasmtime.Instance, start: ImageStart) -> None:
    """Copy the image's warm pages into this run's memory before the guest writes them (``warmpages``)."""
    warm = start.image.warm
    if warm is None or not warm.ranges:
        return
    base = memory_base(store, instance)
    if base is not None and not warm.prefault(base):
        log.debug("%s: prefaulting its warm pages failed", start.label)


def memory_base(store: wasmtime.Store, instance: wasmtime.Instance) -> int | None:
    """The address of the instance's exported memory in this process (None: it exports none)."""
    memory = capi.instance_export(store, instance, "memory")
    if not isinstance(memory, wasmtime.Memory):
        return None
    return ctypes.cast(memory.data_ptr(store), ctypes.c_void_p).value


def _image_exceeded(budget: MemoryBudget, start: ImageStart) -> MemoryLimitExceeded:
    """The error for a limit below the memory image: the guest never ran."""
    budget.refuse(
        f"below the {start.image.length} bytes ({start.image.length / 2**20:.1f} MiB) that {start.label} "
        "starts with: raise the memory limit"
    )
    return memory_exceeded(budget, None)


def _enter_image(store: wasmtime.Store, instance: wasmtime.Instance, start: ImageStart, control: RunControl) -> None:
    """Call the image's entry with the run's source, written on the guest's stack below the captured pointer."""
    assert start.payload is not None
    memory, entry = capi.instance_export(store, instance, "memory"), capi.instance_export(store, instance, start.entry)
    if not isinstance(memory, wasmtime.Memory) or not isinstance(entry, wasmtime.Func):
        raise HostFailure(f"{start.label}: the module does not export memory and {start.entry}")
    if start.alloc:
        alloc = capi.instance_export(store, instance, start.alloc)
        _enter_export(store, start, control, alloc=alloc, memory=memory, entry=entry)
        return
    stack = capi.instance_export(store, instance, start.stack_export)
    if not isinstance(stack, wasmtime.Global):
        raise HostFailure(f"{start.label}: the module does not export its stack pointer")
    address = (start.stack_pointer - len(start.payload) - 64) & ~15
    if address <= 0:
        raise HostFailure(f"{start.label}: the run's source does not fit on the stack")
    memory.write(store, start.payload, address)
    capi.set_i32_global(store, stack, address - 16)
    # Not 0: an uncaught exception was printed: exit 1, as CPython's own exit.
    if capi.call_i32(store, entry, address, 0, results=1) != 0:
        control.stop(StopReason.EXIT, exit_code=1)


def _enter_export(
    store: wasmtime.Store, start: ImageStart, control: RunControl, *, alloc: object, memory: wasmtime.Memory,
    entry: wasmtime.Func,
) -> None:
    """Call the runtime's own entry with the source its allocator placed; its result is the exit code."""
    assert start.payload is not None
    if not isinstance(alloc, wasmtime.Func):
        raise HostFailure(f"{start.label}: the module does not export {start.alloc}")
    size = len(start.payload)
    address = capi.call_i32(store, alloc, size, results=1)
    if address is None or not 0 < (address & 0xFFFF_FFFF) <= memory.data_len(store) - size:
        raise HostFailure(f"{start.label}: {start.alloc} found no room for the run's source")
    address &= 0xFFFF_FFFF
    memory.write(store, start.payload, address)
    code = capi.call_i32(store, entry, address, size, results=1)
    if code:
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
    elif reason is StopReason.SNAPSHOT or failure is None:
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
