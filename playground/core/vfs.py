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
  ``VFSError(EDQUOT)`` and leaves the tree exactly as it was.
* ``/in`` and everything under it is read-only for the guest; the three
  base directories cannot be removed or renamed.

Thread model: a ``VFS`` belongs to one run and is used by one thread at a
time (the guest's worker, then the host collecting ``/out``).
"""

from __future__ import annotations

import errno
import itertools
import re
import time
from collections.abc import Iterator, Mapping
from typing import Final

from playground.core.errors import InvalidSpec
from playground.core.limits import Limits

BASE_DIRS: Final = ("in", "work", "out")
MAX_NAME: Final = 255
MAX_PATH: Final = 4096

_WINDOWS_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$", re.I)
_DRIVE = re.compile(r"^[a-zA-Z]:")


class VFSError(OSError):
    """A filesystem operation failed; ``errno`` says why (``errno.ENOENT`` ...)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)


class Node:
    """A file or directory. ``readonly`` nodes refuse every change by the guest."""

    __slots__ = ("atime_ns", "ctime_ns", "ino", "mtime_ns", "readonly")

    def __init__(self, ino: int, readonly: bool) -> None:
        now = time.time_ns()
        self.ino = ino
        self.readonly = readonly
        self.mtime_ns = now
        self.atime_ns = now
        self.ctime_ns = now

    def touch(self) -> None:
        now = time.time_ns()
        self.mtime_ns = now
        self.ctime_ns = now


class File(Node):
    __slots__ = ("data",)

    def __init__(self, ino: int, readonly: bool, data: bytes = b"") -> None:
        super().__init__(ino, readonly)
        self.data = bytearray(data)

    @property
    def size(self) -> int:
        return len(self.data)


class Dir(Node):
    __slots__ = ("children", "parent")

    def __init__(self, ino: int, readonly: bool, parent: Dir | None) -> None:
        super().__init__(ino, readonly)
        self.children: dict[str, Node] = {}
        self.parent: Dir = parent if parent is not None else self


def check_name(name: str) -> None:
    """Refuse a single path segment a guest or caller may not create.

    Raises:
        VFSError: EINVAL for ``.``/``..``/empty/NUL/``/``/``\\``/control
            characters, ENAMETOOLONG for names over 255 bytes.
    """
    if name in ("", ".", ".."):
        raise VFSError(errno.EINVAL, f"invalid file name {name!r}")
    if "/" in name or "\\" in name or any(ord(c) < 0x20 or c == "\x7f" for c in name):
        raise VFSError(errno.EINVAL, f"invalid character in file name {name!r}")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME:
        raise VFSError(errno.ENAMETOOLONG, f"file name too long ({len(name)} chars)")


def clean_key(key: str) -> tuple[str, ...]:
    """Validate a caller-given relative key (``Spec.files``) and split it.

    Stricter than a guest path: no ``.`` or ``..`` at all, no absolute path,
    no empty segment, no NUL, no backslash, no Windows drive letter or
    device name, no ``:`` (alternate data streams). What passes is safe to
    use as a file name on any host OS too (``/out`` is written to disk by
    the CLI).

    Raises:
        InvalidSpec: the key is unsafe; the message says why.
    """
    if not isinstance(key, str):
        raise InvalidSpec(f"file key must be a str, got {type(key).__name__}")
    if key == "":
        raise InvalidSpec("empty file key")
    if "\x00" in key:
        raise InvalidSpec(f"file key contains NUL: {key!r}")
    if key.startswith(("/", "\\")):
        raise InvalidSpec(f"file key must be relative, got absolute {key!r}")
    if _DRIVE.match(key):
        raise InvalidSpec(f"file key looks like a Windows drive path: {key!r}")
    if "\\" in key:
        raise InvalidSpec(f"file key contains a backslash: {key!r}")
    if len(key) > MAX_PATH:
        raise InvalidSpec(f"file key longer than {MAX_PATH} characters")
    parts = tuple(key.split("/"))
    for part in parts:
        if part == "":
            raise InvalidSpec(f"file key has an empty segment: {key!r}")
        if part in (".", ".."):
            raise InvalidSpec(f"file key may not contain {part!r}: {key!r}")
        if ":" in part:
            raise InvalidSpec(f"file key may not contain ':': {key!r}")
        if _WINDOWS_DEVICE.match(part):
            raise InvalidSpec(f"file key uses a reserved device name {part!r}: {key!r}")
        if part.endswith((" ", ".")):
            raise InvalidSpec(f"file key segment ends with a dot or space: {key!r}")
        try:
            check_name(part)
        except VFSError as exc:
            raise InvalidSpec(f"file key {key!r}: {exc.strerror}") from None
    return parts


