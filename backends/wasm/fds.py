"""The guest's file-descriptor table: stdio, preopened directories, open files.

Descriptor numbers follow WASI convention: 0-2 are stdin, stdout, stderr;
3, 4 and 5 are the preopened ``/in``, ``/work`` and ``/out`` (a REPL
session adds ``/.session`` as 6, see ``channel``). A directory
descriptor carries a *floor*: the directory ``..`` may never climb above
(the preopen itself, or the opened directory), so a capability never
grants more than the tree it was opened on.

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
from playground.core.vfs import VFS, Dir, File, Node

#: Guest fds above this are refused with EMFILE (a guest cannot exhaust host memory with fds).
MAX_FDS: Final = 1024
PREOPENS: Final = ((3, "/in", "in"), (4, "/work", "work"), (5, "/out", "out"))


class StdStream(enum.Enum):
    STDIN = 0
    STDOUT = 1
    STDERR = 2
    #: A session's write-only control channel (``/.session/control``; see ``channel``).
    CONTROL = 3


@dataclass(slots=True)
class StdioDesc:
    stream: StdStream
    flags: int = 0


@dataclass(slots=True)
class FileDesc:
    file: File
    readable: bool
    writable: bool
    flags: int = 0
    pos: int = 0
    rights: int = abi.RIGHTS_FILE
    inheriting: int = 0


@dataclass(slots=True)
class DirDesc:
    dir: Dir
    floor: Dir
    preopen_name: str | None = None
    flags: int = 0
    rights: int = abi.RIGHTS_DIR
    inheriting: int = abi.RIGHTS_DIR | abi.RIGHTS_FILE


Desc = StdioDesc | FileDesc | DirDesc


class BadFd(Exception):
    """The descriptor is not open (EBADF) or is of the wrong kind (errno given)."""

    def __init__(self, errno: int = abi.EBADF) -> None:
        super().__init__(errno)
        self.errno = errno


class FdTable:
    """Descriptor number -> open description, with the standard preopens installed."""

    __slots__ = ("_fds", "_vfs")

    def __init__(self, vfs: VFS) -> None:
        self._vfs = vfs
        self._fds: dict[int, Desc] = {
            0: StdioDesc(StdStream.STDIN),
            1: StdioDesc(StdStream.STDOUT),
            2: StdioDesc(StdStream.STDERR),
        }
        for fd, name, key in PREOPENS:
            node = vfs.root.children[key]
            assert isinstance(node, Dir)
            vfs.retain(node)
            self._fds[fd] = DirDesc(node, node, preopen_name=name)

    def get(self, fd: int) -> Desc:
        desc = self._fds.get(fd)
        if desc is None:
            raise BadFd()
        return desc

    def file(self, fd: int) -> FileDesc:
        desc = self.get(fd)
        if isinstance(desc, FileDesc):
            return desc
        raise BadFd(abi.EISDIR if isinstance(desc, DirDesc) else abi.ESPIPE)

    def dir(self, fd: int) -> DirDesc:
        desc = self.get(fd)
        if isinstance(desc, DirDesc):
            return desc
        raise BadFd(abi.ENOTDIR)

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


def _node(desc: Desc) -> Node | None:
    """The VFS node a descriptor reaches (None for stdio and the control channel)."""
    if isinstance(desc, FileDesc):
        return desc.file
    if isinstance(desc, DirDesc):
        return desc.dir
    return None
