# ruff: noqa: PLR0917 - host functions take the WASI ABI's positional parameters as they are
"""WASI preview1 path calls (``path_*``) over the in-memory VFS.

Guarantees:

* A path is resolved by the VFS (``fspath``) from its directory
  descriptor: ``..`` and links included, never the host's. From the root
  preopen ``..`` at ``/`` stays at ``/``; from a directory opened through
  ``path_open`` (a capability for its subtree) ``..`` above it or an
  absolute link target is EPERM, as is an absolute path argument anywhere
  (wasi-libc strips the leading ``/`` before it calls us).
* Symbolic links: ``path_symlink`` stores the target text as given (it
  may dangle); an absolute target needs a descriptor that reaches the
  root (EPERM otherwise, as following it would be). A link is followed
  in the last component only with ``LOOKUPFLAGS_SYMLINK_FOLLOW``;
  ``path_open`` of a link without it is ELOOP (POSIX ``O_NOFOLLOW``); 40
  links in one path are ELOOP. Hard links are refused with EPERM (POSIX:
  the filesystem does not support them) after the arguments are checked:
  see ``vfs`` for why there are none.
* Rights (WASI preview1): each call needs its right on its descriptor
  (``path_open`` ``PATH_OPEN``, plus ``PATH_CREATE_FILE`` for ``O_CREAT``
  and ``PATH_FILESTAT_SET_SIZE`` for ``O_TRUNC``; ``path_rename`` the
  source and target rights on each side; ...), else ENOTCAPABLE. A
  descriptor opened through ``path_open`` gets the rights asked for, at
  most the directory's inheriting rights and only those that apply to
  what was opened.
* ``/in`` is read-only: creating, opening for write, truncating, renaming
  or removing there fails with EROFS, also through a link.
* Quotas are the VFS's (EDQUOT; a link is charged one node and its
  target's bytes); a create, mkdir, link or rename deeper than
  ``MAX_DEPTH`` is ENAMETOOLONG.
"""

from __future__ import annotations

from typing import Final

from backends.wasm import abi
from backends.wasm.attempt_watch import REPORT_NAME, watch_path, watch_read_only
from backends.wasm.fds import DeviceDesc, DirDesc, FileDesc, StdioDesc, StdStream
from backends.wasm.hostcall import HostFunction, WasiError, host_function
from backends.wasm.state import RunState
from backends.wasm.wasi_fs import set_times, write_filestat
from playground.core.attempts import AttemptKind
from playground.core.vfs import Device, Dir, File, Layout, Node, Resolved, Symlink

FUNCTIONS: list[HostFunction] = []
_wasi = host_function


_CHANGES: Final = frozenset({AttemptKind.FILE_WRITE, AttemptKind.FILE_DELETE})
#: The report channel is a write-only pipe: stdio's rights without reading.
_REPORT_RIGHTS: Final = abi.RIGHTS_STDIO & ~abi.RIGHT_FD_READ


def _resolve(
    run: RunState, fd: int, ptr: int, length: int, rights: int, *, follow: bool, kind: AttemptKind
) -> tuple[DirDesc, Resolved]:
    """The descriptor ``fd`` (holding ``rights``) and where the guest path at ``ptr`` leads from it.

    The one place every path call passes: what it tries outside the
    sandbox's tree, or against a read-only place, is recorded here as
    ``kind`` (``attempt_watch``), whatever the call then returns.
    """
    desc = run.fds.dir(fd, rights)
    path = run.memory.read_str(ptr, length)
    if not path:
        raise WasiError(abi.ENOENT)
    if path.startswith("/"):
        raise WasiError(abi.EPERM)
    watch_path(run.attempts, run.vfs, desc.dir, path, kind=kind, quiet=run.quiet_paths, home=run.home)
    found = run.vfs.resolve(desc.dir, path, floor=desc.floor, follow=follow)
    if kind in _CHANGES:
        watch_read_only(run.attempts, run.vfs, desc.dir, path, kind=kind, found=found)
    return desc, found


def _existing(found: Resolved) -> Node:
    """What ``found`` names; ENOENT when missing, ENOTDIR when a trailing slash names a non-directory."""
    if found.node is None:
        raise WasiError(abi.ENOENT)
    if found.slash and not isinstance(found.node, Dir):
        raise WasiError(abi.ENOTDIR)
    return found.node


def _named(found: Resolved) -> tuple[Dir, str]:
    """The parent and last name of a path that must name an entry (not ``.`` or ``..``): EBUSY otherwise."""
    if found.name is None:
        raise WasiError(abi.EBUSY)
    return found.parent, found.name


# -- opening -------------------------------------------------------------------------


