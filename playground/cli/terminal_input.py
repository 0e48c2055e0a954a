"""The terminal as a running program's keyboard (``playground run`` and ``playground repl``).

The terminal stays in its normal (cooked) mode: the kernel's line editor
gives backspace and Ctrl-U, echoes what is typed, and hands a line over
when Enter is pressed; Ctrl-D on an empty line reads as end of input
(``read`` returns 0), which we pass on as ``InputStream.close``; Ctrl-C is
still SIGINT, so it stops the run exactly as before (``run``: the run is
cancelled; ``repl``: the input is interrupted).

Reads use ``os.read`` on the descriptor, never ``sys.stdin``'s buffered
object: a daemon thread blocked in a read of the buffered object can make
the interpreter's shutdown abort (it cannot take the object's lock), and a
buffer could keep bytes that belong to the next prompt.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import Final

from playground.core import InputStream

#: One read from the terminal (a line in cooked mode is at most 4096 bytes on Linux).
CHUNK: Final = 65536


def terminal_fd() -> int | None:
    """stdin's descriptor when it is a terminal, else None (piped or redirected stdin is read whole instead)."""
    stream = sys.stdin
    try:
        if stream is None or stream.closed or not stream.isatty():
            return None
        return stream.fileno()
    except (OSError, ValueError):
        return None


def terminal_keyboard() -> InputStream | None:
    """For ``playground run``: an ``InputStream`` fed line by line from the terminal, or None when stdin is not one.

    A daemon thread reads until end of input (Ctrl-D) and then closes the
    stream; it is abandoned, blocked in its read, when the program ends
    first (the process exits right after).
    """
    fd = terminal_fd()
    if fd is None:
        return None
    keyboard = InputStream()

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            if not data:
                keyboard.close()
                return
            if not keyboard.write(data):
                return

    threading.Thread(target=pump, name="playground-keyboard", daemon=True).start()
    return keyboard


def pump_while(
    fd: int,
    keyboard: InputStream,
    running: Callable[[], bool],
    poll: float = 0.05,
    echoed: Callable[[bytes], None] | None = None,
) -> None:
    """For ``playground repl``: forward terminal lines to ``keyboard`` while ``running()`` (on the calling thread).

    Only reads when a line is ready (``select``), so nothing typed after the
    input ended is taken from the next prompt. Ctrl-D closes ``keyboard``
    (end of input for this eval only; the REPL's own prompt still reads on).
    Returns when ``running()`` turns False; Ctrl-C raises ``KeyboardInterrupt``
    here as anywhere on the main thread. ``echoed`` hears each line passed
    on (the terminal has echoed it: the screen is at a new line).
    """
    while running():
        if keyboard.closed:
            time.sleep(poll)
            continue
        try:
            ready, _, _ = select.select([fd], [], [], poll)
        except InterruptedError:
            continue
        if not ready or not running():
            continue
        try:
            data = os.read(fd, CHUNK)
        except OSError:
            data = b""
        if data:
            keyboard.write(data)
            if echoed is not None:
                echoed(data)
        else:
            keyboard.close()
