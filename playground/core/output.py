"""Capped capture of a guest's stdout and stderr.

One budget (``Limits.max_output``) covers both streams together. The write
that crosses it keeps exactly the bytes that fit, marks the capture
truncated and raises ``OutputLimitExceeded``: that exception is how a
backend is told to stop the guest. Every later write raises again without
storing anything, so a guest that ignores the first error gains nothing.

Thread-safe: the guest's worker writes while a UI may read a snapshot.
Listeners (live output in the GUI, service logs) are called on the
writing thread, outside the lock, with the bytes that were kept.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable

from playground.core.errors import OutputLimitExceeded


class Stream(enum.Enum):
    STDOUT = 1
    STDERR = 2


OutputListener = Callable[[Stream, bytes], None]


class OutputCapture:
    """Two byte streams sharing one cap. ``limit=None`` means no cap."""

    def __init__(self, limit: int | None, listener: OutputListener | None = None) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._chunks: dict[Stream, bytearray] = {Stream.STDOUT: bytearray(), Stream.STDERR: bytearray()}
        self._total = 0
        self._truncated = False
        self._listener = listener

    def write(self, stream: Stream, data: bytes | bytearray | memoryview) -> int:
        """Store ``data``; return its length.

        Raises:
            OutputLimitExceeded: the cap was reached; only the part that fit
                was stored.
        """
        with self._lock:
            if self._truncated:
                raise OutputLimitExceeded(f"output limit of {self._limit} bytes exceeded")
            keep = len(data)
            if self._limit is not None and self._total + keep > self._limit:
                keep = self._limit - self._total
                self._truncated = True
            kept = bytes(data[:keep])
            self._chunks[stream] += kept
            self._total += keep
            truncated = self._truncated
        if kept and self._listener is not None:
            self._listener(stream, kept)
        if truncated:
            raise OutputLimitExceeded(f"output limit of {self._limit} bytes exceeded")
        return len(data)

    def write_stdout(self, data: bytes | bytearray | memoryview) -> int:
        return self.write(Stream.STDOUT, data)

    def write_stderr(self, data: bytes | bytearray | memoryview) -> int:
        return self.write(Stream.STDERR, data)

    @property
    def truncated(self) -> bool:
        with self._lock:
            return self._truncated

    @property
    def total(self) -> int:
        with self._lock:
            return self._total

    def stdout(self) -> bytes:
        with self._lock:
            return bytes(self._chunks[Stream.STDOUT])

    def stderr(self) -> bytes:
        with self._lock:
            return bytes(self._chunks[Stream.STDERR])