@_wasi(FUNCTIONS, "iiiiiIIii")
def path_open(
    run: RunState,
    fd: int,
    dirflags: int,
    path_ptr: int,
    path_len: int,
    oflags: int,
    rights_base: int,
    rights_inheriting: int,
    fdflags: int,
    fd_ptr: int,
) -> int:
    run.memory.check(fd_ptr, 4)
    create = bool(oflags & abi.OFLAGS_CREAT)
    exclusive = create and bool(oflags & abi.OFLAGS_EXCL)
    needed = abi.RIGHT_PATH_OPEN
    if create:
        needed |= abi.RIGHT_PATH_CREATE_FILE
    if oflags & abi.OFLAGS_TRUNC:
        needed |= abi.RIGHT_PATH_FILESTAT_SET_SIZE
    # O_CREAT|O_EXCL never follows a link in the last component (POSIX).
    follow = bool(dirflags & abi.LOOKUPFLAGS_SYMLINK_FOLLOW) and not exclusive
    writes = create or bool(oflags & abi.OFLAGS_TRUNC) or bool(rights_base & abi.RIGHTS_WRITE)
    kind = (
        AttemptKind.FILE_LIST if oflags & abi.OFLAGS_DIRECTORY
        else AttemptKind.FILE_WRITE if writes else AttemptKind.FILE_READ
    )  # fmt: skip
    if _opens_report(run, fd, path_ptr, path_len):
        run.memory.pack(abi.U32, fd_ptr, run.fds.add(StdioDesc(StdStream.REPORT, rights=_REPORT_RIGHTS)))
        return abi.SUCCESS
    desc, found = _resolve(run, fd, path_ptr, path_len, needed, follow=follow, kind=kind)
    parent, name, node = found.parent, found.name, found.node
    if run.session is not None and parent is run.session.dir and name is not None:
        run.memory.pack(abi.U32, fd_ptr, run.session.open_control(run, name, oflags, found.slash))
        return abi.SUCCESS
    if isinstance(node, Symlink):  # reached only when not following it
        return abi.EEXIST if exclusive else abi.ELOOP
    if create:
        if node is not None and exclusive:
            return abi.EEXIST
        if node is None:
            if oflags & abi.OFLAGS_DIRECTORY or found.slash:
                return abi.EISDIR
            assert name is not None
            node = run.vfs.create_file(parent, name, exclusive=exclusive)
    if node is None:
        return abi.ENOENT
    if (oflags & abi.OFLAGS_DIRECTORY or found.slash) and not isinstance(node, Dir):
        return abi.ENOTDIR
    base = rights_base & desc.inheriting
    inheriting = rights_inheriting & desc.inheriting
    if isinstance(node, Dir):
        if rights_base & abi.RIGHT_FD_WRITE or oflags & abi.OFLAGS_TRUNC:
            return abi.EISDIR
        new_fd = run.fds.add(DirDesc(node, node, flags=fdflags, rights=base & abi.RIGHTS_DIR, inheriting=inheriting))
    elif isinstance(node, Device):  # O_TRUNC means nothing to a device (as on Linux); writes keep nothing
        base &= abi.RIGHTS_FILE
        readable, writable = bool(base & abi.RIGHT_FD_READ), bool(base & abi.RIGHT_FD_WRITE)
        new_fd = run.fds.add(DeviceDesc(node, readable, writable, flags=fdflags, rights=base, inheriting=inheriting))
    else:
        assert isinstance(node, File)
        wants_write = bool(rights_base & abi.RIGHTS_WRITE) or bool(oflags & abi.OFLAGS_TRUNC)
        if wants_write and node.readonly:
            return abi.EROFS
        if oflags & abi.OFLAGS_TRUNC:
            run.vfs.truncate(node, 0)
        base &= abi.RIGHTS_FILE
        readable = bool(base & abi.RIGHT_FD_READ)
        writable = bool(base & abi.RIGHT_FD_WRITE)
        new_fd = run.fds.add(FileDesc(node, readable, writable, flags=fdflags, rights=base, inheriting=inheriting))
    run.memory.pack(abi.U32, fd_ptr, new_fd)
    return abi.SUCCESS


def _opens_report(run: RunState, fd: int, path_ptr: int, path_len: int) -> bool:
    """True for ``/.attempts`` from the root (standard layout): the in-guest report channel, write-only."""
    if run.vfs.layout is not Layout.STANDARD or path_len != len(REPORT_NAME):
        return False
    desc = run.fds.get(fd)
    from_root = isinstance(desc, DirDesc) and desc.dir is run.vfs.root
    return from_root and run.memory.read_str(path_ptr, path_len) == REPORT_NAME


# -- directories, names ------------------------------------------------------------------


