# ruff: noqa: PLR0917 - host functions take the WASI ABI's positional parameters as they are
"""WASI preview1 descriptors and paths (``fd_*``, ``path_*``) over the in-memory VFS.

Guarantees:

* Paths are resolved by the VFS relative to a directory descriptor, with
  ``..`` clamped at that descriptor's floor (EPERM on escape). Absolute
  paths are not capabilities and are refused with EPERM. There are no
  symlinks: ``path_readlink`` is EINVAL, ``path_symlink`` ENOTSUP,
  ``path_link`` EPERM.
* ``/in`` is read-only: creating, opening for write, truncating, renaming
  or removing there fails with EROFS.
* Quotas are the VFS's: a write or create past ``fs_quota``/``max_files``
  returns EDQUOT and changes nothing; the VFS remembers it (``quota_hit``)
  and the core reports ``FSQuotaExceeded`` after the run. File bytes change
  only through ``VFS.writev``/``VFS.truncate`` (``File`` has no mutator),
  and descriptors keep their file charged through the descriptor table
  (see ``fds``), so an unlinked file that is still open still counts.
* A create, mkdir or rename deeper than ``MAX_DEPTH`` is ENAMETOOLONG.
* stdout/stderr go through the run's ``OutputCapture``; when it raises
  ``OutputLimitExceeded`` the guest is stopped (see ``hostcall``).
* stdin is the request's bytes; a read at its end returns 0 and never blocks.
  In a REPL session stdin is the session's code channel instead: a read
  past the current frame blocks until the next eval (see ``channel``), and
  ``/.session/control`` opens the write-only control channel and
  ``/.session/interrupt`` the read-only one-byte interrupt flag.
"""

from __future__ import annotations

import time
from typing import Final

from backends.wasm import abi
from backends.wasm.fds import DirDesc, FileDesc, StdioDesc, StdStream
from backends.wasm.hostcall import HostFunction, WasiError, host_function
from backends.wasm.state import RunState
from playground.core.output import Stream
from playground.core.vfs import Dir, File, Node

FUNCTIONS: list[HostFunction] = []
_wasi = host_function

_I64_MAX: Final = (1 << 63) - 1
_OUTPUT_STREAM: Final = {StdStream.STDOUT: Stream.STDOUT, StdStream.STDERR: Stream.STDERR}
#: Largest file a guest may address (offsets beyond fail with EFBIG).
_MAX_FILE_SIZE: Final = 1 << 40


# -- helpers -------------------------------------------------------------------------


def _iovecs(run: RunState, ptr: int, count: int) -> list[tuple[int, int]]:
    memory = run.memory
    memory.check(ptr, 8 * count)
    vecs = [abi.IOVEC.unpack_from(memory.view, ptr + 8 * i) for i in range(count)]
    for buf, length in vecs:
        memory.check(buf, length)
    return vecs


def _filetype(node: Node) -> int:
    return abi.FILETYPE_DIRECTORY if isinstance(node, Dir) else abi.FILETYPE_REGULAR_FILE


def _write_filestat(run: RunState, ptr: int, node: Node | None) -> None:
    if node is None:  # stdio
        run.memory.pack(abi.FILESTAT, ptr, 0, 0, abi.FILETYPE_UNKNOWN, 1, 0, 0, 0, 0)
        return
    size = node.size if isinstance(node, File) else 0
    run.memory.pack(
        abi.FILESTAT, ptr, 1, node.ino, _filetype(node), 1, size, node.atime_ns, node.mtime_ns, node.ctime_ns
    )


def _set_times(node: Node, atim: int, mtim: int, flags: int) -> int:
    if (flags & abi.FSTFLAGS_ATIM and flags & abi.FSTFLAGS_ATIM_NOW) or (
        flags & abi.FSTFLAGS_MTIM and flags & abi.FSTFLAGS_MTIM_NOW
    ):
        return abi.EINVAL
    if node.readonly:
        return abi.EROFS
    now = time.time_ns()
    if flags & abi.FSTFLAGS_ATIM_NOW:
        node.atime_ns = now
    elif flags & abi.FSTFLAGS_ATIM:
        node.atime_ns = atim & _I64_MAX
    if flags & abi.FSTFLAGS_MTIM_NOW:
        node.mtime_ns = now
    elif flags & abi.FSTFLAGS_MTIM:
        node.mtime_ns = mtim & _I64_MAX
    return abi.SUCCESS


