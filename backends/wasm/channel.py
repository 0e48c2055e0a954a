"""The WASI side of a REPL session: framed code on stdin, status on a control channel.

A session is one long-lived instance whose driver (``resources/drivers``,
or ``qjs --repl``) loops: read one frame from stdin, evaluate it, flush
stdout/stderr, write a status line to the control channel, read again.

Framing (host -> guest, stdin): the code's length in bytes as ASCII
decimal, ``\\n``, then exactly that many bytes of UTF-8 source. The host
puts one frame at a time on stdin; a read past it blocks (in the guest's
worker thread, on this channel's condition) until the next eval submits
one, with no deadline while waiting. stdin has no end unless the session
is stopped: then the blocked read traps and the instance ends.

Control (guest -> host): ``/.session/control``, a write-only pseudo-file
in a session-only preopen (``/.session``, an empty read-only directory
outside the session's VFS, fd 4). The driver opens it at start and writes
one line per eval: ``ok``, ``error`` or ``oom`` (the eval failed because
memory ran out). It is neither stdin/stdout/stderr nor anything in the
VFS, so guest *output* can never be read as control: stdout and stderr go
only to the eval's ``OutputCapture`` and are never parsed.

Interrupt (host -> guest): ``/.session/interrupt``, a read-only pseudo-file
of one byte: ``1`` while the host asks the running eval to stop
(``interrupt``, i.e. Ctrl-C), ``0`` otherwise. The flag belongs to one
eval: it is set only while an eval is pending or running, takes effect
when that eval starts, and reads ``0`` again when it ends, so a stale
interrupt never reaches the next eval. Drivers that can stop running code
at a safe point (QuickJS's interrupt handler, a Lua count hook) keep it
open and poll it with a one-byte read at offset 0; the eval then ends with
status ``error`` and the interpreter keeps its state. For CPython, which
cannot poll cheaply, the channel is given the interpreter's own signal
words (``cpython_signals``): an interrupt then also sets them, on the
guest thread (``deliver_signal``: at the next epoch tick, or at once in a
sleeping ``poll_oneoff``, which then returns early), and the driver's
SIGINT handler raises ``KeyboardInterrupt`` in the user's code. The same
words carry signal 63 every ``FLUSH_INTERVAL`` while a Python eval runs: the
driver's handler flushes stdout and stderr, so output of a long input
streams instead of arriving at its end (buffered writes stay cheap). Nothing
here stops the guest: a driver that does not poll (or user code that
ignores SIGINT) simply runs on (the host falls back to killing the
session). Guest code can read the flag, and nothing else.

Keyboard (host -> guest): ``/.session/stdin``, a read-only pseudo-file
whose reads take what the user types during the running eval (the eval's
``InputStream``, ``Session.eval(input=...)``): a read waits until a line
arrives (``keyboard.read_blocking``: no CPU time charged, bounded by the
eval's wall time, cut short by a kill), and returns end of file when the
input was closed (Ctrl-D), when the eval has no keyboard, or between evals.
stdin itself carries the frames, so the drivers make this file the user
code's stdin (``sys.stdin`` in Python, ``io.input()``/``io.stdin`` in Lua,
reopened for every eval so nothing typed for one eval reaches the next;
QuickJS's ``readStdin()`` and ``fs.readFileSync(0)`` open it anew on every
call and read it to its end, Ctrl-D). A Ctrl-C while a read waits ends the
read with EINTR (after setting CPython's signal words, so Python raises
``KeyboardInterrupt`` at once).

When an eval ends: when the guest reads stdin after consuming the whole
frame, i.e. when it waits for the next input. That, not a control
message, is the end-of-eval signal, so nothing the guest writes anywhere
can end an eval early and leave code running outside a deadline. The
status is the last complete control line written during the eval.

What guest code can do to this (it runs in the same interpreter as the
driver, so it can open the control channel or read stdin too): write a
status line (the driver writes its own after the code, so only an eval
that kills its driver keeps a forged status), or read stdin (the eval then
ends early and the next eval's frame is consumed by that read). Both only
confuse its own session: the host's view stays consistent (every eval ends
at a stdin wait, runs under its own deadline and output cap, and an eval
the driver never reports gets exit code 1), and no guest byte is ever
interpreted as anything but data, a status token, or a frame length of
the host's own making.

Threads: ``submit``, ``interrupt`` and ``kill`` are called by the host (any thread);
``read_stdin``, ``write_control``, ``open_control`` and ``deliver_signal``
by the guest's worker thread inside host calls or the epoch callback;
``end`` by the worker after the instance stopped. Every hand-over goes
through one condition variable.
"""

