"""A worker process of the Wasm backend (``procpool``): runs one-shot runs sent over its stdin, one at a time.

    python -m backends.wasm.procworker CACHE_DIR CANCEL_FD

Why a process: one-shot runs in one process share its interpreter lock
(our WASI is Python) and its address space (each copy-on-write fault of a
snapshot page flushes the TLB of every core running a thread of the
process), so two runs in flight went no faster than one. A worker has its
own of both. It is a ``WasmBackend`` of its own over the same cache (the
compiled modules and snapshots are files there), fed the core's request:
the pack (once per key), the spec, the resolved limits, stdin and the
run's tree (``procwire.EMPTY_TREE`` when it is the empty layout). It
enforces the limits itself, streams output and progress back as they
come, and answers with the outcome or the error, the report of the tree
(``VFS.report``: ``/out`` and the charge; the runtime's mounts, which are
the worker's own, are in neither) and the attempts.

The main thread reads stdin itself and runs what comes: the parent sends
a worker nothing while its job runs, so no reader thread has to hand each
run over (a thread wake and a lock hand-over per run, a tenth of a short
run). Cancels come on a pipe of their own (``CANCEL_FD``: a job id, 8 bytes
little-endian) that a thread watches; a cancel that comes before its job
has started is kept and stops it as it starts. Everything about the guest
is as in the parent: the same backend code runs it. The worker exits when
its stdin closes (the parent went away); when the parent goes during a
job, the cancel pipe's end stops the job first (its guest may have no time
limit).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from backends.wasm import procwire
from backends.wasm.backend import WasmBackend
from backends.wasm.engine import shared_engine
from backends.wasm.state import RunControl
from playground.core.attempts import AttemptLog
from playground.core.backend import Request
from playground.core.output import OutputCapture, Stream
from playground.core.pack import Pack
from playground.core.vfs import VFS


class _Worker:
    def __init__(self, cache_dir: Path, writer: procwire.Writer) -> None:
        self._backend = WasmBackend(cache_dir=cache_dir)
        self._writer = writer
        self._packs: dict[Any, Pack] = {}
        self._lock = threading.Lock()
        self._current: tuple[int, RunControl] | None = None
        #: The last job started; cancels of later ones (not started yet) are kept in ``_cancelled``.
        self._last_job = 0
        self._cancelled: set[int] = set()
        self._parent_gone = False
        self._pump = _OutputPump(writer.send)
        shared_engine().on_tick(self._pump.on_tick)

    def serve(self, stream: IO[bytes]) -> None:
        """Take the parent's messages in order and do each: until the stream ends, or the parent is gone."""
        try:
            while (message := procwire.receive(stream)) is not None:
                kind = message[0]
                if kind == "pack":
                    self._packs[message[1]] = message[2]
                elif kind == "load":
                    self._load(message[1], message[2])
                elif kind == "run":
                    self._run(message)
        except OSError:
            pass  # the parent is gone (a write to it failed, or its stream broke)

    def watch_cancels(self, fd: int) -> None:
        """The cancel thread: stop the job a cancel names; when the pipe ends (the parent is gone), any job."""
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while True:
                try:
                    job = procwire.receive_cancel(pipe)
                except OSError:
                    job = None
                if job is None:
                    break
                with self._lock:
                    if self._current is not None and self._current[0] == job:
                        self._current[1].cancel()
                    elif job > self._last_job:
                        self._cancelled.add(job)  # sent before its run was read: stopped as it starts
        with self._lock:
            self._parent_gone = True
            if self._current is not None:
                self._current[1].cancel()

    def _load(self, key: Any, start: int | None) -> None:
        """Load a start before runs of it come (``WasmBackend.load_start``); ``loaded`` either way."""
        try:
            self._backend.load_start(self._packs[key], start)
        except Exception as exc:  # a run from it meets the same failure and reports it
            print(f"procworker: loading {key} {start} failed: {exc}", file=sys.stderr)
        self._writer.send(("loaded", key, start))

    def _run(self, message: tuple[Any, ...]) -> None:
        _, job, key, spec, limits, stdin, tree = message
        vfs: VFS = VFS.for_limits(limits) if isinstance(tree, str) else tree  # str: ``EMPTY_TREE``
        send = self._writer.send
        attempts = AttemptLog()

        output = self._pump.begin(job)

        def progress(text: str, fraction: float = -1.0) -> None:
            send(("progress", job, text, fraction))

        request = Request(
            pack=self._packs[key], spec=spec, limits=limits, vfs=vfs, stdin=stdin, progress=progress,
            output=OutputCapture(limits.max_output_cap, output), attempts=attempts,
        )  # fmt: skip
        control = RunControl(wall_limit=limits.wall_time_cap, cpu_limit=limits.cpu_time_cap)
        with self._lock:
            self._current = (job, control)
            self._last_job = job
            if job in self._cancelled or self._parent_gone:
                control.cancel()
            self._cancelled = {later for later in self._cancelled if later > job}
        rest: tuple[tuple[Stream, bytes], ...] = ()
        try:
            try:
                outcome = self._backend.run_here(request, control)
            finally:
                rest = self._pump.finish()  # the output not sent yet goes in the answer
        except Exception as exc:  # every error goes back by name; the parent raises its own kind
            error = (type(exc).__name__, str(exc), getattr(exc, "outcome", None))
            self._answer(("failed", job, *error, vfs.report(), attempts.snapshot(), attempts.dropped, rest))
        else:
            self._answer(("done", job, outcome, vfs.report(), attempts.snapshot(), attempts.dropped, rest))
        finally:
            with self._lock:
                self._current = None
        self._after_run(request)

    def _after_run(self, request: Request) -> None:
        """While the parent hands the next run over: prepare the next one's instance and tidy up this one."""
        try:
            self._backend.after_run_here(request)
        except Exception as exc:  # the next run starts its own instance
            print(f"procworker: tidying up after a run failed: {exc!r}", file=sys.stderr)

    def _answer(self, answer: tuple[Any, ...]) -> None:
        """Send the job's answer (its last output in it); one that cannot be sent fails the job, not the worker.

        The answer is pickled before anything is written, so a failure
        leaves the wire in step. The failure goes without the tree's report
        (the parent's tree stays as it was), with the output.
        """
        try:
            self._writer.send(answer)
        except OSError:
            raise  # the parent is gone
        except Exception as exc:
            reason = f"the worker could not send the run's result back: {type(exc).__name__}: {exc}"
            self._writer.send(("failed", answer[1], "HostFailure", reason, None, None, (), 0, answer[-1]))