def _path(run: RunState, fd: int, ptr: int, length: int) -> tuple[DirDesc, Dir, str | None, bool]:
    """Resolve a guest path to (descriptor, parent dir, last name or None, trailing slash)."""
    desc = run.fds.dir(fd)
    path = run.memory.read_str(ptr, length)
    if not path:
        raise WasiError(abi.ENOENT)
    if path.startswith("/"):
        raise WasiError(abi.EPERM)
    parent, name = run.vfs.walk_parent(desc.dir, path, floor=desc.floor)
    return desc, parent, name, path.endswith("/")


def _lookup(run: RunState, fd: int, ptr: int, length: int) -> Node:
    _, parent, name, slash = _path(run, fd, ptr, length)
    if name is None:
        return parent
    node = parent.children.get(name)
    if node is None:
        raise WasiError(abi.ENOENT)
    if slash and not isinstance(node, Dir):
        raise WasiError(abi.ENOTDIR)
    return node


def _named(run: RunState, fd: int, ptr: int, length: int) -> tuple[Dir, str]:
    _, parent, name, _slash = _path(run, fd, ptr, length)
    if name is None:
        raise WasiError(abi.EBUSY)
    return parent, name


# -- reading and writing ---------------------------------------------------------------


def _read_into(run: RunState, data: bytes | bytearray, start: int, vecs: list[tuple[int, int]]) -> int:
    view = run.memory.view
    total = 0
    pos = start
    end = len(data)
    for buf, length in vecs:
        if pos >= end:
            break
        n = min(length, end - pos)
        view[buf : buf + n] = data[pos : pos + n]
        pos += n
        total += n
    return total


@_wasi(FUNCTIONS, "iiii")
def fd_read(run: RunState, fd: int, iovs: int, iovs_len: int, nread_ptr: int) -> int:
    run.memory.check(nread_ptr, 4)  # fail before any side effect
    desc = run.fds.get(fd)
    vecs = _iovecs(run, iovs, iovs_len)
    if isinstance(desc, StdioDesc):
        if desc.stream is not StdStream.STDIN:
            return abi.EBADF
        if run.session is not None:  # blocks until the next eval's code arrives (see channel)
            n = _read_into(run, run.session.read_stdin(run, sum(length for _, length in vecs)), 0, vecs)
        else:
            n = _read_into(run, run.stdin, run.stdin_pos, vecs)
            run.stdin_pos += n
    elif isinstance(desc, FileDesc):
        if not desc.readable:
            return abi.EBADF
        n = _read_into(run, desc.file.read(desc.pos, _wanted(vecs)), 0, vecs)
        desc.pos += n
    else:
        return abi.EISDIR
    run.memory.pack(abi.U32, nread_ptr, n)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiIi")
def fd_pread(run: RunState, fd: int, iovs: int, iovs_len: int, offset: int, nread_ptr: int) -> int:
    run.memory.check(nread_ptr, 4)  # fail before any side effect
    desc = run.fds.file(fd)
    if not desc.readable:
        return abi.EBADF
    if offset < 0:
        return abi.EINVAL
    vecs = _iovecs(run, iovs, iovs_len)
    n = _read_into(run, desc.file.read(offset, _wanted(vecs)), 0, vecs)
    run.memory.pack(abi.U32, nread_ptr, n)
    return abi.SUCCESS


def _wanted(vecs: list[tuple[int, int]]) -> int:
    return sum(length for _, length in vecs)


def _write_file(run: RunState, desc: FileDesc, offset: int, vecs: list[tuple[int, int]]) -> int:
    """Write the iovecs at ``offset`` through the VFS, which charges any growth first: all or (EDQUOT) nothing."""
    if offset + _wanted(vecs) > _MAX_FILE_SIZE:
        raise WasiError(abi.EFBIG)
    view = run.memory.view
    return run.vfs.writev(desc.file, offset, [view[buf : buf + length] for buf, length in vecs])


