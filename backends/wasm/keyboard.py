"""Blocking reads of the keyboard (``core.keyboard.InputStream``) from inside a host call.

A one-shot run's stdin is ``Spec.stdin`` and then, when the request has an
``input``, what the user types (``wasi_fs.fd_read`` on fd 0 comes here once
the spec's bytes are used up). A REPL session's stdin carries the driver's
code frames, so an eval's keyboard is a pseudo-file instead,
``/.session/stdin`` (``channel``), which the drivers make the user code's
stdin.

Guarantees of ``read_blocking`` (the guest thread waits here):

* CPU time: the wait is a condition-variable sleep, so the guest thread's
  CPU clock (``time.thread_time``, what ``RunControl`` charges) does not
  advance; wasm does not run, so the epoch callback does not either.
* Wall time: each sleep lasts at most ``SLICE`` and never past the run's
  wall deadline (+1 ms); after every sleep ``RunControl.check`` records a
  passed deadline and the read ends with ``GuestStop`` (the run is then
  reported as ``TimeLimitExceeded`` like any other).
* Cancellation (Stop, a cancelled task, a killed session): seen within one
  ``SLICE`` (``RunControl.cancel`` records the reason; ``check`` sees it).
* Interrupt (Ctrl-C in a REPL eval): when ``interrupted`` says so, the
  read fails with EINTR, which CPython turns into its pending
  ``KeyboardInterrupt`` and C stdio into a failed read.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Final

from backends.wasm import abi
from backends.wasm.hostcall import GuestStop, WasiError
from backends.wasm.state import RunControl
from playground.core.keyboard import InputStream
from playground.core.vfs import File

#: WASI's EINTR (``abi`` names only the errnos the host returns elsewhere).
EINTR: Final = abi.wasi_errno(errno.EINTR)
#: Longest single sleep of a blocked read: the latency of a cancel or an interrupt while waiting.
SLICE: Final = 0.05


def read_blocking(
    stream: InputStream, control: RunControl, limit: int, *, interrupted: Callable[[], bool] | None = None
) -> bytes:
    """Up to ``limit`` bytes as soon as the user typed some; ``b""`` at end of input (see the module docstring).

    Raises:
        GuestStop: the run was stopped (wall time, cancellation) while waiting.
        WasiError: EINTR, the eval was interrupted while waiting.
    """
    if limit <= 0:
        return b""
    while True:
        if control.check() is not None:
            raise GuestStop()
        if interrupted is not None and interrupted():
            raise WasiError(EINTR)
        wait = SLICE
        remaining = control.remaining()
        if remaining is not None:
            wait = min(wait, remaining + 0.001)
        data = stream.read(limit, wait)
        if data is not None:
            return data


def stdin_ready(stream: InputStream | None, left: int) -> int | None:
    """``poll_oneoff``'s view of fd 0: bytes readable now (0 at end of file), or None when a read would block.

    ``left`` is what remains of ``Spec.stdin``; the keyboard comes after it.
    """
    if left > 0 or stream is None:
        return left
    return stream.ready()


class KeyboardFile(File):
    """A REPL session's ``/.session/stdin`` (see ``channel``): every read asks ``source`` for up to ``size`` bytes.

    Outside any VFS (no quota counts it); its size stays 0 and the offset
    is ignored: it is a stream, opened with a pipe's rights (no seek).
    """

    __slots__ = ("_source",)

    def __init__(self, source: Callable[[int], bytes]) -> None:
        super().__init__(0, True, b"")
        self._source = source

    def read(self, offset: int, size: int) -> bytes:
        return self._source(size)