from __future__ import annotations

import enum
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

from backends.wasm import abi, keyboard, runner
from backends.wasm.cpython_signals import SignalWords
from backends.wasm.fds import DirDesc, FileDesc, StdioDesc, StdStream
from backends.wasm.hostcall import GuestStop, WasiError
from backends.wasm.memory import Fault
from backends.wasm.state import RunControl, RunState
from playground.core.attempts import AttemptLog
from playground.core.errors import FSQuotaExceeded, LimitExceeded
from playground.core.keyboard import InputStream
from playground.core.output import OutputCapture
from playground.core.result import Outcome
from playground.core.vfs import Dir, File

log = logging.getLogger(__name__)

#: Guest path of the session-only preopen, and the control and interrupt files' names in it.
SESSION_DIR: Final = "/.session"
CONTROL_NAME: Final = "control"
INTERRUPT_NAME: Final = "interrupt"
KEYBOARD_NAME: Final = "stdin"
#: Status lines the drivers write; anything else on the control channel is ignored.
STATUS_EXIT_CODES: Final = {b"ok": 0, b"error": 1, b"oom": 1}
#: How often a running Python eval is asked to flush its output (seconds).
FLUSH_INTERVAL: Final = 0.05


class _FlagFile(File):
    """``/.session/interrupt``: one byte, ``0`` or ``1``, that only the channel changes.

    It lives outside the session's VFS (no quota covers it; its size never
    changes), so it is the one file whose bytes are set without the VFS.
    """

    __slots__ = ()

    def set(self, on: bool) -> None:
        self._data[0] = ord("1" if on else "0")


class Ticker(Protocol):
    """The engine's epoch ticker, paused while a session waits for input."""

    def hold_ticker(self) -> None: ...

    def release_ticker(self) -> None: ...


#: How an eval (or the start-up) ended: an ``Outcome`` or the exception to raise.
EvalEnd = Outcome | BaseException


@dataclass(slots=True)
class EvalTicket:
    """One eval handed to the guest. ``on_done`` is called exactly once, from the worker thread."""

    code: bytes
    output: OutputCapture
    wall_limit: float | None
    cpu_limit: float | None
    on_done: Callable[[EvalEnd], None]
    status: bytes | None = field(default=None)
    #: The host asked this eval to stop (``SessionChannel.interrupt``); guarded by the channel's lock.
    interrupted: bool = field(default=False)
    #: What the user types during this eval (``/.session/stdin``); None: end of file.
    keyboard: InputStream | None = field(default=None)
    #: Where this eval's attempts beyond the sandbox are recorded (``attempt_watch``).
    attempts: AttemptLog = field(default_factory=AttemptLog)


class Phase(enum.Enum):
    STARTING = "starting"  # the driver has not asked for input yet
    IDLE = "idle"  # blocked on stdin, no eval running
    BUSY = "busy"  # an eval is running
    ENDED = "ended"  # the instance stopped