@_wasi(FUNCTIONS, "iiii")
def fd_write(run: RunState, fd: int, iovs: int, iovs_len: int, nwritten_ptr: int) -> int:
    run.memory.check(nwritten_ptr, 4)  # fail before any side effect
    desc = run.fds.get(fd)
    vecs = _iovecs(run, iovs, iovs_len)
    if isinstance(desc, StdioDesc):
        stream = _OUTPUT_STREAM.get(desc.stream)
        if stream is None:
            if desc.stream is not StdStream.CONTROL or run.session is None:
                return abi.EBADF
            total = run.session.write_control(b"".join(run.memory.view[buf : buf + length] for buf, length in vecs))
            run.memory.pack(abi.U32, nwritten_ptr, total)
            return abi.SUCCESS
        view = run.memory.view
        total = 0
        write = run.output.write
        for buf, length in vecs:
            if length:
                total += write(stream, view[buf : buf + length])
    elif isinstance(desc, FileDesc):
        if not desc.writable:
            return abi.EBADF
        start = desc.file.size if desc.flags & abi.FDFLAGS_APPEND else desc.pos
        total = _write_file(run, desc, start, vecs)
        desc.pos = start + total
    else:
        return abi.EISDIR
    run.memory.pack(abi.U32, nwritten_ptr, total)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiIi")
def fd_pwrite(run: RunState, fd: int, iovs: int, iovs_len: int, offset: int, nwritten_ptr: int) -> int:
    run.memory.check(nwritten_ptr, 4)  # fail before any side effect
    desc = run.fds.file(fd)
    if not desc.writable:
        return abi.EBADF
    if offset < 0:
        return abi.EINVAL
    total = _write_file(run, desc, offset, _iovecs(run, iovs, iovs_len))
    run.memory.pack(abi.U32, nwritten_ptr, total)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iIii")
def fd_seek(run: RunState, fd: int, offset: int, whence: int, newoffset_ptr: int) -> int:
    desc = run.fds.file(fd)
    if whence == abi.WHENCE_SET:
        pos = offset
    elif whence == abi.WHENCE_CUR:
        pos = desc.pos + offset
    elif whence == abi.WHENCE_END:
        pos = desc.file.size + offset
    else:
        return abi.EINVAL
    if pos < 0:
        return abi.EINVAL
    if pos > _MAX_FILE_SIZE:
        return abi.EFBIG
    run.memory.pack(abi.U64, newoffset_ptr, pos)
    desc.pos = pos
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_tell(run: RunState, fd: int, offset_ptr: int) -> int:
    run.memory.pack(abi.U64, offset_ptr, run.fds.file(fd).pos)
    return abi.SUCCESS


# -- descriptor management -------------------------------------------------------------


@_wasi(FUNCTIONS, "i")
def fd_close(run: RunState, fd: int) -> int:
    run.fds.close(fd)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_renumber(run: RunState, fd: int, to: int) -> int:
    run.fds.renumber(fd, to)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "i")
def fd_sync(run: RunState, fd: int) -> int:
    run.fds.get(fd)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "i")
def fd_datasync(run: RunState, fd: int) -> int:
    run.fds.get(fd)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iIIi")
