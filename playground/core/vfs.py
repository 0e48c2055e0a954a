"""The in-memory filesystem every guest sees: ``/in`` (read-only), ``/work``, ``/out``.

Why it is built this way:

* Nothing here touches the host filesystem; a backend presents this tree
  to the guest (the Wasm tier through its WASI layer, the Docker tier as tar
  streams), so there is no host path to escape to.
* There are no symlinks and no hard links at all. A link that points outside
  cannot exist because no link can exist; lexical resolution of ``..`` is
  therefore exact, and it is clamped at the root.
* Quotas are checked before a change is made. A write, truncate or create
  that would pass the byte quota or the file-count limit raises
  ``VFSError(EDQUOT)`` and leaves the tree exactly as it was; growth is
  charged before any host memory is allocated for it.
* The quota charges node *lifetimes*, not names (issue #12: unlinking an
  open file used to refund its bytes while the descriptor could still grow
  or shrink it, driving ``bytes_used`` negative). A node is charged once
  when created; ``_resize`` is the one method that changes a file's size
  and it charges the delta; ``_free_if_unreachable`` is the one place a
  node is given back, when no name (``links``) and no descriptor
  (``opens``, kept by the descriptor table through ``retain``/``release``)
  reaches it any more.
* ``/in`` and everything under it is read-only for the guest; the three
  base directories cannot be removed or renamed.
* No walk over the tree recurses (a guest shapes it), and no node may sit
  deeper than ``MAX_DEPTH`` (see ``fsnames``).

Thread model: a ``VFS`` belongs to one run and is used by one thread at a
time (the guest's worker, then the host collecting ``/out``).
"""

from __future__ import annotations

import errno
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from playground.core.errors import InvalidSpec
from playground.core.fsnames import MAX_DEPTH, MAX_NAME, MAX_PATH, check_name, clean_key
from playground.core.fsnode import Dir, File, Node, VFSError
from playground.core.limits import Limits

__all__ = [
    "BASE_DIRS", "MAX_DEPTH", "MAX_NAME", "MAX_PATH", "VFS", "Dir", "File", "Node", "VFSError", "check_name",
    "clean_key",
]  # fmt: skip

BASE_DIRS: Final = ("in", "work", "out")
#: Growth is zero-filled in steps of this many bytes, so a resize never needs twice its size in host memory.
_ZEROS: Final = memoryview(bytes(1 << 20))

Chunk = bytes | bytearray | memoryview


