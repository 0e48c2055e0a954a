"""The in-memory filesystem every guest sees: one tree rooted at ``/``.

The standard layout (``Layout.STANDARD``) is a read-only root holding
``/in`` (read-only: the caller's inputs), ``/work`` (the program, the
caller's work files, the working directory), ``/out`` (collected after
the run) and ``/tmp``. ``Layout.CALLER_ROOT`` is a writable root holding
whatever the caller placed there (the WASI test suite's model: a
directory given to the guest as ``/``); only ``/in``, if the caller has
inputs, stays read-only.

Why it is built this way:

* Nothing here touches the host filesystem; a backend presents this tree
  to the guest (the Wasm tier through its WASI layer, the Docker tier as tar
  streams), so there is no host path to escape to.
* Symbolic links exist (``Symlink``) and are resolved only here, against
  this tree (``fspath``): a link's target is text naming nodes of this VFS,
  never a host path. ``..`` is physical and stays at the root at the root
  (``/..`` is ``/``). There are no hard links: a name and a node are one
  to one, which keeps the charge below exact and ``/out`` export bounded
  by the quota (a hard link would export the same bytes once per name).
* Quotas are checked before a change is made. A write, truncate or create
  that would pass the byte quota or the file-count limit raises
  ``VFSError(EDQUOT)`` and leaves the tree exactly as it was; growth is
  charged before any host memory is allocated for it.
* The quota charges node *lifetimes*, not names (issue #12: unlinking an
  open file used to refund its bytes while the descriptor could still grow
  or shrink it, driving ``bytes_used`` negative). A node is charged once
  when created (a link: one node and its target's bytes); ``_resize`` is
  the one method that changes a file's size and it charges the delta;
  ``_free_if_unreachable`` is the one place a node is given back, when no
  name (``links``) and no descriptor (``opens``, kept by the descriptor
  table through ``retain``/``release``) reaches it any more. Every node
  under the root counts, the layout's own directories included.
* ``/in`` and everything under it is read-only for the guest, whichever
  way it is reached (a link into ``/in`` reaches the same read-only nodes);
  the layout's directories cannot be removed or renamed.
* No walk over the tree recurses (a guest shapes it), and no node may sit
  deeper than ``MAX_DEPTH`` (see ``fsnames``).

Thread model: a ``VFS`` belongs to one run and is used by one thread at a
time (the guest's worker, then the host collecting ``/out``).
"""

from __future__ import annotations

import enum
import errno
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, NamedTuple

from playground.core import fstree
from playground.core.errors import InvalidSpec
from playground.core.fsnames import MAX_DEPTH, MAX_NAME, MAX_PATH, check_name, clean_key
from playground.core.fsnode import DEVICES, Device, Dir, File, Node, Symlink, VFSError
from playground.core.fspath import Resolved, check_path, resolve
from playground.core.limits import ResolvedLimits

__all__ = [
    "BASE_DIRS", "DEVICES", "MAX_DEPTH", "MAX_NAME", "MAX_PATH", "VFS", "Device", "Dir", "File", "Layout", "Node",
    "Resolved", "Symlink", "TreeReport", "VFSError", "check_name", "clean_key",
]  # fmt: skip

#: The directories of the standard layout, under a read-only root.
BASE_DIRS: Final = ("in", "work", "out", "tmp")
#: Growth is zero-filled in steps of this many bytes, so a resize never needs twice its size in host memory.
_ZEROS: Final = memoryview(bytes(1 << 20))

Chunk = bytes | bytearray | memoryview


class TreeReport(NamedTuple):
    """What the host reads of a run's tree once the run is over (``VFS.report``)."""

    #: ``collect_out``: every regular file under ``/out`` by its path relative to ``/out``.
    out: dict[str, bytes]
    bytes_used: int
    nodes_used: int
    quota_hit: bool


class Layout(enum.Enum):
    """What the guest's ``/`` holds when the run starts."""

    #: A read-only root with ``/in`` (read-only), ``/work``, ``/out`` and ``/tmp``.
    STANDARD = "standard"
    #: A writable root holding only what the caller placed there (``/in`` read-only if it has inputs).
    CALLER_ROOT = "caller_root"


