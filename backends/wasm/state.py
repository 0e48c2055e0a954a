"""Per-run state: the stop/deadline control shared across threads, and the WASI state of one guest.

``RunControl`` is the only object touched from more than one thread: the
event loop cancels through it, the ticker-driven epoch callback and host
functions (on the guest thread) read it. Its first recorded stop reason
wins and is never overwritten, so the run is classified by what actually
stopped it, not by whatever exception surfaced afterwards.

``RunState`` holds everything a host function needs (args, env, fds,
stdin, memory, the VFS, the output capture); it lives on the guest thread.
The engine maps each live Store's context address to its ``RunState``
(a per-Store slot), so concurrent runs on different threads never see
each other's state.
"""

from __future__ import annotations

import enum
import struct
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from backends.wasm.attempt_watch import ReportSink
from backends.wasm.fds import FdTable
from backends.wasm.memory import GuestMemory
from playground.core.attempts import AttemptLog
from playground.core.keyboard import InputStream
from playground.core.output import OutputCapture
from playground.core.vfs import VFS, Dir

if TYPE_CHECKING:
    from backends.wasm.memlimit import MemoryBudget


class StopReason(enum.Enum):
    """Why the host stopped a guest (as opposed to the guest ending by itself)."""

    EXIT = "exit"  # proc_exit: ``RunControl.exit_code`` holds the code
    CANCELLED = "cancelled"
    WALL_TIME = "wall_time"
    CPU_TIME = "cpu_time"
    OUTPUT_LIMIT = "output_limit"
    HOST_ERROR = "host_error"  # a bug in a host function; ``RunControl.error`` holds it
    SNAPSHOT = "snapshot"  # a capture reached its snapshot point (``snapshot``)


