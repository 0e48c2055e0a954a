"""Forwarding what the user types into a run's container, on a thread of its own.

With a keyboard (``Request.input``) a run's program reads the container's
own stdin, after the input archive (``wrapper.wrapper_script`` with
``live_stdin``: ``head -c`` takes exactly the archive, the rest is the
program's). ``Feeder`` writes ``Spec.stdin`` there first, then every line
as it is typed, and half-closes the stream at the end of input (Ctrl-D),
which the program reads as end of file.

Why this cannot hang or outlive the run: the feeder never blocks the
reader of the container's output (``Attachment.write_some`` neither
waits nor changes the socket's timeout); it sleeps on the keyboard in
``SLICE`` steps and checks its stop flag between them; ``stop`` is called
when the output pump ends (the container exited, was killed at its wall
time or cancelled) and joins it. A program blocked on a read is stopped
like any other at the host's wall-time deadline or on cancellation
(``oneshot.pump`` kills the container); a blocked read costs it no CPU
time (RLIMIT_CPU counts CPU, not waiting).

Over TLS (a ``tcp://`` daemon) the stream cannot be half-closed
(``Attachment.close_stdin``): the end of input then never reaches the
program, which waits until its wall time; a plain socket (the usual local
daemon) has no such limit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from backends.docker.engine import Attachment, EngineError
from playground.core.keyboard import InputStream

log = logging.getLogger(__name__)

#: Longest sleep on the keyboard or on a full pipe before the stop flag is checked again.
SLICE: Final = 0.05
#: Largest single write.
CHUNK: Final = 64 << 10


class Feeder:
    """Writes ``first`` and then ``keyboard`` into the container's stdin; half-closes at end of input.

    A REPL session's driver owns that stdin for its commands (``session``):
    there ``frame`` wraps each typed chunk in a command and ``end`` is the
    command for end of input, each written whole (``stop`` waits for a
    command in flight, so the stream never holds half of one).
    """

    def __init__(
        self,
        attachment: Attachment,
        first: bytes,
        keyboard: InputStream,
        *,
        frame: Callable[[bytes], bytes] | None = None,
        end: bytes | None = None,
    ) -> None:
        self._attachment = attachment
        self._first = first
        self._keyboard = keyboard
        self._frame = frame
        self._end = end
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="docker-keyboard", daemon=True)
        #: True once the end of input was passed on (the program reads end of file).
        self.closed = False

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop forwarding and wait for the thread (about one ``SLICE``, or a command in flight); True if it ended.

        Idempotent.
        """
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            if self._write(self._first):
                self._forward()
        except EngineError as exc:  # the container is gone: nobody left to read
            log.debug("keyboard forwarding ended: %s", exc)

    def _forward(self) -> None:
        while not self._stop.is_set():
            data = self._keyboard.read(CHUNK, SLICE)
            if data is None:
                continue
            if not data:
                if self._end is None:
                    self.closed = self._attachment.close_stdin()
                else:
                    self.closed = self._write(self._end, whole=True)
                return
            if self._frame is not None:
                data = self._frame(data)
            if not self._write(data, whole=self._frame is not None):
                return

    def _write(self, data: bytes, *, whole: bool = False) -> bool:
        """Write all of ``data`` unless stopped first (``whole``: even then); False when stopped."""
        view = memoryview(data)
        while view:
            if self._stop.is_set() and not whole:
                return False
            sent = self._attachment.write_some(view[:CHUNK])
            if sent:
                view = view[sent:]
            else:
                time.sleep(0.005)  # the pipe is full: the program has not read yet
        return True
