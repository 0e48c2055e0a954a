"""Worker processes for one-shot Wasm runs (``WasmBackend(processes=N)``), so concurrent runs go in parallel.

In one process, two runs in flight went no faster than one (measured on
2 cores: JavaScript hello 0.75x, numpy 1.03x): our WASI host functions are
Python, so runs take turns at the interpreter lock (a fifth of the CPU went
to handing it over), and every copy-on-write fault of a snapshot page that
a run read before writing flushes the TLB of each core running a thread of
the process. A worker process (``procworker``) has its own of both.

The policy: a run that starts while no other is in flight runs in this
process as before (no hand-over to pay: sequential runs are as fast as
without workers); one that starts while another is in flight, here or in a
worker, goes to an idle worker when one is ready, else it runs here too. So
a run never waits for a worker, only concurrency spreads out, and under
steady concurrency the runs go to workers and this process only hands
them over. The workers start in the background when two runs first
overlap (each is ready about a second later; meanwhile runs stay here) and
stay: a caller whose runs never overlap never starts one. A worker takes only
runs of a start (runtime and snapshot, ``WasmBackend.start_of``) it has
loaded: every start a run uses is noted (``note``), and each worker loads
the ones it lacks when idle (``("load", …)``, busy meanwhile), so a run
never waits for a worker's first load of a runtime (1.4 s for the
scientific Python's); it runs here meanwhile.
Runs with a keyboard (``Request.input``) stay here: typing goes to this
process.

What crosses: the pack (once per worker and key: a variant's Wasm spec
object), the spec, the resolved limits, stdin and the run's tree out (a
marker for the empty layout, which the worker makes itself: pickling its
rows here and unpickling them there cost the two processes about 0.2 ms
of CPU per hello world, 8% of it at concurrency 2); the
output and progress as they come, then the outcome or the error, the
report of the worker's tree (``/out`` and the charge, not the tree: 75 us
less CPU per hello world) and the attempts back (``procwire``). The run's
tree takes the report on (``VFS.adopt_report``), so ``Result.files`` and
the usage are read as for any run. Cancelling the awaiting task cancels the job in the worker
and waits for its answer, as for a thread.

Who reads a worker's messages: during a job, the event loop of the task
that awaits it (``add_reader`` on the worker's pipe, non-blocking), so its
answer wakes that task directly. The loop keeps that watch for
``_LINGER`` after the job, so that its next job there (at concurrency 2,
microseconds later) costs no ``add_reader`` and ``remove_reader`` (about
30 us of this process's CPU per JavaScript hello world, a fifth of the
hand-over); it then lets go on its own thread. A loop in another thread
that takes the worker over asks it to let go (``call_soon_threadsafe``), and
a pipe is closed only once no loop's selector has it: a closed fd's number,
reused for another pipe, would otherwise be taken for the old watch there.
Between jobs, a worker that owes a
message (it is starting, or loading a start) is read by a poller thread
that runs only while one does (``_poller``: no thread and no CPU once all
are ready and idle); ``ready``, ``pids`` and ``idle_memory`` read every
idle worker, so a death shows there. A reader thread per worker cost a
thread wake, two interpreter-lock hand-overs and a wake of the loop per
run, a fifth of a short run. A worker that died idle is otherwise found
when the next run's frames cannot be written to it (``NotSent``: the run
goes here) and is replaced at the next overlap. A worker that dies fails its
job with ``HostFailure`` and is replaced at the next overlap (after three
that die before they are ready, the pool stops starting them: runs stay
here). A run whose data does not reach the worker (``NotSent``) runs here.
``close`` kills the workers (quitting never waits for them).

Workers are batch work for the kernel (``SCHED_BATCH``, ``procworker``):
one woken by its job does not preempt this process, whose loop hands the
runs over and reads their answers.

Cost: each worker is a Python process with wasmtime, the compiled code it
used mapped from the cache (shared with this process and the other
workers through the page cache) and its own snapshot images (memfds):
about 40 MB once it ran Python and JavaScript programs (29 of PSS, 12 of
images), 60 MB once it also ran one from Python's stdlib snapshot, 215 MB
once it ran numpy and pandas programs (115 and 99), about 305 MB once it
also ran matplotlib and scikit-learn programs: ``idle_memory``
reports each one's (``playground doctor``). Until this was measured with
the images, the figures said 30 and 120 MB: PSS leaves out an image's
pages unless a run maps them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from backends.wasm import procwire, runner
from playground.core import errors, handoff
from playground.core.attempts import Attempt
from playground.core.backend import Request
from playground.core.errors import OutputLimitExceeded
from playground.core.output import Stream
from playground.core.pack import Pack, WasmSpec
from playground.core.result import Outcome
from playground.core.vfs import TreeReport

log = logging.getLogger(__name__)

#: The most worker processes a backend may have.
MAX_PROCESSES: Final = 16
#: Workers in a row that may die before they are ready (a broken install) before the pool stops starting them.
MAX_FAILED_STARTS: Final = 3

#: Errors a worker reports by name, raised here as the same kind (others become ``HostFailure``).
_ERRORS: Final[dict[str, type[Exception]]] = {
    cls.__name__: cls
    for cls in (
        errors.TimeLimitExceeded, errors.CPUTimeLimitExceeded, errors.MemoryLimitExceeded,
        errors.OutputLimitExceeded, errors.FSQuotaExceeded, errors.BackendUnavailable, errors.InvalidSpec,
        errors.Unsupported, runner.HostFailure, runner.RunCancelled,
    )
}  # fmt: skip


class NotSent(Exception):
    """The run could not be handed to the worker (it is gone, or the run's data does not pickle): run it here."""


@dataclass(slots=True)
class _Job:
    request: Request
    delivery: handoff.Delivery[Outcome]


#: Bytes taken from a worker's pipe per read.
_READ_SIZE: Final = 1 << 20
#: How long a loop keeps watching a worker's pipe after a job of its own there (``ProcessPool._linger``).
_LINGER: Final = 0.1


@dataclass(slots=True)
class _Process:
    """One worker process and what this side knows of it."""

    proc: subprocess.Popen[bytes]
    writer: procwire.Writer
    #: The worker's stdout (non-blocking), -1 once closed; read under ``read_lock`` only.
    out: int
    #: The write end of the worker's cancel pipe, -1 once closed.
    cancels: int
    frames: procwire.FrameReader = field(default_factory=procwire.FrameReader)
    read_lock: threading.Lock = field(default_factory=threading.Lock)
    #: An event loop reads ``out`` for the job in flight (``ProcessPool.run``); polls leave it alone.
    watched: bool = False
    #: The event loops whose selector has ``out`` (``add_reader``): the job's, and for ``_LINGER`` after
    #: it; ``out`` is closed only once none has (a closed fd's number, reused, would be theirs too).
    holders: set[asyncio.AbstractEventLoop] = field(default_factory=set)
    #: The loop that watches ``out`` for the next job, and its timer that lets go (``ProcessPool._linger``).
    loop: asyncio.AbstractEventLoop | None = None
    unwatch: asyncio.TimerHandle | None = None
    #: When (``loop.time()``) the last job that ``loop`` watched ended.
    job_end: float = 0.0
    ready: bool = False
    busy: bool = False
    dead: bool = False
    #: Pack keys this worker has been sent.
    packs: set[tuple[str, int]] = field(default_factory=set)
    #: Starts (pack key, ``WasmBackend.start_of``) this worker has loaded; it takes runs of these only.
    loaded: set[tuple[tuple[str, int], int | None]] = field(default_factory=set)
    #: The start it is loading now (it is ``busy`` meanwhile), or None.
    loading: tuple[tuple[str, int], int | None] | None = None
    job: tuple[int, _Job] | None = None


class ProcessPool:
    """Up to ``size`` worker processes over the backend's cache ``root``. Thread-safe."""

    def __init__(self, size: int, root: Path) -> None:
        if not 0 < size <= MAX_PROCESSES:
            raise ValueError(f"processes must be between 1 and {MAX_PROCESSES}, got {size}")
        self.size = size
        self._root = root
        self._lock = threading.Lock()
        self._procs: list[_Process] = []
        self._jobs = itertools.count(1)
        self._closed = False
        #: Runs sent to workers so far.
        self.dispatched = 0
        #: Workers in a row that died before they were ready; at ``MAX_FAILED_STARTS`` no more are started.
        self._failed_starts = 0
        #: Keeps each sent pack's Wasm spec alive, so the id in its key is never reused.
        self._held: dict[tuple[str, int], WasmSpec] = {}
        #: Every start a run has used (``note``), in order: each worker loads them all, when idle.
        self._wanted: dict[tuple[tuple[str, int], int | None], Pack] = {}
        #: Whether the poller thread runs (``_watch_owed``).
        self._polling = False

    # -- dispatch ------------------------------------------------------------------------

    def warm(self) -> None:
        """Start the workers that are missing (in the background: each is ready about a second later)."""
        with self._lock:
            self._fill()

    def _fill(self) -> None:
        if self._closed or self._failed_starts >= MAX_FAILED_STARTS:
            return
        self._procs = [p for p in self._procs if not p.dead]
        while len(self._procs) < self.size:
            started = self._start()
            if started is None:
                break
            self._procs.append(started)
            self._watch_owed()

    def note(self, request: Request, start: int | None) -> None:
        """A run of ``request`` starts (here or in a worker): every worker loads its start, if new.

        ``start`` is ``WasmBackend.start_of(request)``. The workers load it
        in the background, one start at a time each, when they are idle.
        """
        pack = request.pack
        if pack.wasm is None:
            return
        key = (self._key(pack), start)
        with self._lock:
            if key in self._wanted or self._closed:
                return
            self._wanted[key] = pack
            for proc in self._procs:
                self._load_next(proc)

    def take(self, request: Request, start: int | None) -> _Process | None:
        """An idle, ready worker that has loaded ``request``'s start (marked busy), or None: run it here.

        A worker takes only runs of starts it has loaded (``note``): a run
        never waits for a worker's first load of a runtime (1.4 s for the
        scientific Python's), it runs here meanwhile.
        """
        pack = request.pack
        if request.input is not None or pack.wasm is None:
            return None
        key = (self._key(pack), start)
        with self._lock:
            if self._closed:
                return None
            self._fill()
            for proc in self._procs:
                if proc.ready and not proc.busy and not proc.dead and key in proc.loaded:
                    proc.busy = True
                    self.dispatched += 1
                    return proc
        return None

    def _key(self, pack: Pack) -> tuple[str, int]:
        assert pack.wasm is not None
        return (pack.name, id(pack.wasm))

    def _send_pack(self, proc: _Process, pack: Pack) -> tuple[str, int]:
        """Send ``pack`` to ``proc`` unless it has it (lock held); its key."""
        key = self._key(pack)
        assert pack.wasm is not None
        self._held.setdefault(key, pack.wasm)
        if key not in proc.packs:
            proc.writer.send(("pack", key, pack))
            proc.packs.add(key)
        return key

    def _load_next(self, proc: _Process) -> None:
        """If ``proc`` is idle, have it load the first wanted start it lacks (lock held); busy meanwhile."""
        if not proc.ready or proc.busy or proc.dead:
            return
        for start, pack in self._wanted.items():
            if start in proc.loaded:
                continue
            try:
                self._send_pack(proc, pack)
                proc.writer.send(("load", start[0], start[1]))
            except Exception as exc:  # only whole frames went: it is in step, or gone (its reader says so)
                log.debug("a worker could not be asked to load %s: %s", start, exc)
                proc.loaded.add(start)  # not asked again; its runs stay here
                continue
            proc.busy = True
            proc.loading = start
            self._watch_owed()
            return

    async def run(
        self, proc: _Process, request: Request, translate: Callable[[BaseException], BaseException]
    ) -> Outcome:
        """Run ``request`` on ``proc`` (from ``take``); see the module docstring for cancellation and reading."""
        loop = asyncio.get_running_loop()
        job_id = next(self._jobs)
        job = _Job(request, handoff.Delivery(translate))
        with self._lock:
            proc.job = (job_id, job)
            proc.watched = True
        try:
            self._watch(proc, loop)
        except (NotImplementedError, OSError, ValueError) as exc:  # a loop that cannot watch a pipe
            self._release(proc)
            raise NotSent(f"this event loop cannot watch a worker's pipe: {exc!r}") from None
        try:
            tree = procwire.EMPTY_TREE if request.vfs.is_empty_for(request.limits) else request.vfs
            with self._lock:
                key = self._send_pack(proc, request.pack)
                proc.writer.send(("run", job_id, key, request.spec, request.limits, request.stdin, tree))
        except Exception as exc:  # nothing reached the worker but whole frames: it is in step, or gone
            self._linger(proc, loop)
            self._release(proc)
            if isinstance(exc, OSError):
                self._died(proc, "the worker process is gone")
            raise NotSent(str(exc)) from None
        try:
            return await job.delivery.wait(stop=lambda: self._cancel(proc, job_id))
        finally:
            self._linger(proc, loop)
            self._release(proc)

    def _watch(self, proc: _Process, loop: asyncio.AbstractEventLoop) -> None:
        """Have ``loop`` (running on this thread) read ``proc``'s pipe for a job: the watch it kept since its
        last job there, else a new one (``add_reader``, and its removal, cost about 30 us of this process's
        CPU per JavaScript hello world at concurrency 2, a fifth of the hand-over)."""
        if proc.loop is loop:
            return  # its timer, if set, finds this job and waits (``_linger_over``)
        old = proc.loop
        if old is not None:  # another loop kept a watch: it lets go on its own thread
            self._let_go_later(proc, old)
        loop.add_reader(proc.out, self._drain, proc)
        with self._lock:
            proc.holders.add(loop)
            proc.loop = loop
            proc.unwatch = None

    def _linger(self, proc: _Process, loop: asyncio.AbstractEventLoop) -> None:
        """After a job (on ``loop``'s thread): keep the watch for the loop's next job, for ``_LINGER``.

        One timer per watch, not per job: a timer set and cancelled for
        every job cost the loop a handle, a heap push and the sweep of the
        cancelled ones; the timer instead checks, when it fires, whether a
        job ran since (``_linger_over``).
        """
        proc.job_end = loop.time()
        if proc.loop is loop and loop in proc.holders and proc.unwatch is None:
            proc.unwatch = loop.call_later(_LINGER, self._linger_over, proc, loop)

    def _linger_over(self, proc: _Process, loop: asyncio.AbstractEventLoop) -> None:
        """``loop``'s timer (on its thread): let go, unless a job of this loop's ended less than ``_LINGER``
        ago (then wait out the rest); a job in flight sets the timer anew at its end (``_let_go``)."""
        rest = proc.job_end + _LINGER - loop.time()
        with self._lock:
            if rest > 0 and proc.loop is loop and not proc.watched and not proc.dead:
                proc.unwatch = loop.call_later(rest, self._linger_over, proc, loop)
                return
        self._let_go(proc, loop)

    def _let_go(self, proc: _Process, loop: asyncio.AbstractEventLoop) -> None:
        """On ``loop``'s thread: stop watching ``proc``'s pipe; close it when no loop watches and it died."""
        with self._lock:
            if loop not in proc.holders:
                return
            if proc.loop is loop:
                if proc.watched:
                    proc.unwatch = None  # a job of this loop's is in flight again: its end lingers anew
                    return
                proc.loop = None
                proc.unwatch = None
        loop.remove_reader(proc.out)
        with self._lock:
            proc.holders.discard(loop)
            close = proc.dead and not proc.holders and not proc.watched
        if close:
            _close_out(proc)

    def _let_go_later(self, proc: _Process, loop: asyncio.AbstractEventLoop) -> None:
        """From any thread: have ``loop`` stop watching ``proc``'s pipe on its own thread (at once if that is
        this one, or if it is closed). A loop that is stopped, not closed, lets go when it runs again."""
        if asyncio._get_running_loop() is loop:
            self._let_go(proc, loop)
            return
        try:
            loop.call_soon_threadsafe(self._let_go, proc, loop)
        except RuntimeError:  # closed: its selector, and the watch in it, are gone
            with self._lock:
                proc.holders.discard(loop)
                if proc.loop is loop:
                    proc.loop = None

    def _release(self, proc: _Process) -> None:
        """The job on ``proc`` is over: it may take the next (or, if it died, its pipe is let go and closed)."""
        with self._lock:
            proc.watched = False
            proc.job = None
            proc.busy = False
            dead = proc.dead
            if not dead:
                self._load_next(proc)
        if dead:
            self._let_all_go(proc)

    def _let_all_go(self, proc: _Process) -> None:
        """From any thread: every loop lets go of ``proc``'s pipe on its own thread; the last closes it."""
        with self._lock:
            holders = list(proc.holders)
            if proc.watched:
                return  # the job's loop lets go as the job ends (``_release``)
        for loop in holders:
            self._let_go_later(proc, loop)
        with self._lock:
            close = not proc.holders and not proc.watched
        if close:
            _close_out(proc)

    def _cancel(self, proc: _Process, job_id: int) -> None:
        with self._lock:  # under the lock that closes it (``_kill``): never a write to a reused fd number
            if proc.cancels < 0:
                return  # it is gone: its pipe's end fails the job
            try:
                os.write(proc.cancels, procwire.CANCEL.pack(job_id))
            except OSError:
                pass  # it is gone: its pipe's end fails the job

    # -- workers ---------------------------------------------------------------------------

    def _start(self) -> _Process | None:
        """A new worker process (a poll finds it ready). Called with the lock held."""
        cancel_read, cancel_write = os.pipe()
        try:
            proc = subprocess.Popen(
                # -P: ``-m`` would put the working directory first on the path, and a ``backends`` or
                # ``playground`` folder of the caller's there would be imported in place of ours.
                [sys.executable, "-P", "-m", "backends.wasm.procworker", str(self._root), str(cancel_read)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(cancel_read,),
                env={**os.environ, "PYTHONPATH": _import_root()}, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            os.close(cancel_write)
            log.warning("cannot start a Wasm worker process: %s", exc)
            return None
        finally:
            os.close(cancel_read)
        assert proc.stdin is not None and proc.stdout is not None
        out = proc.stdout.fileno()
        os.set_blocking(out, False)
        return _Process(proc=proc, writer=procwire.Writer(proc.stdin.fileno()), out=out, cancels=cancel_write)

    def _watch_owed(self) -> None:
        """Start the poller thread unless it runs (lock held): a worker owes a message (ready, loaded)."""
        if not self._polling and not self._closed:
            self._polling = True
            threading.Thread(target=self._poller, name="procpool-poll", daemon=True).start()

    def _poller(self) -> None:
        """Read the workers that owe a message as it comes; end when none does (or the pool closed)."""
        while True:
            with self._lock:
                owing = self._unwatched()
                if not owing or self._closed:
                    self._polling = False
                    return
            try:
                readable = set(select.select([p.out for p in owing], [], [], 0.5)[0])
            except (OSError, ValueError):  # a pipe closed meanwhile: look again
                continue
            for proc in owing:
                if proc.out in readable:
                    self._drain(proc, wait=False)

    def _poll(self, every: bool = False) -> None:
        """Take the messages waiting from idle workers: those that owe one (starting, loading), or ``every``."""
        with self._lock:
            procs = self._unwatched(every)
        for proc in procs:
            self._drain(proc, wait=False)

    def _unwatched(self, every: bool = False) -> list[_Process]:
        """Live workers no loop reads (lock held): those that owe a message (starting, loading), or ``every``."""
        return [
            p for p in self._procs
            if not p.dead and not p.watched and p.out >= 0 and (every or not p.ready or p.loading is not None)
        ]  # fmt: skip

    def _drain(self, proc: _Process, wait: bool = True) -> None:
        """Read what ``proc`` has sent and act on each message; the end of its pipe is its death.

        The event loop calls this when the pipe of a job's worker is
        readable; polls call it with ``wait=False`` and skip a worker that
        another thread is reading.
        """
        if not proc.read_lock.acquire(blocking=wait):
            return
        ended = None
        try:
            while proc.out >= 0:
                try:
                    data = os.read(proc.out, _READ_SIZE)
                except BlockingIOError:
                    break
                if not data:
                    ended = "the worker process ended"
                    break
                for message in proc.frames.feed(data):
                    self._take_message(proc, message)
                if len(data) < _READ_SIZE:
                    break  # all there was (a further read would only say so)
        except Exception as exc:  # a broken frame: the worker is no longer trusted to be in step
            ended = f"the worker process sent a broken message: {exc}"
        finally:
            proc.read_lock.release()
        if ended is not None:
            self._died(proc, ended)

    def _take_message(self, proc: _Process, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            with self._lock:
                proc.ready = True
                self._failed_starts = 0
                self._load_next(proc)
            return
        if kind == "loaded":  # also after a failed load: its runs then fail or start cold there, as here
            with self._lock:
                if proc.loading is not None:
                    proc.loaded.add(proc.loading)
                proc.loading = None
                proc.busy = False
                self._load_next(proc)
            return
        current = proc.job
        if current is None or current[0] != message[1]:
            return  # a late message of a job already failed
        job = current[1]
        request = job.request
        if kind == "output":
            _write_output(request, message[2], message[3])
        elif kind == "progress":
            if request.progress is not None:
                try:
                    request.progress(message[2], message[3])
                except Exception:
                    log.exception("progress callback failed")
        elif kind in ("done", "failed"):
            for stream, data in message[-1]:  # the output the worker had not sent yet
                _write_output(request, stream, data)
            tree: TreeReport | None = message[-4]  # None: the worker could not send it (``procworker._answer``)
            attempts: tuple[Attempt, ...] = message[-3]
            if tree is not None:
                request.vfs.adopt_report(tree)
            request.attempts.merge(attempts, dropped=message[-2])
            with self._lock:
                proc.job = None  # free once its loop stops reading it (``run``'s ``_release``)
            if kind == "done":
                job.delivery.settle(message[2])
            else:
                job.delivery.settle(_error(message[2], message[3], message[4]))

    def _died(self, proc: _Process, reason: str) -> None:
        with self._lock:
            if proc.dead:
                return
            proc.dead = True
            current, proc.job = proc.job, None
            if not proc.ready:
                self._failed_starts += 1
                if self._failed_starts == MAX_FAILED_STARTS:
                    log.warning("Wasm worker processes keep failing to start (%s); runs stay in this process", reason)
        if current is not None:
            current[1].delivery.settle(runner.HostFailure(f"{reason} during the run"))
        self._kill(proc)

    # -- cost and life -----------------------------------------------------------------------

    def idle_memory(self) -> list[int]:
        """The memory (bytes) each live worker process costs: its proportional set size and its images.

        The compiled runtimes are files mapped by this process and every
        worker (``modcache``), so their pages are shared; PSS charges each
        process its share of those and all of its own memory. The snapshot
        images it loaded are its own memfds, counted whole (``_memory``).
        """
        self._poll(every=True)
        with self._lock:
            pids = [p.proc.pid for p in self._procs if not p.dead]
        sizes = []
        for pid in pids:
            size = _memory(pid)
            if size is not None:
                sizes.append(size)
        return sizes

    def ready(self) -> int:
        """How many workers are started and ready for runs."""
        self._poll(every=True)
        with self._lock:
            return sum(1 for p in self._procs if p.ready and not p.dead)

    def loads_pending(self) -> int:
        """Starts (``note``) the live workers have still to load, counted per worker (0: all loaded)."""
        self._poll()
        with self._lock:
            return sum(1 for p in self._procs if not p.dead for start in self._wanted if start not in p.loaded)

    def pids(self) -> list[int]:
        self._poll(every=True)
        with self._lock:
            return [p.proc.pid for p in self._procs if not p.dead]

    def close(self) -> None:
        """Kill every worker at once; a job in flight fails (its run was being abandoned anyway)."""
        with self._lock:
            self._closed = True
            procs, self._procs = self._procs, []
        for proc in procs:
            self._kill(proc)  # a job in flight: its loop reads the end, fails the job and closes the pipe

    def _kill(self, proc: _Process) -> None:
        """Kill the worker and close our ends of its pipes.

        Its stdout stays open while a loop reads it for a job (``watched``):
        that loop reads the end, fails the job and closes it (``_release``);
        a loop that only kept watching it is asked to let go, and the last
        to let go closes it.
        """
        try:
            proc.proc.kill()
        except OSError:
            pass
        try:
            if proc.proc.stdin is not None:
                proc.proc.stdin.close()
        except OSError:
            pass
        with self._lock:
            cancels, proc.cancels = proc.cancels, -1
            if cancels >= 0:
                os.close(cancels)
        self._let_all_go(proc)
        threading.Thread(target=proc.proc.wait, name="procpool-reap", daemon=True).start()


def _memory(pid: int) -> int | None:
    """What ``pid`` costs in bytes: its proportional set size, with its snapshot images counted whole.

    The images are memfds (``memlimit.MemoryImage``) of the process's own:
    their pages are shared memory that PSS counts only while they are
    mapped, and then only those touched, so a worker that held three
    images (28 MB) showed 29 MB of PSS, as one that held none would.
    Here each memfd counts its allocated size, once, and a mapping of one
    only its copied-on-write pages; everything else counts its PSS. Resident
    memory where the kernel does not report these; None when ``pid`` is gone.
    """
    try:
        total = 0
        with open(f"/proc/{pid}/smaps") as smaps:
            image = False
            for line in smaps:
                if line[0] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:  # a mapping's first line
                    image = "/memfd:" in line
                elif (line.startswith("Pss:") and not image) or (line.startswith("Anonymous:") and image):
                    total += int(line.split()[1]) * 1024
        return total + _memfd_bytes(pid)
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _memfd_bytes(pid: int) -> int:
    """The allocated size of the memfds ``pid`` holds open, each once (by inode)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if not os.readlink(path).startswith("/memfd:"):
                continue
            stat = os.stat(path)
        except OSError:
            continue  # closed meanwhile
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def _error(name: str, message: str, outcome: Outcome | None) -> BaseException:
    cls = _ERRORS.get(name)
    if cls is None:
        return runner.HostFailure(f"the worker process failed: {name}: {message}")
    if issubclass(cls, errors.LimitExceeded):
        return cls(message, outcome=outcome)
    return cls(message)


def _write_output(request: Request, stream: Stream, data: bytes) -> None:
    try:
        request.output.write(stream, data)
    except OutputLimitExceeded:
        pass  # the worker's own capture has the same cap and stops the guest
    except Exception:  # the caller's listener: its failure is not the worker's
        log.exception("output listener failed")


def _close_out(proc: _Process) -> None:
    """Close our end of the worker's stdout, once nobody reads it (no read meets a reused fd number)."""
    with proc.read_lock:
        if proc.out < 0:
            return
        proc.out = -1
        try:
            if proc.proc.stdout is not None:
                proc.proc.stdout.close()
        except OSError:
            pass


def _import_root() -> str:
    """Where ``backends`` and ``playground`` are imported from here, first on the worker's path."""
    here = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH", "")
    return here + (os.pathsep + rest if rest else "")