class RunControl:
    """Deadlines, cancellation and the stop reason of one run. Thread-safe.

    Wall time is measured from ``start_clock()`` (called after
    instantiation, so compilation never eats the user's time); CPU time is
    the guest thread's own CPU time (``time.thread_time``) from the same
    moment, which counts wasm and host-function work alike.
    """

    __slots__ = (
        "_lock",
        "cpu_deadline",
        "cpu_limit",
        "deadline",
        "error",
        "exit_code",
        "reason",
        "started_at",
        "wakeup",
        "wall_limit",
    )  # fmt: skip

    def __init__(self, *, wall_limit: float | None, cpu_limit: float | None) -> None:
        self._lock = threading.Lock()
        #: Set when the run is stopped or poked; blocking host calls wait on it.
        self.wakeup = threading.Event()
        self.reason: StopReason | None = None
        self.exit_code = 0
        self.error: BaseException | None = None
        self.wall_limit = wall_limit
        self.cpu_limit = cpu_limit
        self.deadline: float | None = None
        self.cpu_deadline: float | None = None
        self.started_at = 0.0

    def start_clock(self) -> None:
        """Start the wall and CPU budgets now. Must be called on the guest thread."""
        now = time.monotonic()
        self.started_at = now
        self.deadline = None if self.wall_limit is None else now + self.wall_limit
        self.cpu_deadline = None if self.cpu_limit is None else time.thread_time() + self.cpu_limit

    def arm(self, *, wall_limit: float | None, cpu_limit: float | None) -> None:
        """Set new budgets and start them now (a session's next eval). Guest thread only."""
        self.wall_limit = wall_limit
        self.cpu_limit = cpu_limit
        self.start_clock()

    def disarm(self) -> None:
        """No deadline until the next ``arm`` (a session waiting for input). Guest thread only."""
        self.deadline = None
        self.cpu_deadline = None

    def stop(self, reason: StopReason, *, exit_code: int = 0, error: BaseException | None = None) -> bool:
        """Record ``reason`` unless a reason is already recorded; wake blocked host calls.

        Idempotent: returns True only for the call whose reason was recorded.
        """
        with self._lock:
            if self.reason is not None:
                return False
            self.reason = reason
            self.exit_code = exit_code
            self.error = error
        self.wakeup.set()
        return True

    def poke(self) -> None:
        """Wake a blocked host call without stopping the run (any thread): something is due for it.

        The woken call must ``settle()`` before it waits again.
        """
        self.wakeup.set()

    def settle(self) -> bool:
        """After a wake-up: True if the run was stopped; else re-arm the wake-up (guest thread only).

        The reason is read again after clearing, so a stop that raced with
        the clear is never lost (``stop`` records the reason before it sets
        the event).
        """
        if self.reason is not None:
            return True
        self.wakeup.clear()
        return self.reason is not None

    def cancel(self) -> bool:
        """Ask the guest to stop (any thread). It stops at its next epoch tick or host call."""
        return self.stop(StopReason.CANCELLED)

    def check(self) -> StopReason | None:
        """Record and return a passed deadline, or the already recorded reason. Guest thread only."""
        if self.reason is not None:
            return self.reason
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stop(StopReason.WALL_TIME)
        elif self.cpu_deadline is not None and time.thread_time() >= self.cpu_deadline:
            self.stop(StopReason.CPU_TIME)
        return self.reason

    def remaining(self) -> float | None:
        """Seconds until the wall deadline (None when there is none)."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())


class GuestChannel(Protocol):
    """What a run's host functions need of a REPL session's channel (``channel.SessionChannel``).

    Declared here, below the channel, so the modules a run is made of never
    import the session machinery above them. Every call comes from the
    guest's thread (inside a host function or the epoch callback), except
    ``attach``, which the runner makes before the guest starts.
    """

    @property
    def signal_due(self) -> bool:
        """An interrupt waits for delivery (read without the lock by the epoch callback)."""
        ...

    @property
    def flush_at(self) -> float:
        """When the running eval is next asked to flush its output (monotonic; inf: never)."""
        ...

    @property
    def dir(self) -> Dir:
        """The ``/.session`` preopen."""
        ...

    def attach(self, run: RunState) -> None: ...

    def on_tick(self, run: RunState) -> None: ...

    def deliver_signal(self, run: RunState) -> bool: ...

    def read_stdin(self, run: RunState, limit: int) -> bytes: ...

    def write_control(self, data: bytes) -> int: ...

    def open_control(self, run: RunState, name: str, oflags: int, slash: bool) -> int: ...


class GuestStrings:
    """A run's arguments or environment as WASI hands them out: NUL-terminated strings packed once.

    A guest may ask for them often: CPython 3.12's WASI build (its
    filesystem layer, wasi-vfs) reads an environment variable at every
    path operation, and Rust's standard library fetches the whole
    environment for each read: 28 of a ``print``'s 44 host calls, 278 of
    ``import json, csv, decimal``'s 303. Packed here, each fetch is one
    copy of the strings and one of their addresses, instead of two
    writes per string.
    """

    __slots__ = ("blob", "count", "offsets", "pointers")

    def __init__(self, items: Sequence[str]) -> None:
        encoded = [item.encode("utf-8", "surrogateescape") + b"\0" for item in items]
        self.blob = b"".join(encoded)
        self.count = len(encoded)
        offsets, at = [], 0
        for item in encoded:
            offsets.append(at)
            at += len(item)
        #: Where each string starts in ``blob``.
        self.offsets = tuple(offsets)
        #: The layout of the array of their guest addresses (``count`` u32, little-endian).
        self.pointers = struct.Struct(f"<{self.count}I")


class RunState:
    """Everything the WASI host functions of one run see. Guest thread only."""

    __slots__ = (
        "args", "budget", "caller", "control", "cpu_base", "ctx", "env", "fds", "home", "keyboard", "memory",
        "monotonic_offset", "output", "quiet_paths", "report", "session", "snapshot_point", "stdin", "stdin_pos", "vfs",
    )  # fmt: skip

    def __init__(
        self,
        *,
        control: RunControl,
        vfs: VFS,
        output: OutputCapture,
        stdin: bytes,
        args: Sequence[str],
        env: Mapping[str, str],
        session: GuestChannel | None = None,
        keyboard: InputStream | None = None,
        attempts: AttemptLog | None = None,
        quiet_paths: Sequence[str] = (),
    ) -> None:
        self.control = control
        self.vfs = vfs
        #: Where stdout/stderr go. A session swaps it for each eval's capture (guest thread, while blocked).
        self.output = output
        #: A REPL session's stdin and control channel; None for a one-shot run.
        self.session = session
        #: The run's memory budget (set by the runner): whether growth was refused, and the peak.
        self.budget: MemoryBudget | None = None
        self.stdin = stdin
        self.stdin_pos = 0
        #: What the user types, read after ``stdin`` (a one-shot run's ``Request.input``; see ``keyboard``).
        self.keyboard = keyboard
        #: The host's end of the in-guest report channel (``attempt_watch.REPORT_NAME``); it holds ``attempts``.
        self.report = ReportSink(attempts if attempts is not None else AttemptLog())
        #: Paths outside the tree the runtime probes on its own: not attempts (``attempt_watch``).
        self.quiet_paths = tuple(quiet_paths)
        #: The guest's ``HOME`` (attempts below it are shown as ``~/...``); "" when it has none.
        self.home = env.get("HOME", "").rstrip("/")
        self.args = GuestStrings(args)
        self.env = GuestStrings([f"{k}={v}" for k, v in env.items()])
        self.fds = FdTable(vfs)
        self.memory = GuestMemory()
        #: A capture (``snapshot``): the guest's ``clock_res_get`` on the realtime clock stops it there.
        self.snapshot_point = False
        #: Subtracted from the host's monotonic clock (ns): a snapshot run's guest clock goes on from the
        #: capture's, where the C library's start-up readings (``clock()``, ``times()``) were taken.
        self.monotonic_offset = 0
        #: The thread's CPU time when the run began (ns): the guest's CPU clocks count from it, so a worker
        #: thread reused from run to run (``workers``) shows no earlier run's CPU use.
        self.cpu_base = time.thread_time_ns()
        #: Address of the Store's context (the registry key); set by the engine.
        self.ctx = 0
        #: The ``wasmtime_caller_t*`` of the host call in progress (valid only during it).
        self.caller = 0

    @property
    def attempts(self) -> AttemptLog:
        """What the guest tried beyond its sandbox (``attempt_watch``): the host functions and the report channel
        record into this one log; a session's eval sets its own."""
        return self.report.attempts

    @attempts.setter
    def attempts(self, log: AttemptLog) -> None:
        self.report.attempts = log

    def release(self) -> None:
        """Drop references into guest memory and close every descriptor. Idempotent."""
        self.memory.release()
        self.fds.clear()