class SessionChannel:
    """Host <-> guest hand-over of one session. Thread-safe (see the module docstring)."""

    def __init__(
        self,
        control: RunControl,
        *,
        memory_limit: int | None,
        ticker: Ticker,
        on_ready: Callable[[EvalEnd | None], None],
        signal_words: SignalWords | None = None,
    ) -> None:
        self.control = control
        #: CPython's SIGINT words, set by ``deliver_signal``; None for drivers that poll (or cannot stop).
        self._signal_words = signal_words
        #: An interrupt waits to be delivered as a signal (read without the lock by the epoch callback).
        self.signal_due = False
        #: When the running eval is next asked to flush (monotonic; inf: never). Read like ``signal_due``.
        self.flush_at = math.inf
        #: The ``/.session`` preopen: empty, read-only, and not part of the session's VFS.
        self.dir = Dir(0, True, None)
        #: ``/.session/interrupt``'s one byte (read-only for the guest; only this class changes it).
        self._interrupt_file = _FlagFile(0, True, b"0")
        #: ``/.session/stdin``: the running eval's keyboard.
        self._keyboard_file = keyboard.KeyboardFile(self.read_keyboard)
        #: The instance's run state (set by ``attach``; the guest thread's, for ``read_keyboard``).
        self._run: RunState | None = None
        self._memory_limit = memory_limit
        self._ticker = ticker
        self._on_ready: Callable[[EvalEnd | None], None] | None = on_ready
        self._cond = threading.Condition()
        self._phase = Phase.STARTING
        self._frame = b""
        self._pos = 0
        self._pending: EvalTicket | None = None
        self._current: EvalTicket | None = None
        self._doomed = False

    # -- host side -----------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        with self._cond:
            return self._phase

    @property
    def usable(self) -> bool:
        """True while the instance can take another eval."""
        with self._cond:
            return self._phase is not Phase.ENDED and not self._doomed and self.control.reason is None

    def submit(self, ticket: EvalTicket) -> None:
        """Hand ``ticket`` to the guest; its ``on_done`` reports the end.

        Raises:
            RuntimeError: an eval is already pending or running, or the instance ended.
        """
        with self._cond:
            if self._phase is Phase.ENDED or self._doomed or self.control.reason is not None:
                raise RuntimeError("the session's instance is not running")
            if self._pending is not None or self._current is not None:
                raise RuntimeError("one eval at a time")
            self._pending = ticket
            self._cond.notify_all()

    def interrupt(self) -> bool:
        """Ask the pending or running eval to stop (any thread); False when there is none.

        Sets ``/.session/interrupt`` to ``1`` for that eval only (see the
        module docstring); whether the eval stops is up to the driver.
        """
        with self._cond:
            ticket = self._current or self._pending
            if ticket is None or self._phase is Phase.ENDED:
                return False
            ticket.interrupted = True
            if ticket is self._current:
                self._interrupt_file.set(True)
                if self._signal_words is not None:
                    self.signal_due = True
        if self.signal_due:
            self.control.poke()
        return True

    def on_tick(self, run: RunState) -> None:
        """The epoch callback's turn (guest thread): deliver a due interrupt, else a due flush request."""
        if self.signal_due:
            self.deliver_signal(run)
        elif time.monotonic() >= self.flush_at:
            self._request_flush(run)

    def _request_flush(self, run: RunState) -> None:
        with self._cond:
            words = self._signal_words
            if words is None or self._current is None:
                self.flush_at = math.inf
                return
            self.flush_at = time.monotonic() + FLUSH_INTERVAL
            self._trip(words, run, flush=True)

    def _trip(self, words: SignalWords, run: RunState, *, flush: bool) -> bool | None:
        """``words.trip`` (lock held); a fault means they are not this memory's, and they are dropped."""
        try:
            return words.trip(run.memory, flush=flush)
        except Fault:
            log.warning("signal words lie outside this instance's memory; interrupts disabled")
            self._signal_words = None
            self.signal_due = False
            self.flush_at = math.inf
            return None

    def deliver_signal(self, run: RunState) -> bool:
        """Set the signal words if an interrupt is due for the running eval (guest thread only).

        Called at every epoch tick while ``signal_due`` and by blocking host
        calls when poked; True when the words were set just now.
        """
        with self._cond:
            if not self.signal_due:
                return False
            words = self._signal_words
            if words is None or self._current is None or not self._current.interrupted:
                self.signal_due = False
                return False
            tripped = self._trip(words, run, flush=False)
            if tripped is False:
                return False  # no memory bound yet: try again at the next tick
            self.signal_due = False
            return tripped is True

    def kill(self) -> None:
        """Stop the instance (any thread): a running eval stops within one epoch tick. Idempotent."""
        self.control.cancel()
        with self._cond:
            self._cond.notify_all()

    def attach(self, run: RunState) -> None:
        """Install the ``/.session`` preopen in the run's descriptor table (fd 4, after the root ``/``)."""
        self._run = run
        fd = run.fds.add(DirDesc(self.dir, self.dir, preopen_name=SESSION_DIR))
        if fd != 4:
            log.warning("session preopen landed on fd %d", fd)

    def end(self, result: EvalEnd) -> None:
        """The instance stopped (worker thread): report ``result`` to whoever waits."""
        with self._cond:
            self._phase = Phase.ENDED
            ticket = self._current or self._pending
            self._current = self._pending = None
            ready, self._on_ready = self._on_ready, None
            self._cond.notify_all()
        if ready is not None:
            ready(result)
        if ticket is not None:
            ticket.on_done(result)

    # -- guest side (worker thread, inside host calls) -----------------------------------

    def read_stdin(self, run: RunState, limit: int) -> bytes:
        """Up to ``limit`` bytes of the current frame; past its end, end the eval and wait for the next.

        Raises:
            GuestStop: the session was stopped while waiting (or the eval hit a limit).
        """
        if limit <= 0:
            return b""
        with self._cond:
            if self._pos < len(self._frame):
                return self._take(limit)
            finished, self._current = self._current, None
            ready, self._on_ready = self._on_ready, None
            self._phase = Phase.IDLE
            self._interrupt_file.set(False)
            self.signal_due = False
            self.flush_at = math.inf
        # The eval (or the start-up) is over: the driver is waiting for input.
        if finished is not None:
            self._finish(run, finished)
        elif ready is not None:
            ready(None)
        self.control.disarm()
        self._ticker.release_ticker()
        try:
            with self._cond:
                while self._pending is None and self.control.reason is None:
                    self._cond.wait()
                if self.control.reason is not None:
                    raise GuestStop()
                ticket = self._pending
                assert ticket is not None
                self._pending = None
                self._current = ticket
                self._phase = Phase.BUSY
                self._interrupt_file.set(ticket.interrupted)
                self.signal_due = ticket.interrupted and self._signal_words is not None
                if self._signal_words is not None:
                    self.flush_at = time.monotonic() + FLUSH_INTERVAL
                self._frame = b"%d\n" % len(ticket.code) + ticket.code
                self._pos = 0
        finally:
            self._ticker.hold_ticker()
        run.output = ticket.output
        run.attempts = ticket.attempts
        run.vfs.quota_hit = False
        self.control.arm(wall_limit=ticket.wall_limit, cpu_limit=ticket.cpu_limit)
        with self._cond:
            return self._take(limit)

    def read_keyboard(self, limit: int) -> bytes:
        """A read of ``/.session/stdin`` (guest thread): what is typed for the running eval, or end of file.

        Raises:
            GuestStop: the eval's wall time passed or the session was killed while waiting.
            WasiError: EINTR, the eval was interrupted (Ctrl-C) while waiting.
        """
        with self._cond:
            ticket = self._current
            # An interrupt the code already saw (and caught) does not end every later read.
            seen = ticket is not None and ticket.interrupted and not self.signal_due
        if ticket is None or ticket.keyboard is None:
            return b""

        def interrupted() -> bool:
            with self._cond:
                fresh = ticket.interrupted and (not seen or self.signal_due)
            if fresh and self._run is not None:
                self.deliver_signal(self._run)  # CPython: KeyboardInterrupt when the read returns EINTR
            return fresh

        return keyboard.read_blocking(ticket.keyboard, self.control, limit, interrupted=interrupted)

    def _take(self, limit: int) -> bytes:
        chunk = self._frame[self._pos : self._pos + limit]
        self._pos += len(chunk)
        return chunk

    def _finish(self, run: RunState, ticket: EvalTicket) -> None:
        """Report the end of ``ticket``'s eval; a limit it hit dooms the instance."""
        status = ticket.status
        run.memory.refresh()
        peak = run.memory.peak
        outcome = Outcome(exit_code=STATUS_EXIT_CODES.get(status or b"", 1), peak_memory=peak)
        failure: LimitExceeded | None = None
        if run.budget is not None and run.budget.refused:
            failure = runner.memory_exceeded(run.budget, outcome)
        elif run.vfs.quota_hit:
            vfs = run.vfs
            failure = FSQuotaExceeded(
                f"filesystem quota exceeded ({vfs.fs_quota} bytes, {vfs.max_files} files)", outcome=outcome
            )
        if failure is None:
            ticket.on_done(outcome)
            return
        with self._cond:
            self._doomed = True
        ticket.on_done(failure)
        self.kill()
        raise GuestStop()

    def write_control(self, data: bytes) -> int:
        """Take one ``fd_write`` to the control channel; return ``len(data)`` (everything is consumed).

        Each write is parsed on its own (``take_control``), so nothing a
        guest wrote earlier can merge into the driver's own message.
        Writes while no eval runs are dropped.
        """
        with self._cond:
            ticket = self._current
        if ticket is not None:
            self.take_control(ticket, data)
        return len(data)

    def take_control(self, ticket: EvalTicket, data: bytes) -> None:
        """Apply one control write to the running eval's ``ticket`` (guest thread).

        Here: complete lines that are a status token set ``ticket.status``;
        anything else (and a trailing partial line) is dropped. Subclasses
        extend the protocol (``serve_channel``).
        """
        lines = data.split(b"\n")[:-1]
        statuses = [line.rstrip(b"\r") for line in lines if line.rstrip(b"\r") in STATUS_EXIT_CODES]
        if statuses:
            ticket.status = statuses[-1]

    def open_control(self, run: RunState, name: str, oflags: int, slash: bool) -> int:
        """``path_open`` of ``name`` in ``/.session``: the control channel, the interrupt flag, or an errno.

        The control file opens write-only whatever the rights asked for; the
        interrupt and keyboard files read-only (their descriptors refuse writes with EBADF).

        Raises:
            WasiError: neither file (ENOENT, or EROFS for a create), opened as
                a directory / exclusively, or the interrupt file truncated.
        """
        if name not in (CONTROL_NAME, INTERRUPT_NAME, KEYBOARD_NAME):
            raise WasiError(abi.EROFS if oflags & abi.OFLAGS_CREAT else abi.ENOENT)
        if slash or oflags & abi.OFLAGS_DIRECTORY:
            raise WasiError(abi.ENOTDIR)
        if oflags & abi.OFLAGS_EXCL:
            raise WasiError(abi.EEXIST)
        if name == INTERRUPT_NAME:
            if oflags & abi.OFLAGS_TRUNC:
                raise WasiError(abi.EROFS)
            rights = abi.RIGHTS_FILE & ~abi.RIGHTS_WRITE
            return run.fds.add(FileDesc(self._interrupt_file, readable=True, writable=False, rights=rights))
        if name == KEYBOARD_NAME:
            if oflags & abi.OFLAGS_TRUNC:
                raise WasiError(abi.EROFS)
            # A pipe's rights (no seek or tell): a language runtime then treats it as the stream it is.
            rights = abi.RIGHTS_STDIO & ~abi.RIGHTS_WRITE
            return run.fds.add(FileDesc(self._keyboard_file, readable=True, writable=False, rights=rights))
        return run.fds.add(StdioDesc(StdStream.CONTROL))