class VFS:
    """A quota-limited in-memory tree; see the module docstring for its layouts.

    ``fs_quota`` (bytes of file content and link targets) and ``max_files``
    (files, directories and links, the layout's own directories included)
    may be ``None`` for no limit. Both count every live node: reachable by a
    name or by an open descriptor. ``quota_hit`` records that a guest ran
    into either, so the run can be reported as ``FSQuotaExceeded`` even if
    the guest swallowed the error.
    """

    def __init__(self, *, fs_quota: int | None, max_files: int | None, layout: Layout = Layout.STANDARD) -> None:
        self.fs_quota = fs_quota
        self.max_files = max_files
        self.layout = layout
        self.bytes_used = 0
        self.nodes_used = 0
        self.quota_hit = False
        #: ``/out``'s files as a copy of this tree left them, its run having gone on the copy (``adopt_report``).
        self._out_elsewhere: dict[str, bytes] | None = None
        #: The last inode number given out.
        self._last_ino = 0
        self.root = Dir(self._new_ino(), layout is Layout.STANDARD, None)
        self.root.owner = self
        self.root.links = 1  # the root is never counted, never freed
        #: The layout's directories: never removed, renamed or replaced.
        self._bases: list[Dir] = []
        if layout is Layout.STANDARD:
            for name in BASE_DIRS:
                self.base_dir(name)

    def report(self) -> TreeReport:
        """What the host reads of this tree once its run is over (``Capture``): ``/out``'s files and the charge."""
        return TreeReport(self.collect_out(), self.bytes_used, self.nodes_used, self.quota_hit)

    def adopt_report(self, report: TreeReport) -> None:
        """Take on the end of this tree's run that went on a copy of it elsewhere, as that copy's ``report``.

        A Wasm worker process (``backends/wasm/procpool``) runs the guest
        on a copy of the run's tree and answers with the copy's report, not
        the copy: the host reads only ``/out`` and the counters of a finished
        run's tree, and pickling the whole tree there and rebuilding it here
        cost the two processes about 75 us of CPU per hello world (6% of it
        at concurrency 2). From here on this VFS is that run's record:
        ``collect_out``, ``report`` and the counters give the copy's; the
        nodes are as they were sent.
        """
        self._out_elsewhere = report.out
        self.bytes_used, self.nodes_used, self.quota_hit = report.bytes_used, report.nodes_used, report.quota_hit

    def _new_ino(self) -> int:
        self._last_ino += 1
        return self._last_ino

    def __reduce__(self) -> tuple[Callable[[_State], VFS], tuple[_State]]:
        """Pickle as flat rows of plain values, not as a graph of node objects.

        A Wasm worker process gets the run's tree and sends it back on every
        run (``backends/wasm/procpool``). Pickle's own form of the node graph
        recursed about four frames per level of the tree, so a guest that
        dug to ``MAX_DEPTH`` made the worker's answer raise RecursionError
        and the run's result was lost; rows walk the tree without recursion,
        as everything here does (a guest shapes it). They are also half the
        bytes (356 against 732 for an empty tree) and a third faster both
        ways. Host-made nodes (``owner`` None) stay uncharged on the other side.

        Raises:
            ValueError: a node belongs to another VFS (as ``_charged_here``).
        """
        rows: list[_Row] = []
        bases: list[int] = []
        base_ids = {id(base) for base in self._bases}
        pending: list[tuple[int, str, Node]] = [(-1, "", self.root)]
        while pending:
            parent, name, node = pending.pop()
            if node.owner is not self and node.owner is not None:
                raise ValueError("node belongs to another VFS")
            index = len(rows)
            if id(node) in base_ids:
                bases.append(index)
            kind: int = _DIR
            payload: bytearray | str | None = None
            if isinstance(node, File):
                kind, payload = _FILE, node._data
            elif isinstance(node, Symlink):
                kind, payload = _SYMLINK, node.target
            elif isinstance(node, Device):
                kind, payload = _DEVICE, node.kind
            elif isinstance(node, Dir):
                pending.extend((index, key, child) for key, child in reversed(node.children.items()))
            rows.append((
                parent, name, kind, node.ino, node.readonly, node.owner is self, node.links, node.opens,
                node.mtime_ns, node.atime_ns, node.ctime_ns, payload,
            ))  # fmt: skip
        header = (self.fs_quota, self.max_files, self.layout.value, self.bytes_used, self.nodes_used, self.quota_hit)
        return _restore, ((header, self._last_ino, rows, bases),)

    @classmethod
    def for_limits(cls, limits: ResolvedLimits, layout: Layout = Layout.STANDARD) -> VFS:
        """An empty tree bounded by validated ``limits`` (``fs_quota``, ``max_files``)."""
        return cls(fs_quota=limits.fs_quota_cap, max_files=limits.max_files_cap, layout=layout)

    def is_empty_for(self, limits: ResolvedLimits) -> bool:
        """Whether this tree is what ``for_limits(limits)`` makes, times and inode numbers aside.

        The standard layout's directories and nothing else (no node counted
        beyond them, nothing charged, the quota never hit), bounded by
        ``limits``. Most runs get no files: such a run's tree goes to a
        Wasm worker process (``backends/wasm/procpool``) as a marker
        instead of its rows, and the worker makes its own with
        ``for_limits``. Any node a host put in it (packages, a runtime's
        mounts) makes it not empty.
        """
        if (
            self.layout is not Layout.STANDARD or self.bytes_used or self.quota_hit
            or self.nodes_used != len(BASE_DIRS)
            or (self.fs_quota, self.max_files) != (limits.fs_quota_cap, limits.max_files_cap)
        ):  # fmt: skip
            return False
        children = self.root.children
        if len(children) != len(BASE_DIRS):
            return False
        for name in BASE_DIRS:
            node = children.get(name)
            if not isinstance(node, Dir) or node.children:
                return False
        return True

    def base_dir(self, name: str) -> Dir:
        """The layout directory ``/name``, made (and counted) if missing. Host side only.

        Raises:
            VFSError: EDQUOT when it does not fit ``max_files``; EEXIST when
                ``/name`` is something else.
        """
        node = self.root.children.get(name)
        if isinstance(node, Dir):
            return node
        if node is not None:
            raise VFSError(errno.EEXIST, f"/{name} exists and is not a directory")
        self._count_new_node()
        directory = Dir(self._new_ino(), name == "in", self.root)
        self._attach(self.root, name, directory)
        self._bases.append(directory)
        return directory

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

    def _charge_bytes(self, delta: int) -> None:
        """Charge ``delta`` more bytes of content (a link target); the caller allocates nothing before.

        Raises:
            VFSError: EDQUOT when it would pass ``fs_quota``.
        """
        if self.fs_quota is not None and self.bytes_used + delta > self.fs_quota:
            self.quota_hit = True
            raise VFSError(errno.EDQUOT, f"filesystem quota of {self.fs_quota} bytes exceeded")
        self.bytes_used += delta

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
        elif isinstance(node, Symlink):
            self.bytes_used -= node.size
        self.nodes_used -= 1
        node.owner = None

    # -- lookup -------------------------------------------------------------

    def is_base(self, node: Node) -> bool:
        """True for the root and the layout's directories (never removed, renamed or replaced)."""
        return node is self.root or any(node is base for base in self._bases)

    def resolve(self, start: Dir, path: str, *, floor: Dir | None = None, follow: bool = True) -> Resolved:
        """Resolve ``path`` from ``start`` (absolute paths from the root) within ``floor``.

        See ``fspath.resolve``: ``floor=None`` is the whole tree (``/..`` is
        ``/``); a directory as ``floor`` makes ``..`` above it or an
        absolute link target EPERM. ``follow`` says whether a link in the
        last component is followed.

        Raises:
            VFSError: ENOENT, ENOTDIR, EPERM (escape), ELOOP, EINVAL (NUL), ENAMETOOLONG.
        """
        return resolve(self.root, start, path, floor=floor, follow=follow)

    def walk(self, start: Dir, path: str, *, floor: Dir | None = None, follow: bool = True) -> Node:
        """The node ``path`` names (links followed, the last one only if ``follow``).

        Raises:
            VFSError: as ``resolve``; ENOENT when the last component is missing,
                ENOTDIR when a trailing slash names a non-directory.
        """
        found = self.resolve(start, path, floor=floor, follow=follow)
        if found.node is None:
            raise VFSError(errno.ENOENT, f"no such file or directory: {path!r}")
        if found.slash and not isinstance(found.node, Dir):
            raise VFSError(errno.ENOTDIR, f"not a directory: {path!r}")
        return found.node

    def walk_parent(self, start: Dir, path: str, *, floor: Dir | None = None) -> tuple[Dir, str | None]:
        """Resolve all but the last component (following links); return (directory, last name or None).

        The last name is not checked for existence. ``None`` means the path
        named the directory itself (``""``, ``"."``, ``"a/.."``).
        """
        found = self.resolve(start, path, floor=floor, follow=False)
        return found.parent, found.name

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
            if not isinstance(existing, File):
                raise VFSError(errno.EEXIST, f"a symbolic link is in the way: {name!r}")
            return existing
        self._writable_dir(parent, adding=1)
        check_name(name)
        self._count_new_node()
        node = File(self._new_ino(), False)
        self._attach(parent, name, node)
        return node

    def mkdir(self, parent: Dir, name: str) -> Dir:
        if name in parent.children:
            raise VFSError(errno.EEXIST, f"file exists: {name!r}")
        self._writable_dir(parent, adding=1)
        check_name(name)
        self._count_new_node()
        node = Dir(self._new_ino(), False, parent)
        self._attach(parent, name, node)
        return node

    def symlink(self, parent: Dir, name: str, target: str) -> Symlink:
        """Create the link ``name`` -> ``target`` in ``parent``; charged one node and ``len(target)`` bytes.

        ``target`` is stored as given (it may dangle); it is only ever
        resolved inside this VFS.

        Raises:
            VFSError: EEXIST, ENOENT (empty target), EINVAL (NUL),
                ENAMETOOLONG, EROFS, EDQUOT.
        """
        if name in parent.children:
            raise VFSError(errno.EEXIST, f"file exists: {name!r}")
        if not target:
            raise VFSError(errno.ENOENT, "a symbolic link needs a target")
        check_path(target)
        self._writable_dir(parent, adding=1)
        check_name(name)
        link = Symlink(self._new_ino(), False, target)
        self._count_new_node()
        try:
            self._charge_bytes(link.size)
        except VFSError:
            self.nodes_used -= 1
            raise
        self._attach(parent, name, link)
        return link

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
        """Remove a file's or a link's name; a file's bytes stay charged while a descriptor still reaches it."""
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
            self._writable_dir(dst_parent, adding=1 + (fstree.height(node) if isinstance(node, Dir) else 0))
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
            parent = fstree.make_dirs(self, dir_path)
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
        """Place caller files under ``/in`` (keys are ``clean_key``-checked) and seal them read-only.

        With ``Layout.CALLER_ROOT`` and no files, no ``/in`` is made.

        Raises:
            InvalidSpec: an unsafe or too deep key, or two keys where one is
                a file and the other needs it to be a directory.
            VFSError: EDQUOT when the inputs alone exceed the quota.
        """
        if not files and "in" not in self.root.children:
            return
        inbox = self.base_dir("in")
        inbox.readonly = False
        try:
            fstree.seed(self, inbox, files, "/in")
        finally:
            fstree.seal(inbox)

    def seed_work(self, files: Mapping[str, bytes]) -> None:
        """Place caller files under ``/work`` (writable for the guest). Raises as ``seed_inputs``."""
        if files:
            fstree.seed(self, self.base_dir("work"), files, "/work")

    def seed_root(self, files: Mapping[str, bytes]) -> None:
        """Place caller files anywhere under a ``Layout.CALLER_ROOT`` root (writable for the guest).

        Raises:
            InvalidSpec: as ``seed_inputs``, or a key under ``in/`` (inputs go through ``seed_inputs``).
            ValueError: the layout is not ``CALLER_ROOT``.
        """
        if self.layout is not Layout.CALLER_ROOT:
            raise ValueError("root files need Layout.CALLER_ROOT")
        for key in files:
            if clean_key(key)[0] == "in":
                raise InvalidSpec(f"root file {key!r}: /in holds the read-only inputs (Spec.files)")
        fstree.seed(self, self.root, files, "/")

    def iter_files(self, directory: Dir, prefix: str = "") -> Iterator[tuple[str, File]]:
        """Every regular file under ``directory`` with its relative path, in sorted depth-first order.

        Links are not files: they are skipped, never followed.
        """
        return fstree.iter_files(directory, prefix)

    def collect_out(self) -> dict[str, bytes]:
        """Every regular file under ``/out``, keyed by its path relative to ``/out``.

        Symbolic links under ``/out`` are not exported (nor followed): a
        link would export bytes the quota charged once under many names, and
        the host side never materializes guest links. ``{}`` when there is
        no ``/out`` (a caller's root without one). After ``adopt_report``:
        the report's.
        """
        if self._out_elsewhere is not None:
            return dict(self._out_elsewhere)
        out = self.root.children.get("out")
        if not isinstance(out, Dir):
            return {}
        return {path: f.data for path, f in self.iter_files(out)}


