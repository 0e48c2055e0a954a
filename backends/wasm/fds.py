"""The guest's file-descriptor table: stdio, the preopened root, open files and directories.

Descriptor numbers follow WASI convention: 0-2 are stdin, stdout, stderr;
3 is the one preopen, ``/``: the VFS root, with ``/in``, ``/work``,
``/out`` and ``/tmp`` in it (a REPL session adds ``/.session`` as 4, see
``channel``). wasi-libc resolves every absolute path against the longest
matching preopen name, so ``/work/x`` and ``/in/x`` reach the same nodes
as before, and ``..`` inside a path is resolved by the VFS, not refused by
the libc.

A directory descriptor carries a *floor* (see ``fspath``): the root
preopen has none (``/..`` is ``/``, as on Linux); a directory opened
through ``path_open`` is its own floor, so that descriptor is a
capability for its subtree only (``..`` above it, or an absolute link
target, is EPERM), as WASI defines.

Rights (WASI preview1): every descriptor has base rights (what it may do)
and inheriting rights (the most a descriptor opened through it may get).
``get``/``file``/``dir`` check the rights a call needs and raise
ENOTCAPABLE when one is missing; ``fd_fdstat_set_rights`` may only drop
rights. The root gets ``RIGHTS_DIR`` and inherits ``RIGHTS_INHERITING``.

The table is where descriptors begin and end, so it is what tells the
VFS that a descriptor reaches a node (``VFS.retain`` in ``add``) and
that it no longer does (``VFS.release`` in ``close``, in ``renumber``
for the descriptor it replaces, and in ``clear``). That is how an
unlinked file written through an open descriptor stays charged to the
quota, and is freed when its last descriptor closes (issue #12).

Thread: owned by one run, used only on its guest thread.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from backends.wasm import abi
from playground.core.vfs import VFS, Device, Dir, File, Node

#: Guest fds above this are refused with EMFILE (a guest cannot exhaust host memory with fds).
MAX_FDS: Final = 1024
#: The descriptor and the preopen name of the VFS root.
ROOT_FD: Final = 3
ROOT_NAME: Final = "/"


class StdStream(enum.Enum):
    STDIN = 0
    STDOUT = 1
    STDERR = 2
    #: A session's write-only control channel (``/.session/control``; see ``channel``).
    CONTROL = 3
    #: The in-guest hook's write-only report channel (``/.attempts``; see ``attempt_watch``).
    REPORT = 4


@dataclass(slots=True)
class StdioDesc:
    stream: StdStream
    flags: int = 0
    rights: int = abi.RIGHTS_STDIO
    inheriting: int = 0


@dataclass(slots=True)
class FileDesc:
    """An open regular file. ``readable``/``writable`` are the access mode; ``rights`` bound them further."""

    file: File
    readable: bool
    writable: bool
    flags: int = 0
    pos: int = 0
    rights: int = abi.RIGHTS_FILE
    inheriting: int = 0


@dataclass(slots=True)
class DeviceDesc:
    """An open character device (``devices``): its reads are served, its writes kept nowhere."""

    device: Device
    readable: bool
    writable: bool
    flags: int = 0
    rights: int = abi.RIGHTS_FILE
    inheriting: int = 0


@dataclass(slots=True)
class DirDesc:
    """An open directory. ``floor`` None: the whole tree (the root preopen); else ``..`` stops there."""

    dir: Dir
    floor: Dir | None
    preopen_name: str | None = None
    flags: int = 0
    rights: int = abi.RIGHTS_DIR
    inheriting: int = abi.RIGHTS_INHERITING


Desc = StdioDesc | FileDesc | DeviceDesc | DirDesc


class BadFd(Exception):
    """The descriptor is not open (EBADF), of the wrong kind, or lacks a right (ENOTCAPABLE)."""

    def __init__(self, errno: int = abi.EBADF) -> None:
        super().__init__(errno)
        self.errno = errno


class FdTable:
    """Descriptor number -> open description, with stdio and the root preopen installed."""

    __slots__ = ("_fds", "_vfs")

    def __init__(self, vfs: VFS) -> None:
        self._vfs = vfs
        self._fds: dict[int, Desc] = {
            0: StdioDesc(StdStream.STDIN),
            1: StdioDesc(StdStream.STDOUT),
            2: StdioDesc(StdStream.STDERR),
        }
        vfs.retain(vfs.root)
        self._fds[ROOT_FD] = DirDesc(vfs.root, None, preopen_name=ROOT_NAME)

    def get(self, fd: int, rights: int = 0) -> Desc:
        """The open description ``fd``, which must hold ``rights``.

        Raises:
            BadFd: EBADF (not open), ENOTCAPABLE (a right is missing).
        """
        desc = self._fds.get(fd)
        if desc is None:
            raise BadFd()
        require(desc, rights)
        return desc

    def file(self, fd: int, rights: int = 0) -> FileDesc:
        """The open regular file ``fd`` with ``rights``; EISDIR/ESPIPE for another kind, then ENOTCAPABLE."""
        desc = self.get(fd)
        if not isinstance(desc, FileDesc):
            raise BadFd(abi.EISDIR if isinstance(desc, DirDesc) else abi.ESPIPE)
        require(desc, rights)
        return desc

    def dir(self, fd: int, rights: int = 0) -> DirDesc:
        """The open directory ``fd`` with ``rights``; ENOTDIR for another kind, then ENOTCAPABLE."""
        desc = self.get(fd)
        if not isinstance(desc, DirDesc):
            raise BadFd(abi.ENOTDIR)
        require(desc, rights)
        return desc

    def add(self, desc: Desc) -> int:
        """Install ``desc`` at the lowest free number; its node stays charged while it is open.

        Raises:
            BadFd: EMFILE when the table is full.
        """
        for fd in range(len(self._fds) + 1):
            if fd not in self._fds:
                break
        if fd >= MAX_FDS:
            raise BadFd(abi.EMFILE)
        node = _node(desc)
        if node is not None:
            self._vfs.retain(node)
        self._fds[fd] = desc
        return fd

    def close(self, fd: int) -> None:
        desc = self._fds.pop(fd, None)
        if desc is None:
            raise BadFd()
        self._drop(desc)

    def renumber(self, fd: int, to: int) -> None:
        """Move ``fd`` to ``to``, closing what ``to`` held."""
        desc = self.get(fd)
        if to not in self._fds:
            raise BadFd()
        if fd == to:
            return
        replaced = self._fds[to]
        self._fds[to] = desc
        del self._fds[fd]
        self._drop(replaced)

    def clear(self) -> None:
        """Close every descriptor (the run is over). Idempotent."""
        descs = list(self._fds.values())
        self._fds.clear()
        for desc in descs:
            self._drop(desc)

    def _drop(self, desc: Desc) -> None:
        node = _node(desc)
        if node is not None:
            self._vfs.release(node)


def require(desc: Desc, rights: int) -> None:
    """Raise ``BadFd(ENOTCAPABLE)`` unless ``desc`` holds every right in ``rights``."""
    if rights & ~desc.rights:
        raise BadFd(abi.ENOTCAPABLE)


def _node(desc: Desc) -> Node | None:
    """The VFS node a descriptor reaches and keeps charged (None for stdio, channels and devices, never charged)."""
    if isinstance(desc, FileDesc):
        return desc.file
    if isinstance(desc, DirDesc):
        return desc.dir
    return None
