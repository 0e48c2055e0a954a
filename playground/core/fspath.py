"""Path resolution in the in-memory filesystem: components, ``..``, symbolic links, and where a descriptor ends.

Why it works this way:

* Resolution never leaves the VFS. A symbolic link's target is guest text
  that this module reads as components of the *VFS's* tree: an absolute
  target starts at the VFS root, a relative one at the link's directory.
  No host path is ever formed or consulted, so no link can reach the host,
  whatever it says.
* ``..`` is physical (the parent of the directory actually reached, as on
  Linux, also after following a link), and the tree is a tree (no hard
  links to directories), so the only ways up are ``..`` and absolute link
  targets. Both are checked here against ``floor``:

  - ``floor=None``: the whole tree is reachable. ``..`` at the root stays
    at the root, as ``/..`` is ``/`` on Linux. The guest's root preopen
    and the host's own lookups resolve this way.
  - ``floor=<Dir>``: a WASI directory descriptor opened below a preopen
    is a capability for its subtree only: ``..`` above it, or a link
    whose target is absolute, is ``EPERM`` (what wasmtime and the WASI
    test suite expect for an escape).

* At most ``MAX_HOPS`` links are followed in one resolution (Linux's
  ``MAXSYMLINKS``); one more is ``ELOOP``. The work per call is bounded:
  each hop adds at most ``MAX_PATH`` characters of components.
* The last component is followed only when asked (``follow``): WASI's
  ``LOOKUPFLAGS_SYMLINK_FOLLOW``; creating, removing, renaming and
  ``readlink`` act on the link itself. Every other component is always
  followed, as POSIX requires.

Thread model: as ``VFS``.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Final

from playground.core.fsnames import MAX_PATH
from playground.core.fsnode import Dir, Node, Symlink, VFSError

#: Links followed in one resolution before ``ELOOP`` (Linux's MAXSYMLINKS).
MAX_HOPS: Final = 40


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where a path led.

    ``parent`` holds the last component ``name``; ``node`` is what the path
    names (None: that name does not exist in ``parent``, so it may be
    created). ``name`` is None when the path names ``parent`` itself
    (``"."``, ``"a/.."``, a link to a directory that was followed).
    ``slash`` is True when the path, or the last link followed, ended in
    ``/`` or ``/.``: the caller must then find a directory.
    """

    parent: Dir
    name: str | None
    node: Node | None
    slash: bool


def components(path: str) -> list[str]:
    """The components of ``path`` without empty ones and ``.``."""
    return [part for part in path.split("/") if part not in ("", ".")]


def ends_in_directory(path: str) -> bool:
    """True when ``path`` can only name a directory (a trailing ``/`` or ``/.``, or ``.``/``..`` alone)."""
    return path.endswith(("/", "/.", "/..")) or path in (".", "..")


def check_path(path: str) -> None:
    """Refuse a path no resolution may see.

    Raises:
        VFSError: EINVAL (NUL), ENAMETOOLONG (over ``MAX_PATH``).
    """
    if "\x00" in path:
        raise VFSError(errno.EINVAL, "path contains NUL")
    if len(path) > MAX_PATH:
        raise VFSError(errno.ENAMETOOLONG, "path too long")


def resolve(root: Dir, start: Dir, path: str, *, floor: Dir | None, follow: bool) -> Resolved:
    """Resolve ``path`` from ``start`` (an absolute path from ``root``) within ``floor``; see the module docstring.

    Raises:
        VFSError: ENOENT or ENOTDIR for a missing or non-directory
            component before the last, EPERM for an escape past ``floor``,
            ELOOP after ``MAX_HOPS`` links, EINVAL, ENAMETOOLONG.
    """
    check_path(path)
    pending = components(path)[::-1]  # a stack: the next component is at the end
    current = _top(root, floor, path) if path.startswith("/") else start
    slash = ends_in_directory(path)
    hops = 0
    while pending:
        part = pending.pop()
        if part == "..":
            current = _up(root, current, floor, path)
            continue
        last = not pending
        child = current.children.get(part)
        if isinstance(child, Symlink) and (not last or follow or slash):
            hops += 1
            if hops > MAX_HOPS:
                raise VFSError(errno.ELOOP, f"too many levels of symbolic links: {path!r}")
            target = child.target
            if last and ends_in_directory(target):
                slash = True
            if target.startswith("/"):
                current = _top(root, floor, path)
            pending.extend(reversed(components(target)))
            continue
        if last:
            return Resolved(current, part, child, slash)
        if child is None:
            raise VFSError(errno.ENOENT, f"no such file or directory: {path!r}")
        if not isinstance(child, Dir):
            raise VFSError(errno.ENOTDIR, f"not a directory: {part!r} in {path!r}")
        current = child
    return Resolved(current, None, current, slash)


def _top(root: Dir, floor: Dir | None, path: str) -> Dir:
    """Where an absolute path or link target starts: the root, unless a descriptor's floor is in the way."""
    if floor is not None:
        raise VFSError(errno.EPERM, f"an absolute path leaves the directory it was resolved in: {path!r}")
    return root


def _up(root: Dir, current: Dir, floor: Dir | None, path: str) -> Dir:
    if floor is not None and current is floor:
        raise VFSError(errno.EPERM, f"path escapes the directory it was resolved in: {path!r}")
    if current is root:
        return root  # /.. is /
    return current.parent