def fd_advise(run: RunState, fd: int, offset: int, length: int, advice: int) -> int:
    run.fds.file(fd)
    if advice > 5 or offset < 0 or length < 0:
        return abi.EINVAL
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iII")
def fd_allocate(run: RunState, fd: int, offset: int, length: int) -> int:
    desc = run.fds.file(fd)
    if not desc.writable:
        return abi.EBADF
    if offset < 0 or length <= 0:
        return abi.EINVAL
    end = offset + length
    if end > _MAX_FILE_SIZE:
        return abi.EFBIG
    if end > desc.file.size:
        run.vfs.truncate(desc.file, end)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_fdstat_get(run: RunState, fd: int, ptr: int) -> int:
    desc = run.fds.get(fd)
    if isinstance(desc, StdioDesc):
        # Not a character device: stdio is a captured pipe, so guests buffer it (see notes: flush trap).
        rights = abi.RIGHTS_STDIO
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_UNKNOWN, desc.flags, rights, 0)
    elif isinstance(desc, FileDesc):
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_REGULAR_FILE, desc.flags, desc.rights, desc.inheriting)
    else:
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_DIRECTORY, desc.flags, desc.rights, desc.inheriting)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_fdstat_set_flags(run: RunState, fd: int, flags: int) -> int:
    desc = run.fds.get(fd)
    if flags & ~(abi.FDFLAGS_APPEND | abi.FDFLAGS_NONBLOCK | abi.FDFLAGS_DSYNC | abi.FDFLAGS_RSYNC | abi.FDFLAGS_SYNC):
        return abi.EINVAL
    desc.flags = flags
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iII")
def fd_fdstat_set_rights(run: RunState, fd: int, base: int, inheriting: int) -> int:
    desc = run.fds.get(fd)
    if isinstance(desc, StdioDesc):
        return abi.SUCCESS
    if base & ~desc.rights or inheriting & ~desc.inheriting:
        return abi.ENOTCAPABLE
    desc.rights, desc.inheriting = base, inheriting
    if isinstance(desc, FileDesc):
        desc.readable = desc.readable and bool(base & abi.RIGHT_FD_READ)
        desc.writable = desc.writable and bool(base & abi.RIGHT_FD_WRITE)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_filestat_get(run: RunState, fd: int, ptr: int) -> int:
    desc = run.fds.get(fd)
    if isinstance(desc, StdioDesc):
        _write_filestat(run, ptr, None)
    else:
        _write_filestat(run, ptr, desc.file if isinstance(desc, FileDesc) else desc.dir)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iI")
def fd_filestat_set_size(run: RunState, fd: int, size: int) -> int:
    desc = run.fds.file(fd)
    if not desc.writable:
        return abi.EBADF
    if size < 0:
        return abi.EINVAL
    if size > _MAX_FILE_SIZE:
        return abi.EFBIG
    run.vfs.truncate(desc.file, size)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iIIi")
def fd_filestat_set_times(run: RunState, fd: int, atim: int, mtim: int, flags: int) -> int:
    desc = run.fds.get(fd)
    if isinstance(desc, StdioDesc):
        return abi.EBADF
    return _set_times(desc.file if isinstance(desc, FileDesc) else desc.dir, atim, mtim, flags)


