"""``/dev``: the character devices programs open by path (``/dev/null``, ``/dev/zero``, ``/dev/urandom``).

Why: the standard layout had none, so ``open(os.devnull, "w")`` (output
silenced with ``contextlib.redirect_stdout``) failed with FileNotFoundError,
and SQLite, which seeds its random numbers from ``/dev/urandom``, fell back
to the clock, while the attempt report said every ``sqlite3`` program
"tried: read /dev/urandom", refused. Docker's containers have them.

What they are: host-made nodes (``Device``) in a host-made, read-only
``/dev``, charged to no quota, placed (``place``) in every run, session and
served program of the standard layout next to the runtime's mounts (and,
as those, not in a caller's root, which is writable). A descriptor opened
on one is a ``fds.DeviceDesc``: reading ``null`` gives end of file,
``zero`` zeros, ``random`` and ``urandom`` the host's random bytes
(``os.urandom``, as WASI's ``random_get``), each read at most what the
guest asked for and ``MAX_READ``; writing to any of them succeeds and
keeps nothing, so no byte reaches the quota, the output or the host.
``lseek`` gives 0 and ``stat`` says character device, as on Linux;
``isatty`` says no (the descriptor has the seek right, which wasi-libc's
``isatty`` looks for). Any other path under ``/dev`` is the host's: the
attempt report records it (``attempt_watch``).
Nothing else lives in this ``/dev`` (no ``/dev/tty``, no ``/dev/fd``).
"""

from __future__ import annotations

import itertools
import os
from typing import Final

from playground.core.package_tree import host_dir
from playground.core.vfs import DEVICES, VFS, Device, Layout

#: Host-made nodes get numbers far above any run's own (a VFS counts from 1); mounts have 1 << 48 up.
_inos = itertools.count(5 << 46)
#: Where the devices are.
DEV: Final = "dev"
#: The most one read returns (a device never runs dry: a short read is allowed, and bounds what one call
#: makes on the host whatever the guest's buffer).
MAX_READ: Final = 1 << 20


def place(vfs: VFS) -> None:
    """Put ``/dev`` and its devices into ``vfs`` (the standard layout only; a no-op where they are)."""
    if vfs.layout is not Layout.STANDARD:
        return
    dev = host_dir(vfs.root, DEV, _inos)
    if dev is None:  # the standard layout's root is read-only: nothing else can be there
        raise RuntimeError("/dev is taken in a standard layout")
    for kind in DEVICES:
        if kind not in dev.children:
            node = Device(next(_inos), kind)
            node.links = 1
            dev.children[kind] = node


def read(device: Device, size: int) -> bytes:
    """What a read of up to ``size`` bytes from ``device`` gives (at most ``MAX_READ``)."""
    size = min(size, MAX_READ)
    if device.kind == "null" or size <= 0:
        return b""
    if device.kind == "zero":
        return bytes(size)
    return os.urandom(size)
