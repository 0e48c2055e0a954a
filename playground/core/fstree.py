"""Host-side work on whole subtrees of the in-memory filesystem: seeding caller files, sealing, walking.

These run on the host, over trees a guest may have shaped, so none of
them recurses: each keeps an explicit stack, however deep the tree (see
``fsnames.MAX_DEPTH`` for the second line of defence). Links are never
followed here: a walk sees a ``Symlink`` as a leaf that is not a file.

Thread model: as ``VFS``.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Mapping
from typing import Protocol

from playground.core.errors import InvalidSpec
from playground.core.fsnames import clean_key
from playground.core.fsnode import Dir, File, Node, VFSError
from playground.core.fspath import components


class TreeBuilder(Protocol):
    """What seeding needs of the filesystem it builds in (``vfs.VFS``): nodes made and filled under its quota."""

    @property
    def root(self) -> Dir: ...

    def mkdir(self, parent: Dir, name: str) -> Dir: ...

    def create_file(self, parent: Dir, name: str) -> File: ...

    def write(self, file: File, offset: int, data: bytes) -> int: ...


def seed(vfs: TreeBuilder, directory: Dir, files: Mapping[str, bytes], where: str) -> None:
    """Place caller ``files`` under ``directory`` (keys checked by ``clean_key``), charging the quota.

    Raises:
        InvalidSpec: an unsafe or too deep key; a key whose parent is a
            file, a key that names a directory, or a file placed twice
            (``where`` names the place in the message).
        VFSError: EDQUOT when the files do not fit.
    """
    for key in sorted(files):
        parts = clean_key(key)
        current = directory
        for part in parts[:-1]:
            child = current.children.get(part)
            if child is None:
                child = vfs.mkdir(current, part)
            if not isinstance(child, Dir):
                raise InvalidSpec(f"file key {key!r} in {where} needs {part!r} to be a directory")
            current = child
        existing = current.children.get(parts[-1])
        if isinstance(existing, Dir):
            raise InvalidSpec(f"file key {key!r} in {where} is also used as a directory")
        if existing is not None:
            raise InvalidSpec(f"file key {key!r} in {where} is given twice")
        file = vfs.create_file(current, parts[-1])
        vfs.write(file, 0, bytes(files[key]))


def make_dirs(vfs: TreeBuilder, dir_path: str) -> Dir:
    """The directory at absolute ``dir_path``, made (as the guest would) where missing; links are not followed."""
    current = vfs.root
    for part in components(dir_path):
        child = current.children.get(part)
        if child is None:
            child = vfs.mkdir(current, part)
        if not isinstance(child, Dir):
            raise VFSError(errno.ENOTDIR, f"not a directory: {part!r}")
        current = child
    return current


def seal(directory: Dir) -> None:
    """Make ``directory`` and everything under it read-only."""
    stack = [directory]
    while stack:
        current = stack.pop()
        current.readonly = True
        for child in current.children.values():
            child.readonly = True
            if isinstance(child, Dir):
                stack.append(child)


def iter_files(directory: Dir, prefix: str = "") -> Iterator[tuple[str, File]]:
    """Every regular file under ``directory`` with its relative path, in sorted depth-first order."""
    stack: list[tuple[str, Iterator[tuple[str, Node]]]] = [(prefix, iter(sorted(directory.children.items())))]
    while stack:
        base, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name, child = entry
        if isinstance(child, Dir):
            stack.append((f"{base}{name}/", iter(sorted(child.children.items()))))
        elif isinstance(child, File):
            yield f"{base}{name}", child


def height(directory: Dir) -> int:
    """How many levels lie below ``directory`` (0 when empty)."""
    result = 0
    stack = [(directory, 0)]
    while stack:
        current, level = stack.pop()
        for child in current.children.values():
            result = max(result, level + 1)
            if isinstance(child, Dir):
                stack.append((child, level + 1))
    return result