@_wasi(FUNCTIONS, "iii")
def path_create_directory(run: RunState, fd: int, path_ptr: int, path_len: int) -> int:
    _, found = _resolve(
        run, fd, path_ptr, path_len, abi.RIGHT_PATH_CREATE_DIRECTORY, follow=False, kind=AttemptKind.FILE_WRITE
    )
    if found.name is None or found.node is not None:
        return abi.EEXIST
    run.vfs.mkdir(found.parent, found.name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iii")
def path_remove_directory(run: RunState, fd: int, path_ptr: int, path_len: int) -> int:
    _, found = _resolve(
        run, fd, path_ptr, path_len, abi.RIGHT_PATH_REMOVE_DIRECTORY, follow=False, kind=AttemptKind.FILE_DELETE
    )
    parent, name = _named(found)
    run.vfs.rmdir(parent, name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iii")
def path_unlink_file(run: RunState, fd: int, path_ptr: int, path_len: int) -> int:
    _, found = _resolve(
        run, fd, path_ptr, path_len, abi.RIGHT_PATH_UNLINK_FILE, follow=False, kind=AttemptKind.FILE_DELETE
    )
    if found.name is None:
        return abi.EISDIR
    if found.slash and found.node is not None and not isinstance(found.node, Dir):
        return abi.ENOTDIR
    run.vfs.unlink(found.parent, found.name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiiii")
def path_rename(run: RunState, fd: int, old_ptr: int, old_len: int, new_fd: int, new_ptr: int, new_len: int) -> int:
    _, source = _resolve(
        run, fd, old_ptr, old_len, abi.RIGHT_PATH_RENAME_SOURCE, follow=False, kind=AttemptKind.FILE_DELETE
    )
    _, target = _resolve(
        run, new_fd, new_ptr, new_len, abi.RIGHT_PATH_RENAME_TARGET, follow=False, kind=AttemptKind.FILE_WRITE
    )
    src_parent, src_name = _named(source)
    dst_parent, dst_name = _named(target)
    moving = source.node
    if moving is not None and not isinstance(moving, Dir) and (source.slash or target.slash):
        return abi.ENOTDIR
    run.vfs.rename(src_parent, src_name, dst_parent, dst_name)
    return abi.SUCCESS


# -- metadata -------------------------------------------------------------------------


@_wasi(FUNCTIONS, "iiiii")
def path_filestat_get(run: RunState, fd: int, flags: int, path_ptr: int, path_len: int, buf: int) -> int:
    run.memory.check(buf, abi.FILESTAT.size)
    follow = bool(flags & abi.LOOKUPFLAGS_SYMLINK_FOLLOW)
    _, found = _resolve(
        run, fd, path_ptr, path_len, abi.RIGHT_PATH_FILESTAT_GET, follow=follow, kind=AttemptKind.FILE_READ
    )
    write_filestat(run, buf, _existing(found))
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiiIIi")
def path_filestat_set_times(
    run: RunState, fd: int, flags: int, path_ptr: int, path_len: int, atim: int, mtim: int, fst_flags: int
) -> int:
    follow = bool(flags & abi.LOOKUPFLAGS_SYMLINK_FOLLOW)
    _, found = _resolve(
        run, fd, path_ptr, path_len, abi.RIGHT_PATH_FILESTAT_SET_TIMES, follow=follow, kind=AttemptKind.FILE_WRITE
    )
    return set_times(_existing(found), atim, mtim, fst_flags)


# -- links ------------------------------------------------------------------------------


@_wasi(FUNCTIONS, "iiiiii")
def path_readlink(run: RunState, fd: int, path_ptr: int, path_len: int, buf: int, buf_len: int, used_ptr: int) -> int:
    run.memory.check(used_ptr, 4)
    run.memory.check(buf, buf_len)
    _, found = _resolve(run, fd, path_ptr, path_len, abi.RIGHT_PATH_READLINK, follow=False, kind=AttemptKind.FILE_READ)
    node = _existing(found)
    if not isinstance(node, Symlink):
        return abi.EINVAL
    data = node.target.encode("utf-8", "surrogateescape")[:buf_len]  # POSIX readlink: truncated to the buffer
    run.memory.write(buf, data)
    run.memory.pack(abi.U32, used_ptr, len(data))
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiii")
def path_symlink(run: RunState, old_ptr: int, old_len: int, fd: int, new_ptr: int, new_len: int) -> int:
    target = run.memory.read_str(old_ptr, old_len)
    desc, found = _resolve(run, fd, new_ptr, new_len, abi.RIGHT_PATH_SYMLINK, follow=False, kind=AttemptKind.FILE_WRITE)
    if found.name is None:
        return abi.EEXIST
    if found.node is not None:
        return abi.ENOTDIR if found.slash and not isinstance(found.node, Dir) else abi.EEXIST
    if found.slash:
        return abi.ENOENT  # a link's own name cannot end in "/"
    if target.startswith("/") and desc.floor is not None:
        return abi.EPERM  # this descriptor cannot reach the root, so it may not point there
    run.vfs.symlink(found.parent, found.name, target)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiiiii")
def path_link(
    run: RunState, old_fd: int, old_flags: int, old_ptr: int, old_len: int, new_fd: int, new_ptr: int, new_len: int
) -> int:
    follow = bool(old_flags & abi.LOOKUPFLAGS_SYMLINK_FOLLOW)
    _, source = _resolve(
        run, old_fd, old_ptr, old_len, abi.RIGHT_PATH_LINK_SOURCE, follow=follow, kind=AttemptKind.FILE_READ
    )
    _, target = _resolve(
        run, new_fd, new_ptr, new_len, abi.RIGHT_PATH_LINK_TARGET, follow=False, kind=AttemptKind.FILE_WRITE
    )
    if isinstance(_existing(source), Dir):
        return abi.EPERM
    if target.name is None or target.node is not None:
        return abi.EEXIST
    return abi.EPERM  # no hard links in this filesystem (see vfs: one name per node keeps exports bounded)
