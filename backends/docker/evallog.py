"""Where recorders that live as long as a session put their records: the ``AttemptLog`` of the eval in flight.

A session's sinkhole and spawn watch are set up once, when its container
starts, but every eval carries its own attempts (``GuestSession.eval``'s
``attempts``). ``EvalLog`` is the one place they record to: ``begin`` points
it at an eval's log, ``end`` (after the recorders have handled what the
kernel sent during the eval) points it nowhere. What is recorded between
evals (a background job of an earlier eval that runs a command or connects
while no eval runs) is dropped: it belongs to no eval's result.
"""

from __future__ import annotations

import threading
from typing import Protocol

from playground.core.attempts import AttemptKind, AttemptLog, Observer


class Recorder(Protocol):
    """What the host's recorders write to: an ``AttemptLog``, or an ``EvalLog`` in front of one."""

    def record(self, kind: AttemptKind, target: str, verdict: str, *, observer: Observer = ...) -> None: ...


class EvalLog:
    """The attempt log of the eval in flight (None between evals). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._log: AttemptLog | None = None

    def begin(self, log: AttemptLog | None) -> None:
        with self._lock:
            self._log = log

    def end(self) -> None:
        with self._lock:
            self._log = None

    def record(self, kind: AttemptKind, target: str, verdict: str, *, observer: Observer = Observer.HOST) -> None:
        with self._lock:
            log = self._log
        if log is not None:
            log.record(kind, target, verdict, observer=observer)
