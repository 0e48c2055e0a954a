"""Reused worker threads for one-shot runs: starting a thread per run cost more than a Lua run itself.

Why: a new thread with the 16 MiB stack wasmtime needs, plus wasmtime's
per-thread set-up on its first call (its trap handling state), took about
0.4 ms of CPU per run, measured beside the run (``bench/oneshot_speed.py``):
more than a third of a hello-world Lua run. A worker that ran one run's
guest runs the next one's.

What a worker keeps of a run: nothing the next guest can see. The runner
closes the run's Store (its instance, memories, tables) before the job
returns; the descriptors and the VFS belong to the run; the memory-budget
thread-local is restored by its scope; the guest's CPU clock counts from
the run's start (``RunState.cpu_base``), not from the thread's. The thread
name is the current run's while it runs one, ``IDLE_NAME`` while it waits
(a thread list shows which threads run guests).

Never a queue: a job goes to an idle worker if there is one, or else to a
new thread, so a run never waits behind another (concurrency is as
unbounded as with a thread per run). A worker that finds ``max_idle`` idle
workers already, or waits ``idle_timeout`` seconds without a job, ends:
the threads follow the load, and a quiet process has none left (no growth
over any number of runs; no background CPU). Workers are daemon threads
and ``close`` ends the idle ones at once: a pool never delays quitting.

Thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Final

log = logging.getLogger(__name__)

#: Idle workers kept for the next runs (more in flight are fine: they end when done).
MAX_IDLE: Final = 4
#: Seconds an idle worker waits for a job before it ends.
IDLE_TIMEOUT: Final = 10.0
#: The name of a worker thread between runs.
IDLE_NAME: Final = "wasm-idle"

Job = Callable[[], None]
#: Starts a thread running its first argument (``backend._start_worker``: the stack size wasm needs).
ThreadStarter = Callable[[Job, str], threading.Thread]


class _Worker:
    __slots__ = ("job", "name", "wake")

    def __init__(self) -> None:
        #: Released by ``submit`` (or ``close``) once ``job`` is set: a lock is the cheapest wake-up.
        self.wake = threading.Lock()
        self.wake.acquire()
        self.job: Job | None = None
        self.name = ""


class WorkerPool:
    """Threads for one-shot runs, reused while there is work (see the module docstring)."""

    def __init__(
        self, start_thread: ThreadStarter, *, max_idle: int = MAX_IDLE, idle_timeout: float = IDLE_TIMEOUT
    ) -> None:
        self._start_thread = start_thread
        self._max_idle = max_idle
        self._idle_timeout = idle_timeout
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._threads = 0
        self._closed = False

    def submit(self, job: Job, name: str) -> None:
        """Run ``job`` on an idle worker, or on a new thread; returns at once. ``job`` must not raise.

        Raises:
            RuntimeError: the pool is closed.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            worker = self._idle.pop() if self._idle else None  # the most recent: the others may time out
            if worker is None:
                self._threads += 1
        if worker is not None:
            worker.job, worker.name = job, name
            worker.wake.release()
            return
        fresh = _Worker()
        fresh.job, fresh.name = job, name
        try:
            self._start_thread(lambda: self._serve(fresh), name)
        except BaseException:
            with self._lock:
                self._threads -= 1
            raise

    def close(self) -> None:
        """End the idle workers now and any busy one when its job is done. Idempotent."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.job = None
            worker.wake.release()

    @property
    def threads(self) -> int:
        """The pool's live threads, busy or idle."""
        with self._lock:
            return self._threads

    @property
    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def _serve(self, worker: _Worker) -> None:
        try:
            while True:
                job, worker.job = worker.job, None
                if job is None:
                    return
                threading.current_thread().name = worker.name
                try:
                    job()
                except BaseException:  # a job hands its own errors on (``handoff``); this is a bug
                    log.exception("a wasm worker's job raised")
                del job
                threading.current_thread().name = IDLE_NAME
                if not self._park(worker):
                    return
        finally:
            with self._lock:
                self._threads -= 1

    def _park(self, worker: _Worker) -> bool:
        """Wait idle for the next job; False: this worker ends (enough idle, closed, or timed out)."""
        with self._lock:
            if self._closed or len(self._idle) >= self._max_idle:
                return False
            self._idle.append(worker)
        if worker.wake.acquire(timeout=self._idle_timeout):
            return True
        with self._lock:
            if worker in self._idle:  # nobody took it: end
                self._idle.remove(worker)
                return False
        worker.wake.acquire()  # taken between the timeout and the lock: its job is being handed over
        return True