class _OutputPump:
    """The jobs' output, sent in batches: what the guest wrote within a tick goes as one message per stream run.

    A guest that prints line by line would otherwise cost a message per
    line (a 100,000-line flood took 1.7x as long in a worker). A write that
    comes ``DELAY`` after the last send, in a job running for ``DELAY``
    already, goes at once on the guest's thread; one that comes sooner
    waits for the engine's next tick (``WasmEngine.on_tick``: every 5 ms
    while a guest runs), which sends what gathered, or goes at once at
    ``BATCH`` bytes. So output still shows as it comes (within a tick), and
    a short job's output goes with its answer: ``finish`` hands back the
    rest for the answer, one message and one wake of the parent instead of
    two per short run. The tick is a wake the ticker thread takes anyway: a flusher
    thread of the pump's own woke once or twice per short run, about 25 us
    of the worker's CPU per JavaScript hello world at concurrency 2.
    """

    DELAY = 0.005
    BATCH = 64 << 10

    def __init__(self, send: Callable[[tuple[Any, ...]], None]) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._job = 0
        self._pending: list[tuple[Stream, bytes]] = []
        self._size = 0
        self._last_sent = 0.0
        self._began = 0.0

    def begin(self, job: int) -> Callable[[Stream, bytes], None]:
        """The output listener of ``job`` (one job at a time)."""
        with self._lock:
            self._job = job
            self._began = time.monotonic()

        def add(stream: Stream, data: bytes) -> None:
            self._add(job, stream, data)

        return add

    def _add(self, job: int, stream: Stream, data: bytes) -> None:
        with self._lock:
            if job != self._job:
                return  # a late write of a job already answered
            now = time.monotonic()
            if not self._pending and now - self._last_sent >= self.DELAY and now - self._began >= self.DELAY:
                self._last_sent = now
                self._send(("output", job, stream, bytes(data)))  # under the lock: in order
                return
            self._pending.append((stream, bytes(data)))
            self._size += len(data)
            full = self._size >= self.BATCH
        if full:
            self.flush()

    def flush(self) -> None:
        with self._lock:  # held while sending, so batches leave in order
            chunks = self._take()
            for stream, data in chunks:
                self._send(("output", self._job, stream, data))
            if chunks:
                self._last_sent = time.monotonic()

    def on_tick(self) -> None:
        """The engine's tick (its ticker thread): send what gathered since the last one."""
        try:
            self.flush()
        except OSError:
            pass  # the parent is gone: the worker's main loop ends

    def _take(self) -> tuple[tuple[Stream, bytes], ...]:
        """The pending output, one chunk per run of the same stream (lock held)."""
        pending, self._pending, self._size = self._pending, [], 0
        merged: list[tuple[Stream, list[bytes]]] = []
        for stream, data in pending:
            if merged and merged[-1][0] is stream:
                merged[-1][1].append(data)
            else:
                merged.append((stream, [data]))
        return tuple((stream, b"".join(parts)) for stream, parts in merged)

    def finish(self) -> tuple[tuple[Stream, bytes], ...]:
        """The job's pending output, for its answer; later writes of it are dropped."""
        with self._lock:
            chunks = self._take()
            self._job = 0
        return chunks


def _run_as_batch() -> None:
    """Ask the kernel to schedule this process (and the threads it starts) as batch work (``SCHED_BATCH``).

    A worker's runs are throughput; the parent's thread that hands them
    over, reads their answers and serves the caller (an MCP server's or
    the window's event loop) is latency. A normal worker woken by its next
    job on the core where the parent ran preempted the parent, which then
    sat out the rest of that run with the other worker's answer unread:
    the parent's write of a run took 0.38-0.46 ms on average, one in ten
    over 1.4 ms (JavaScript hello at concurrency 2, 2 workers). A batch
    worker waits for the parent to block instead: 0.07-0.10 ms, one in ten
    over 0.09-0.14 ms, and 22-24% more runs per second. Its share of the
    CPU is unchanged (same nice value), and any user may ask for it.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux, or a seccomp policy that refuses it: normal scheduling
        pass


def main(argv: list[str]) -> int:
    _run_as_batch()  # first: the threads started below inherit it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the parent's to handle
    out = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print cannot corrupt the wire
    writer = procwire.Writer(out)
    worker = _Worker(Path(argv[1]), writer)
    threading.Thread(target=worker.watch_cancels, args=(int(argv[2]),), name="procworker-cancel", daemon=True).start()
    writer.send(("ready",))
    worker.serve(sys.stdin.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
