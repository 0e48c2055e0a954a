"""The nodes of the in-memory filesystem (``vfs``): files, directories, symbolic links and their lifetime counts.

Why they look like this:

* A node's lifetime is what the quota charges. ``links`` counts the names
  that reach it (0 or 1: there are no hard links) and ``opens`` the
  descriptors that reach it. The owning ``VFS`` charges a node when it is
  created and frees it exactly once, when both counts are zero; an
  unlinked file that a descriptor still reaches keeps its bytes charged.
* A ``File`` has no public way to change its bytes. ``data`` is an
  immutable snapshot and ``read`` returns a copy of a range; every change
  of content or size goes through the owning ``VFS`` (``write``,
  ``truncate``), whose one ``_resize`` charges the size delta first. So no
  code path can grow a file behind the accountant's back.
* A ``Symlink`` holds a target string and nothing else; only the VFS
  resolves it (``fspath``), against the VFS's own root, so no link can
  ever name a host path. It is immutable once made, so its charge (one
  node, its target's length in bytes) never changes.
* A ``Device`` (``/dev/null``, ``/dev/zero``, ``/dev/urandom``) holds its
  kind and no bytes: a backend serves its reads and discards its writes,
  so nothing written to one is kept or charged. Only a host makes one
  (never charged, read-only as a node: it cannot be renamed, truncated
  or touched).
* ``owner`` is the ``VFS`` that charged the node, or None for a node no
  quota covers (a host-made node such as a session's control directory, or
  a node already freed). Such a node can never be written by a guest.

Thread model: as ``VFS`` (one thread at a time).
"""

from __future__ import annotations

import time
from typing import Final


class VFSError(OSError):
    """A filesystem operation failed; ``errno`` says why (``errno.ENOENT`` ...)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)


class Node:
    """A file, directory or symbolic link. ``readonly`` nodes refuse every change by the guest."""

    __slots__ = ("atime_ns", "ctime_ns", "ino", "links", "mtime_ns", "opens", "owner", "readonly")

    def __init__(self, ino: int, readonly: bool) -> None:
        now = time.time_ns()
        self.ino = ino
        self.readonly = readonly
        self.mtime_ns = now
        self.atime_ns = now
        self.ctime_ns = now
        #: Names that reach this node (0 or 1); only the owning VFS changes it.
        self.links = 0
        #: Open descriptors that reach this node; only the owning VFS changes it.
        self.opens = 0
        #: The VFS whose quota this node is charged to (None: uncharged, or already freed).
        #: Only ever compared by identity, so this module needs no more of it than ``object``.
        self.owner: object | None = None

    def touch(self) -> None:
        now = time.time_ns()
        self.mtime_ns = now
        self.ctime_ns = now


class File(Node):
    """A regular file. Its bytes are read here and changed only by its ``VFS``."""

    __slots__ = ("_data",)

    def __init__(self, ino: int, readonly: bool, data: bytes = b"") -> None:
        super().__init__(ino, readonly)
        self._data = bytearray(data)

    @property
    def size(self) -> int:
        return len(self._data)

    @property
    def data(self) -> bytes:
        """A copy of the whole content (use ``read`` for a range)."""
        return bytes(self._data)

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (fewer at the end; none past it)."""
        if offset < 0 or size <= 0 or offset >= len(self._data):
            return b""
        return bytes(self._data[offset : offset + size])


class Dir(Node):
    __slots__ = ("children", "parent")

    def __init__(self, ino: int, readonly: bool, parent: Dir | None) -> None:
        super().__init__(ino, readonly)
        self.children: dict[str, Node] = {}
        self.parent: Dir = parent if parent is not None else self


class Symlink(Node):
    """A symbolic link. ``target`` is guest text, resolved only inside the VFS (see ``fspath``)."""

    __slots__ = ("target",)

    def __init__(self, ino: int, readonly: bool, target: str) -> None:
        super().__init__(ino, readonly)
        self.target = target

    @property
    def size(self) -> int:
        """Bytes of the target (what ``stat`` reports and the quota charges)."""
        return len(self.target.encode("utf-8", "surrogateescape"))


class Device(Node):
    """A character device (``kind``: ``DEVICES``); a backend serves its reads and discards what is written to it."""

    __slots__ = ("kind",)

    def __init__(self, ino: int, kind: str) -> None:
        if kind not in DEVICES:
            raise ValueError(f"unknown device {kind!r}")
        super().__init__(ino, True)
        self.kind = kind


#: The devices a guest may have (``/dev/<kind>``): null reads as empty, zero as zeros, random and urandom as
#: random bytes (the host's ``os.urandom``, as WASI's ``random_get``).
DEVICES: Final = ("null", "zero", "random", "urandom")