class VFS:
    """A quota-limited in-memory tree with ``/in``, ``/work`` and ``/out``.

    ``fs_quota`` (bytes of file content) and ``max_files`` (files plus
    directories, the three base directories included) may be ``None`` for
    no limit. Both count every live node: reachable by a name or by an
    open descriptor. ``quota_hit`` records that a guest ran into either, so
    the run can be reported as ``FSQuotaExceeded`` even if the guest
    swallowed the error.
    """

    def __init__(self, *, fs_quota: int | None, max_files: int | None) -> None:
        self.fs_quota = fs_quota
        self.max_files = max_files
        self.bytes_used = 0
        self.nodes_used = 0
        self.quota_hit = False
        self._ino = itertools.count(1)
        self.root = Dir(next(self._ino), True, None)
        self.root.owner = self
        self.root.links = 1  # the root is never counted, never freed
        for name in BASE_DIRS:
            self._count_new_node()
            self._attach(self.root, name, Dir(next(self._ino), name == "in", self.root))

    @classmethod
    def for_limits(cls, limits: Limits) -> VFS:
        """An empty tree bounded by validated ``limits`` (``fs_quota``, ``max_files``)."""
        quota = limits.get("fs_quota")
        files = limits.get("max_files")
        return cls(fs_quota=None if quota is None else int(quota), max_files=None if files is None else int(files))

    # -- accounting: the only code that changes bytes_used / nodes_used --------

    def _count_new_node(self) -> None:
        if self.max_files is not None and self.nodes_used + 1 > self.max_files:
            self.quota_hit = True
            raise VFSError(errno.EDQUOT, f"file-count limit of {self.max_files} reached")
        self.nodes_used += 1

    def _attach(self, parent: Dir, name: str, node: Node) -> None:
        """Give a freshly counted ``node`` its first name."""
        node.owner = self
        node.links = 1
        parent.children[name] = node
        parent.touch()

    def _resize(self, file: File, size: int) -> None:
        """Set ``file``'s size, zero-filling growth: the one place a file's size changes.

        The delta is charged before any memory is allocated and refunded
        after it is released; on any failure the size and the charge are
        both unchanged.

        Raises:
            VFSError: EDQUOT when growth would pass ``fs_quota``.
        """
        data = file._data  # the accountant is File._data's only writer
        old = len(data)
        delta = size - old
        if delta > 0:
            if self.fs_quota is not None and self.bytes_used + delta > self.fs_quota:
                self.quota_hit = True
                raise VFSError(
                    errno.EDQUOT,
                    f"filesystem quota of {self.fs_quota} bytes exceeded ({self.bytes_used} used, {delta} more asked)",
                )
            try:
                while len(data) < size:
                    data += _ZEROS[: min(len(_ZEROS), size - len(data))]
            except BaseException:
                del data[old:]
                raise
        elif delta < 0:
            del data[size:]
        self.bytes_used += delta

    def retain(self, node: Node) -> None:
        """A descriptor now reaches ``node`` (called by the descriptor table when it opens one)."""
        if self._charged_here(node):
            node.opens += 1

    def release(self, node: Node) -> None:
        """A descriptor that reached ``node`` is gone; free the node if nothing else reaches it."""
        if self._charged_here(node):
            if node.opens <= 0:
                raise RuntimeError("release without a matching retain")
            node.opens -= 1
            self._free_if_unreachable(node)

    def _charged_here(self, node: Node) -> bool:
        """Whether ``node`` is charged to this VFS (False: a host-made node no quota covers)."""
        if node.owner is self:
            return True
        if node.owner is not None:
            raise ValueError("node belongs to another VFS")
        return False

    def _drop_link(self, node: Node) -> None:
        """A name that reached ``node`` is gone (unlink, rmdir, replaced by a rename)."""
        node.links -= 1
        self._free_if_unreachable(node)

    def _free_if_unreachable(self, node: Node) -> None:
        """Give back ``node``'s bytes and count once neither a name nor a descriptor reaches it."""
        if node.links > 0 or node.opens > 0 or node.owner is not self:
            return
        if isinstance(node, File):
            self._resize(node, 0)
        self.nodes_used -= 1
        node.owner = None

    # -- lookup -------------------------------------------------------------

    def is_base(self, node: Node) -> bool:
        return node is self.root or any(node is c for c in self.root.children.values())

    def walk(self, start: Dir, path: str, *, floor: Dir | None = None) -> Node:
        """Resolve ``path`` relative to ``start`` (absolute paths start at the root).

        ``..`` is resolved lexically and may not climb above ``floor`` (the
        root when not given); trying is ``EPERM``: the guest asked to leave
        its sandbox.

        Raises:
            VFSError: ENOENT, ENOTDIR, EPERM (escape), EINVAL (NUL), ENAMETOOLONG.
        """
        parent, name = self.walk_parent(start, path, floor=floor)
        if name is None:
            return parent
        node = parent.children.get(name)
        if node is None:
            raise VFSError(errno.ENOENT, f"no such file or directory: {path!r}")
        return node

    def walk_parent(self, start: Dir, path: str, *, floor: Dir | None = None) -> tuple[Dir, str | None]:
        """Resolve all but the last segment; return (directory, last name or None).

        The last name is not checked for existence. ``None`` means the path
        named the directory itself (``""``, ``"."``, ``"a/.."``).
        """
        if "\x00" in path:
            raise VFSError(errno.EINVAL, "path contains NUL")
        if len(path) > MAX_PATH:
            raise VFSError(errno.ENAMETOOLONG, "path too long")
        floor = floor if floor is not None else self.root
        current: Dir = self.root if path.startswith("/") else start
        parts = [p for p in path.split("/") if p not in ("", ".")]
        for i, part in enumerate(parts):
            if part == "..":
                if current is floor or current is self.root:
                    raise VFSError(errno.EPERM, f"path escapes the sandbox: {path!r}")
                current = current.parent
                continue
            if i == len(parts) - 1:
                return current, part
            child = current.children.get(part)
            if child is None:
                raise VFSError(errno.ENOENT, f"no such file or directory: {path!r}")
            if not isinstance(child, Dir):
                raise VFSError(errno.ENOTDIR, f"not a directory: {part!r} in {path!r}")
            current = child
        return current, None

    def depth(self, directory: Dir) -> int:
        """Components in ``directory``'s absolute path (the root is 0, ``/out`` 1)."""
        depth = 0
        node = directory
        while node is not self.root and node.parent is not node and depth <= MAX_DEPTH:
            depth += 1
            node = node.parent
        return depth

    # -- changes (every guest-visible mutation goes through these) ----------

    def _writable_dir(self, parent: Dir, *, adding: int = 0) -> None:
        """Refuse changes in ``parent``: read-only, removed, or ``adding`` levels too deep."""
        if parent.readonly:
            raise VFSError(errno.EROFS, "read-only directory")
        if parent.links == 0 or parent.owner is not self:
            raise VFSError(errno.ENOENT, "the directory was removed")
        if adding and self.depth(parent) + adding > MAX_DEPTH:
            raise VFSError(errno.ENAMETOOLONG, f"the tree may be at most {MAX_DEPTH} directories deep")

    def create_file(self, parent: Dir, name: str, *, exclusive: bool = False) -> File:
        """Return the file ``name`` in ``parent``, creating it empty if missing."""
        existing = parent.children.get(name)
        if existing is not None:
            if exclusive:
                raise VFSError(errno.EEXIST, f"file exists: {name!r}")
            if isinstance(existing, Dir):
                raise VFSError(errno.EISDIR, f"is a directory: {name!r}")
            assert isinstance(existing, File)
            return existing
        self._writable_dir(parent, adding=1)
        check_name(name)
        self._count_new_node()
        node = File(next(self._ino), False)
        self._attach(parent, name, node)
        return node

    def mkdir(self, parent: Dir, name: str) -> Dir:
        if name in parent.children:
            raise VFSError(errno.EEXIST, f"file exists: {name!r}")
        self._writable_dir(parent, adding=1)
        check_name(name)
        self._count_new_node()
        node = Dir(next(self._ino), False, parent)
        self._attach(parent, name, node)
        return node

    def _writable_file(self, file: File) -> None:
        if file.readonly or file.owner is not self:
            raise VFSError(errno.EROFS, "read-only file")

    def write(self, file: File, offset: int, data: Chunk) -> int:
        """Write ``data`` at ``offset`` (holes are zero-filled); return bytes written."""
        return self.writev(file, offset, (data,))

    def writev(self, file: File, offset: int, chunks: Sequence[Chunk]) -> int:
        """Write ``chunks`` back to back from ``offset``: all of them, or (EDQUOT) none."""
        self._writable_file(file)
        if offset < 0:
            raise VFSError(errno.EINVAL, "negative offset")
        total = sum(len(chunk) for chunk in chunks)
        end = offset + total
        if total and end > file.size:
            self._resize(file, end)
        data = file._data  # sizes stay as charged: equal-length slices only
        for chunk in chunks:
            data[offset : offset + len(chunk)] = chunk
            offset += len(chunk)
        file.touch()
        return total

    def truncate(self, file: File, size: int) -> None:
        self._writable_file(file)
        if size < 0:
            raise VFSError(errno.EINVAL, "negative size")
        self._resize(file, size)
        file.touch()

    def unlink(self, parent: Dir, name: str) -> None:
        """Remove the name; the file's bytes stay charged while a descriptor still reaches it."""
        node = parent.children.get(name)
        if node is None:
            raise VFSError(errno.ENOENT, f"no such file: {name!r}")
        if isinstance(node, Dir):
            raise VFSError(errno.EISDIR, f"is a directory: {name!r}")
        self._writable_dir(parent)
        del parent.children[name]
        parent.touch()
        self._drop_link(node)

    def rmdir(self, parent: Dir, name: str) -> None:
        node = parent.children.get(name)
        if node is None:
            raise VFSError(errno.ENOENT, f"no such directory: {name!r}")
        if not isinstance(node, Dir):
            raise VFSError(errno.ENOTDIR, f"not a directory: {name!r}")
        if self.is_base(node):
            raise VFSError(errno.EBUSY, f"/{name} cannot be removed")
        if node.children:
            raise VFSError(errno.ENOTEMPTY, f"directory not empty: {name!r}")
        self._writable_dir(parent)
        del parent.children[name]
        parent.touch()
        self._drop_link(node)

    def rename(self, src_parent: Dir, src_name: str, dst_parent: Dir, dst_name: str) -> None:
        """POSIX rename within the tree; base directories and /in are immovable.

        A replaced target loses its name like an unlink: if a descriptor
        still reaches it, its bytes stay charged until that closes.
        """
        node = src_parent.children.get(src_name)
        if node is None:
            raise VFSError(errno.ENOENT, f"no such file or directory: {src_name!r}")
        if self.is_base(node):
            raise VFSError(errno.EBUSY, f"/{src_name} cannot be renamed")
        self._writable_dir(src_parent)
        self._writable_dir(dst_parent)
        check_name(dst_name)
        if isinstance(node, Dir):
            ancestor: Dir = dst_parent
            while True:
                if ancestor is node:
                    raise VFSError(errno.EINVAL, "cannot move a directory into itself")
                if ancestor is self.root:
                    break
                ancestor = ancestor.parent
        target = dst_parent.children.get(dst_name)
        if target is node:
            return
        if dst_parent is not src_parent:
            self._writable_dir(dst_parent, adding=1 + (_height(node) if isinstance(node, Dir) else 0))
        if target is not None:
            if self.is_base(target):
                raise VFSError(errno.EBUSY, f"/{dst_name} cannot be replaced")
            if isinstance(node, Dir) and not isinstance(target, Dir):
                raise VFSError(errno.ENOTDIR, f"not a directory: {dst_name!r}")
            if isinstance(target, Dir):
                if not isinstance(node, Dir):
                    raise VFSError(errno.EISDIR, f"is a directory: {dst_name!r}")
                if target.children:
                    raise VFSError(errno.ENOTEMPTY, f"directory not empty: {dst_name!r}")
        del src_parent.children[src_name]
        dst_parent.children[dst_name] = node
        if isinstance(node, Dir):
            node.parent = dst_parent
        src_parent.touch()
        dst_parent.touch()
        if target is not None:
            self._drop_link(target)

    # -- host-side conveniences (absolute guest paths) -----------------------

    def lookup(self, path: str) -> Node:
        return self.walk(self.root, path)

    def write_file(self, path: str, data: bytes, *, make_parents: bool = True) -> File:
        """Create or replace a file by absolute guest path; atomic under the quota."""
        if make_parents and "/" in path.strip("/"):
            dir_path, name = path.rsplit("/", 1)
            parent = self._make_dirs(dir_path)
        else:
            parent, found = self.walk_parent(self.root, path)
            if found is None:
                raise VFSError(errno.EISDIR, f"is a directory: {path!r}")
            name = found
        file = self.create_file(parent, name)
        self._writable_file(file)
        self._resize(file, len(data))
        file._data[:] = data  # same length as just charged
        file.touch()
        return file

    def _make_dirs(self, dir_path: str) -> Dir:
        current = self.root
        for part in [p for p in dir_path.split("/") if p not in ("", ".")]:
            child = current.children.get(part)
            if child is None:
                child = self.mkdir(current, part)
            if not isinstance(child, Dir):
                raise VFSError(errno.ENOTDIR, f"not a directory: {part!r}")
            current = child
        return current

    def read_file(self, path: str) -> bytes:
        node = self.lookup(path)
        if not isinstance(node, File):
            raise VFSError(errno.EISDIR, f"is a directory: {path!r}")
        return node.data

    def listdir(self, path: str) -> list[str]:
        node = self.lookup(path)
        if not isinstance(node, Dir):
            raise VFSError(errno.ENOTDIR, f"not a directory: {path!r}")
        return sorted(node.children)

    def seed_inputs(self, files: Mapping[str, bytes]) -> None:
        """Place caller files under ``/in`` (keys are ``clean_key``-checked) and seal them.

        Raises:
            InvalidSpec: an unsafe or too deep key, or two keys where one is
                a file and the other needs it to be a directory.
            VFSError: EDQUOT when the inputs alone exceed the quota.
        """
        inbox = self.root.children["in"]
        assert isinstance(inbox, Dir)
        inbox.readonly = False
        try:
            for key in sorted(files):
                parts = clean_key(key)
                current = inbox
                for part in parts[:-1]:
                    child = current.children.get(part)
                    if child is None:
                        child = self.mkdir(current, part)
                    if not isinstance(child, Dir):
                        raise InvalidSpec(f"file key {key!r} needs {part!r} to be a directory")
                    current = child
                if isinstance(current.children.get(parts[-1]), Dir):
                    raise InvalidSpec(f"file key {key!r} is also used as a directory")
                file = self.create_file(current, parts[-1])
                self.write(file, 0, bytes(files[key]))
        finally:
            _seal(inbox)

    def iter_files(self, directory: Dir, prefix: str = "") -> Iterator[tuple[str, File]]:
        """Every regular file under ``directory`` with its relative path, in sorted depth-first order.

        Iterative: the tree is guest-shaped, so its depth must never become
        the host's recursion depth.
        """
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

    def collect_out(self) -> dict[str, bytes]:
        """Every regular file under ``/out``, keyed by its path relative to ``/out``."""
        out = self.root.children["out"]
        assert isinstance(out, Dir)
        return {path: f.data for path, f in self.iter_files(out)}


def _seal(directory: Dir) -> None:
    """Make ``directory`` and everything under it read-only (iteratively)."""
    stack = [directory]
    while stack:
        current = stack.pop()
        current.readonly = True
        for child in current.children.values():
            child.readonly = True
            if isinstance(child, Dir):
                stack.append(child)


def _height(directory: Dir) -> int:
    """How many levels lie below ``directory`` (0 when empty), found iteratively."""
    height = 0
    stack = [(directory, 0)]
    while stack:
        current, level = stack.pop()
        for child in current.children.values():
            height = max(height, level + 1)
            if isinstance(child, Dir):
                stack.append((child, level + 1))
    return height