#: A node as ``VFS.__reduce__`` writes it: parent row (-1 for the root), name, kind, inode, read-only,
#: charged here, links, opens, the three times, and the content (file bytes, link target, device kind, None).
_Row = tuple[int, str, int, int, bool, bool, int, int, int, int, int, "bytearray | str | None"]
_State = tuple[tuple[int | None, int | None, str, int, int, bool], int, list[_Row], list[int]]
#: A row's kind.
_FILE, _DIR, _SYMLINK, _DEVICE = 0, 1, 2, 3


def _restore(state: _State) -> VFS:
    """The tree ``VFS.__reduce__`` wrote, node for node (inode numbers, times, counts and charges kept)."""
    (fs_quota, max_files, layout, bytes_used, nodes_used, quota_hit), last_ino, rows, bases = state
    vfs = VFS.__new__(VFS)
    vfs.fs_quota, vfs.max_files, vfs.layout = fs_quota, max_files, Layout(layout)
    vfs.bytes_used, vfs.nodes_used, vfs.quota_hit, vfs._last_ino = bytes_used, nodes_used, quota_hit, last_ino
    vfs._out_elsewhere = None
    dirs: list[Dir | None] = []  # per row: the directory it made, None for a file or a link
    for parent_row, name, kind, ino, readonly, charged, links, opens, mtime, atime, ctime, payload in rows:
        parent = dirs[parent_row] if parent_row >= 0 else None
        node: Node
        if kind == _FILE and isinstance(payload, bytearray):
            node = File(ino, readonly)
            node._data = payload
        elif kind == _SYMLINK and isinstance(payload, str):
            node = Symlink(ino, readonly, payload)
        elif kind == _DEVICE and isinstance(payload, str) and payload in DEVICES:
            node = Device(ino, payload)
        elif kind == _DIR and (parent is not None or parent_row < 0):
            node = Dir(ino, readonly, parent)
        else:
            raise ValueError(f"a broken row for node {ino}")
        node.owner = vfs if charged else None
        node.links, node.opens, node.mtime_ns, node.atime_ns, node.ctime_ns = links, opens, mtime, atime, ctime
        if parent is not None:
            parent.children[name] = node
        elif parent_row >= 0:
            raise ValueError(f"node {ino}'s parent is not a directory")
        dirs.append(node if isinstance(node, Dir) else None)
    root, made_bases = dirs[0] if dirs else None, [dirs[row] for row in bases]
    if root is None or None in made_bases:
        raise ValueError("a tree without its root or layout directories")
    vfs.root, vfs._bases = root, [base for base in made_bases if base is not None]
    return vfs