class VFS:
    """A quota-limited in-memory tree with ``/in``, ``/work`` and ``/out``.

    ``fs_quota`` (bytes of file content) and ``max_files`` (files plus
    directories, the three base directories included) may be ``None`` for
    no limit. ``quota_hit`` records that a guest ran into either, so the
    run can be reported as ``FSQuotaExceeded`` even if the guest swallowed
    the error.
    """

    def __init__(self, *, fs_quota: int | None, max_files: int | None) -> None:
        self.fs_quota = fs_quota
        self.max_files = max_files
        self.bytes_used = 0
        self.nodes_used = 0
        self.quota_hit = False
        self._ino = itertools.count(1)
        self.root = Dir(next(self._ino), True, None)
        for name in BASE_DIRS:
            self._count_new_node()
            self.root.children[name] = Dir(next(self._ino), name == "in", self.root)

    @classmethod
    def for_limits(cls, limits: Limits) -> VFS:
        """An empty tree bounded by validated ``limits`` (``fs_quota``, ``max_files``)."""
        quota = limits.get("fs_quota")
        files = limits.get("max_files")
        return cls(fs_quota=None if quota is None else int(quota), max_files=None if files is None else int(files))

    # -- accounting ---------------------------------------------------------

    def _count_new_node(self) -> None:
        if self.max_files is not None and self.nodes_used + 1 > self.max_files:
            self.quota_hit = True
            raise VFSError(errno.EDQUOT, f"file-count limit of {self.max_files} reached")
        self.nodes_used += 1

    def _reserve_bytes(self, delta: int) -> None:
        if delta > 0 and self.fs_quota is not None and self.bytes_used + delta > self.fs_quota:
            self.quota_hit = True
            raise VFSError(
                errno.EDQUOT,
                f"filesystem quota of {self.fs_quota} bytes exceeded "
                f"({self.bytes_used} used, {delta} more asked)",
            )
        self.bytes_used += delta

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

    # -- changes (every guest-visible mutation goes through these) ----------

    def _writable_dir(self, parent: Dir) -> None:
        if parent.readonly:
            raise VFSError(errno.EROFS, "read-only directory")

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
        self._writable_dir(parent)
        check_name(name)
        self._count_new_node()
        node = File(next(self._ino), False)
        parent.children[name] = node
        parent.touch()
        return node

    def mkdir(self, parent: Dir, name: str) -> Dir:
        if name in parent.children:
            raise VFSError(errno.EEXIST, f"file exists: {name!r}")
        self._writable_dir(parent)
        check_name(name)
        self._count_new_node()
        node = Dir(next(self._ino), False, parent)
        parent.children[name] = node
        parent.touch()
        return node

    def write(self, file: File, offset: int, data: bytes | bytearray | memoryview) -> int:
        """Write ``data`` at ``offset`` (holes are zero-filled); return bytes written."""
        if file.readonly:
            raise VFSError(errno.EROFS, "read-only file")
        if offset < 0:
            raise VFSError(errno.EINVAL, "negative offset")
        end = offset + len(data)
        self._reserve_bytes(max(0, end - len(file.data)))
        if offset > len(file.data):
            file.data.extend(bytes(offset - len(file.data)))
        file.data[offset:end] = data
        file.touch()
        return len(data)

    def truncate(self, file: File, size: int) -> None:
        if file.readonly:
            raise VFSError(errno.EROFS, "read-only file")
        if size < 0:
            raise VFSError(errno.EINVAL, "negative size")
        self._reserve_bytes(size - len(file.data))
        if size < len(file.data):
            del file.data[size:]
        else:
            file.data.extend(bytes(size - len(file.data)))
        file.touch()

    def unlink(self, parent: Dir, name: str) -> None:
        node = parent.children.get(name)
        if node is None:
            raise VFSError(errno.ENOENT, f"no such file: {name!r}")
        if isinstance(node, Dir):
            raise VFSError(errno.EISDIR, f"is a directory: {name!r}")
        self._writable_dir(parent)
        assert isinstance(node, File)
        del parent.children[name]
        self.bytes_used -= len(node.data)
        self.nodes_used -= 1
        parent.touch()

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
        self.nodes_used -= 1
        parent.touch()

    def rename(self, src_parent: Dir, src_name: str, dst_parent: Dir, dst_name: str) -> None:
        """POSIX rename within the tree; base directories and /in are immovable."""
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
                self.nodes_used -= 1
            else:
                assert isinstance(target, File)
                self.bytes_used -= len(target.data)
                self.nodes_used -= 1
        del src_parent.children[src_name]
        dst_parent.children[dst_name] = node
        if isinstance(node, Dir):
            node.parent = dst_parent
        src_parent.touch()
        dst_parent.touch()

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
        if file.readonly:
            raise VFSError(errno.EROFS, "read-only file")
        self._reserve_bytes(len(data) - len(file.data))
        file.data[:] = data
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
        return bytes(node.data)

    def listdir(self, path: str) -> list[str]:
        node = self.lookup(path)
        if not isinstance(node, Dir):
            raise VFSError(errno.ENOTDIR, f"not a directory: {path!r}")
        return sorted(node.children)

    def seed_inputs(self, files: Mapping[str, bytes]) -> None:
        """Place caller files under ``/in`` (keys are ``clean_key``-checked) and seal them.

        Raises:
            InvalidSpec: an unsafe key, or two keys where one is a file and
                the other needs it to be a directory.
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
            self._seal(inbox)

    def _seal(self, directory: Dir) -> None:
        directory.readonly = True
        for child in directory.children.values():
            child.readonly = True
            if isinstance(child, Dir):
                self._seal(child)

    def iter_files(self, directory: Dir, prefix: str = "") -> Iterator[tuple[str, File]]:
        for name in sorted(directory.children):
            child = directory.children[name]
            path = f"{prefix}{name}"
            if isinstance(child, Dir):
                yield from self.iter_files(child, path + "/")
            else:
                assert isinstance(child, File)
                yield path, child

    def collect_out(self) -> dict[str, bytes]:
        """Every regular file under ``/out``, keyed by its path relative to ``/out``."""
        out = self.root.children["out"]
        assert isinstance(out, Dir)
        return {path: bytes(f.data) for path, f in self.iter_files(out)}
