"""What the Wasm tier's WASI layer sees a guest try beyond its sandbox (``core.attempts``).

Every path a guest names reaches our host functions, because the root
``/`` is ours: ``open('/home/u/.ssh/id_rsa')``, ``os.walk('/home')``,
``rm -rf ~`` all arrive here as paths, are refused by the VFS (they do not
exist in it), and are recorded with the exact path as ``Observer.HOST``
records. The guest cannot forge or suppress those.

What counts as an attempt, so that a runtime's own start-up raises no
false alarm:

* a path whose first component is not in the VFS root (``/home``,
  ``/etc``, ``/root``; not ``/work``, ``/in``, ``/out``, ``/tmp`` or a
  runtime's own mounts such as ``/usr/local/lib/python3.12``): it leaves
  the sandbox's tree. A runtime probing a missing file *inside* its own
  tree (CPython looking for ``pybuilddir.txt``) is not one;
  A path under the guest's ``HOME`` (a pack sets one outside the tree,
  e.g. ``/home/user``, so that ``~/.ssh/id_rsa`` leaves it) is recorded
  as ``~/...``;
* a write, create, rename or delete under a read-only directory
  (``/in``, a runtime's mount): refused, and recorded;
* any ``sock_*`` call: there is no socket on this tier.

Not seen here: what never becomes a WASI call (a runtime without
sockets fails ``socket.getaddrinfo`` inside the guest; CPython refuses
``subprocess`` before asking the host). The in-guest hooks report those
over the report channel (``REPORT_NAME``), as ``Observer.GUEST`` records
parsed by ``core.attempts.parse_guest_report``.

The caller-root layout (the WASI test suite's) gives the guest a writable
root of the caller's: nothing there is outside, so only read-only
refusals are recorded.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Final

from backends.wasm import devices
from playground.core.attempts import AttemptKind, AttemptLog, Observer, parse_guest_report
from playground.core.vfs import DEVICES, VFS, Device, Dir, Layout, Resolved

#: The report channel: ``path_open`` of this name in the root gives a write-only descriptor (``StdStream.REPORT``).
REPORT_NAME: Final = ".attempts"
#: Bytes of an unfinished report line kept; more is a garbled line.
_MAX_PENDING: Final = 4096

#: Benign probes any runtime or library may make (the timezone database): never attempts.
BENIGN_PATHS: Final = (
    "/etc/localtime", "/etc/timezone", "/etc/zoneinfo", "/usr/share/zoneinfo", "/usr/lib/zoneinfo",
    "/usr/share/lib/zoneinfo",
)  # fmt: skip

OUTSIDE: Final = "refused: not in the sandbox"
#: What ``/dev`` holds (``devices``): any other path under it is the host's, and recorded.
_DEVICE_PATHS: Final = frozenset(("/" + devices.DEV, *(f"/{devices.DEV}/{kind}" for kind in DEVICES)))
NO_NETWORK: Final = "refused: no network on this tier"


def guest_path(directory: Dir, root: Dir, path: str) -> str:
    """The absolute guest path of ``path`` taken from ``directory`` (for naming it, not for resolving it)."""
    names: list[str] = []
    node = directory
    while node is not root and node.parent is not node:
        parent = node.parent
        names.append(next((name for name, child in parent.children.items() if child is node), "?"))
        node = parent
    base = "/" + "/".join(reversed(names))
    return posixpath.normpath(posixpath.join(base, path))


def watch_path(
    attempts: AttemptLog, vfs: VFS, directory: Dir, path: str, *, kind: AttemptKind, quiet: Sequence[str] = (),
    home: str = "",
) -> None:
    """Record ``path`` (taken from ``directory``) if it leaves the sandbox's tree; see the module docstring.

    ``quiet``: the runtime's own probes (``WasmSpec.quiet_paths``), not recorded, like ``BENIGN_PATHS``.
    """
    root = vfs.root
    if vfs.layout is not Layout.STANDARD or directory is not root:
        return  # a directory descriptor below the root cannot name anything outside it (``..`` stops at it)
    top = path.split("/", 1)[0]
    if top in root.children and ".." not in path and top != devices.DEV:
        return
    full = posixpath.normpath("/" + path)
    first = full.split("/", 2)[1]
    if first == devices.DEV:  # /dev holds the four devices; /dev/mem, /dev/sda, /dev/tty are the host's
        if full in _DEVICE_PATHS:
            return
    elif not first or first in root.children or _under(full, BENIGN_PATHS) or _under(full, quiet):
        return
    if home and _under(full, (home,)):
        full = "~" + full[len(home) :]
    attempts.record(kind, full, OUTSIDE)


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == prefix or path.startswith(prefix + "/") for prefix in prefixes)


def watch_read_only(attempts: AttemptLog, vfs: VFS, directory: Dir, path: str, *, kind: AttemptKind,
                    found: Resolved) -> None:
    """Record a change refused because it is read-only (``/in``, a runtime's mount).

    Opening a device to write is no change: it takes the bytes and keeps none (``devices``).
    """
    root, parent, target = vfs.root, found.parent, found.node
    if not (parent.readonly or (target is not None and target.readonly)) or parent is root:
        return
    if isinstance(target, Device) and kind is AttemptKind.FILE_WRITE:
        return
    full = guest_path(directory, root, path)
    area = "/" + full.split("/", 2)[1]
    attempts.record(kind, full, f"refused: {area} is read-only")


class ReportSink:
    """The host's end of the in-guest report channel: whole lines to ``parse_guest_report``."""

    __slots__ = ("_pending", "attempts")

    def __init__(self, attempts: AttemptLog) -> None:
        #: Where what the guest tried is recorded: by the host functions too (``RunState.attempts``).
        self.attempts = attempts
        self._pending = bytearray()

    def write(self, data: bytes) -> int:
        self._pending += data
        while True:
            end = self._pending.find(b"\n")
            if end < 0:
                break
            line = bytes(self._pending[:end])
            del self._pending[: end + 1]
            parse_guest_report(line, self.attempts)
        if len(self._pending) > _MAX_PENDING:
            parse_guest_report(bytes(self._pending), self.attempts)  # over-long: recorded as tampering
            self._pending.clear()
        return len(data)

    def closed(self) -> None:
        """The guest closed (or replaced) its report channel: its hook can no longer tell us anything.

        No runtime's hook closes it (the C library flushes its streams at
        exit without closing them), so a close is always the program's.
        """
        self.attempts.record(
            AttemptKind.REPORTING_TAMPERED, "closed the in-guest report channel", "noted", observer=Observer.HOST
        )


def socket_call(attempts: AttemptLog, call: str, fd: int) -> None:
    """A ``sock_*`` call: the guest tried to use a socket (there is none)."""
    attempts.record(AttemptKind.NETWORK_CONNECT, f"{call} on descriptor {fd}", NO_NETWORK)
