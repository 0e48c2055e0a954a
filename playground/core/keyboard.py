"""``InputStream``: what a user types, on its way to one running program (or one REPL eval).

``Spec.stdin`` stays plain data: bytes known before the run (piped input, a
file's contents). Typing is different: the bytes arrive while the program
runs, one line at a time, and "end of input" (Ctrl-D) is an event of its
own. A front end makes one ``InputStream`` per run, passes it as
``Sandbox.run(spec, input=...)`` or ``Session.eval(code, input=...)``, and
calls ``write`` for every line the user enters and ``close`` for Ctrl-D.
The guest reads ``Spec.stdin`` first (when both are given), then this.

A guest read returns as soon as *some* bytes are there (like a read on a
terminal in line mode), never waiting to fill its buffer; at the end of
input it returns ``b""``. Backends never block a guest in a read without
a bound: ``read`` takes a timeout, and each backend waits in short slices
that check the run's wall-time deadline and cancellation (see
``backends.wasm.keyboard`` and ``backends.docker.oneshot``), so a guest
waiting for a line is still stopped at its wall-time limit and by Stop,
and is not charged CPU time while it waits.

Thread-safe: the writer is a UI or terminal thread, the reader a backend's
worker thread. Nothing here blocks a writer: ``write`` and ``close``
return at once (a GUI thread may call them).
"""

from __future__ import annotations

import threading
import time

__all__ = ["InputStream"]


class InputStream:
    """A thread-safe byte channel from a keyboard to one guest: ``write``, ``close`` (EOF), blocking ``read``."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._buf = bytearray()
        self._closed = False
        self._readers = 0
        self._delivered = 0

    # -- the front end's side ---------------------------------------------------------------

    def write(self, data: bytes) -> bool:
        """Queue ``data`` for the guest; False (and nothing queued) once the input was closed. Never blocks."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("InputStream.write takes bytes")
        with self._cond:
            if self._closed:
                return False
            if data:
                self._buf += data
                self._cond.notify_all()
            return True

    def close(self) -> None:
        """End of input (Ctrl-D): the guest reads what was queued, then end of file. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        """True after ``close`` (the guest may still have queued bytes to read)."""
        with self._cond:
            return self._closed

    @property
    def waiting(self) -> bool:
        """True while a guest is blocked reading with nothing queued (a UI may say "waiting for input")."""
        with self._cond:
            return self._readers > 0 and not self._buf and not self._closed

    @property
    def delivered(self) -> int:
        """How many bytes guests have read so far."""
        with self._cond:
            return self._delivered

    # -- the backend's side -----------------------------------------------------------------

    def read(self, limit: int, timeout: float | None = None) -> bytes | None:
        """Up to ``limit`` bytes as soon as any are queued; ``b""`` at end of input; None if ``timeout`` passed first.

        ``timeout`` None waits without bound: backends pass a short slice and
        check their run's deadline and cancellation between slices.
        """
        if limit <= 0:
            return b""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._readers += 1
            try:
                while not self._buf and not self._closed:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return None
                    self._cond.wait(left)
                chunk = bytes(self._buf[:limit])
                del self._buf[:limit]
                self._delivered += len(chunk)
                return chunk
            finally:
                self._readers -= 1

    def ready(self) -> int | None:
        """Bytes a read would return now without blocking; 0 at end of input; None when a read would block."""
        with self._cond:
            if self._buf:
                return len(self._buf)
            return 0 if self._closed else None

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until a read would not block; True when it would not."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._buf and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True