@_wasi(FUNCTIONS, "ii")
def fd_prestat_get(run: RunState, fd: int, ptr: int) -> int:
    desc = run.fds.get(fd)
    if not isinstance(desc, DirDesc) or desc.preopen_name is None:
        return abi.EBADF
    run.memory.pack(abi.PRESTAT, ptr, abi.PREOPENTYPE_DIR, len(desc.preopen_name.encode()))
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iii")
def fd_prestat_dir_name(run: RunState, fd: int, path_ptr: int, length: int) -> int:
    desc = run.fds.get(fd)
    if not isinstance(desc, DirDesc) or desc.preopen_name is None:
        return abi.EBADF
    name = desc.preopen_name.encode()
    if length < len(name):
        return abi.ENAMETOOLONG
    run.memory.write(path_ptr, name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiIi")
def fd_readdir(run: RunState, fd: int, buf: int, buf_len: int, cookie: int, bufused_ptr: int) -> int:
    desc = run.fds.dir(fd)
    memory = run.memory
    memory.check(buf, buf_len)
    directory = desc.dir
    entries: list[tuple[str, Node]] = [(".", directory), ("..", directory.parent)]
    entries.extend(sorted(directory.children.items()))
    if cookie < 0:
        return abi.EINVAL
    out = bytearray()
    for index in range(cookie, len(entries)):
        if len(out) >= buf_len:
            break
        name, node = entries[index]
        raw = name.encode("utf-8", "surrogateescape")
        out += abi.DIRENT.pack(index + 1, node.ino, len(raw), _filetype(node)) + raw
    data = bytes(out[:buf_len])
    memory.write(buf, data)
    memory.pack(abi.U32, bufused_ptr, len(data))
    return abi.SUCCESS


# -- paths ---------------------------------------------------------------------------


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
    _, parent, name, slash = _path(run, fd, path_ptr, path_len)
    if run.session is not None and parent is run.session.dir and name is not None:
        run.memory.pack(abi.U32, fd_ptr, run.session.open_control(run, name, oflags, slash))
        return abi.SUCCESS
    vfs = run.vfs
    node: Node | None = parent if name is None else parent.children.get(name)
    if oflags & abi.OFLAGS_CREAT:
        if node is not None and oflags & abi.OFLAGS_EXCL:
            return abi.EEXIST
        if node is None:
            if oflags & abi.OFLAGS_DIRECTORY or slash:
                return abi.EISDIR
            assert name is not None
            node = vfs.create_file(parent, name, exclusive=bool(oflags & abi.OFLAGS_EXCL))
    if node is None:
        return abi.ENOENT
    if (oflags & abi.OFLAGS_DIRECTORY or slash) and not isinstance(node, Dir):
        return abi.ENOTDIR
    wants_write = bool(rights_base & abi.RIGHTS_WRITE) or bool(oflags & abi.OFLAGS_TRUNC)
    if isinstance(node, Dir):
        if rights_base & abi.RIGHT_FD_WRITE or oflags & abi.OFLAGS_TRUNC:
            return abi.EISDIR
        new_fd = run.fds.add(DirDesc(node, node, flags=fdflags))
    else:
        assert isinstance(node, File)
        if wants_write and node.readonly:
            return abi.EROFS
        if oflags & abi.OFLAGS_TRUNC:
            vfs.truncate(node, 0)
        readable = bool(rights_base & abi.RIGHT_FD_READ) or not wants_write
        writable = bool(rights_base & abi.RIGHT_FD_WRITE)
        rights = rights_base & abi.RIGHTS_FILE
        new_fd = run.fds.add(FileDesc(node, readable, writable, flags=fdflags, rights=rights))
    run.memory.pack(abi.U32, fd_ptr, new_fd)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iii")
def path_create_directory(run: RunState, fd: int, path_ptr: int, path_len: int) -> int:
    _, parent, name, _slash = _path(run, fd, path_ptr, path_len)
    if name is None:
        return abi.EEXIST
    run.vfs.mkdir(parent, name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iii")
def path_remove_directory(run: RunState, fd: int, path_ptr: int, path_len: int) -> int:
    parent, name = _named(run, fd, path_ptr, path_len)
    run.vfs.rmdir(parent, name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iii")
def path_unlink_file(run: RunState, fd: int, path_ptr: int, path_len: int) -> int:
    _, parent, name, slash = _path(run, fd, path_ptr, path_len)
    if name is None:
        return abi.EISDIR
    if slash and isinstance(parent.children.get(name), File):
        return abi.ENOTDIR
    run.vfs.unlink(parent, name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiiii")
def path_rename(run: RunState, fd: int, old_ptr: int, old_len: int, new_fd: int, new_ptr: int, new_len: int) -> int:
    src_parent, src_name = _named(run, fd, old_ptr, old_len)
    dst_parent, dst_name = _named(run, new_fd, new_ptr, new_len)
    run.vfs.rename(src_parent, src_name, dst_parent, dst_name)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiii")
def path_filestat_get(run: RunState, fd: int, flags: int, path_ptr: int, path_len: int, buf: int) -> int:
    run.memory.check(buf, abi.FILESTAT.size)
    _write_filestat(run, buf, _lookup(run, fd, path_ptr, path_len))
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiiIIi")
def path_filestat_set_times(
    run: RunState, fd: int, flags: int, path_ptr: int, path_len: int, atim: int, mtim: int, fst_flags: int
) -> int:
    return _set_times(_lookup(run, fd, path_ptr, path_len), atim, mtim, fst_flags)


@_wasi(FUNCTIONS, "iiiiii")
def path_readlink(run: RunState, fd: int, path_ptr: int, path_len: int, buf: int, buf_len: int, used_ptr: int) -> int:
    _lookup(run, fd, path_ptr, path_len)
    return abi.EINVAL  # there are no symlinks


@_wasi(FUNCTIONS, "iiiii")
def path_symlink(run: RunState, old_ptr: int, old_len: int, fd: int, new_ptr: int, new_len: int) -> int:
    return abi.ENOTSUP


@_wasi(FUNCTIONS, "iiiiiii")
def path_link(
    run: RunState, old_fd: int, old_flags: int, old_ptr: int, old_len: int, new_fd: int, new_ptr: int, new_len: int
) -> int:
    return abi.EPERM
