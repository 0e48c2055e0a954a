# ruff: noqa: PLR0917 - host functions take the WASI ABI's positional parameters as they are
"""WASI preview1 descriptor calls (``fd_*``) over the in-memory VFS; ``wasi_path`` has the ``path_*`` calls.

Guarantees:

* Every call checks the rights it needs on its descriptor before doing
  anything (WASI preview1: ``fd_read`` needs ``FD_READ``, ``fd_pread``
  ``FD_READ`` and ``FD_SEEK``, ``fd_tell`` ``FD_TELL`` or ``FD_SEEK``, ...)
  and returns ENOTCAPABLE when one is missing; a descriptor of the wrong
  kind gets the POSIX errno first (EISDIR, ESPIPE, ENOTDIR).
  ``fd_fdstat_set_rights`` can only drop rights.
* ``/in`` is read-only: a file there cannot be opened for writing (EROFS).
* Quotas are the VFS's: a write or create past ``fs_quota``/``max_files``
  returns EDQUOT and changes nothing; the VFS remembers it (``quota_hit``)
  and the core reports ``FSQuotaExceeded`` after the run. File bytes change
  only through ``VFS.writev``/``VFS.truncate`` (``File`` has no mutator),
  and descriptors keep their file charged through the descriptor table
  (see ``fds``), so an unlinked file that is still open still counts.
* A create, mkdir or rename deeper than ``MAX_DEPTH`` is ENAMETOOLONG.
* stdout/stderr go through the run's ``OutputCapture``; when it raises
  ``OutputLimitExceeded`` the guest is stopped (see ``hostcall``).
* stdin is the request's bytes; a read at its end returns 0 and never blocks,
  unless the run has a keyboard (``Request.input``): then it waits for
  typing, bounded by the run's wall time and cancellation (``keyboard``).
  In a REPL session stdin is the session's code channel instead: a read
  past the current frame blocks until the next eval (see ``channel``), and
  ``/.session/control`` opens the write-only control channel and
  ``/.session/interrupt`` the read-only one-byte interrupt flag.
"""

from __future__ import annotations

import time
from typing import Final

from backends.wasm import abi, devices, keyboard
from backends.wasm.fds import DeviceDesc, DirDesc, FileDesc, StdioDesc, StdStream, require
from backends.wasm.hostcall import HostFunction, WasiError, host_function
from backends.wasm.state import RunState
from playground.core.output import Stream
from playground.core.vfs import Device, Dir, File, Node, Symlink

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


def filetype(node: Node) -> int:
    if isinstance(node, Dir):
        return abi.FILETYPE_DIRECTORY
    if isinstance(node, Symlink):
        return abi.FILETYPE_SYMBOLIC_LINK
    if isinstance(node, Device):
        return abi.FILETYPE_CHARACTER_DEVICE
    return abi.FILETYPE_REGULAR_FILE


def _node_of(desc: FileDesc | DeviceDesc | DirDesc) -> Node:
    """The node an open file, device or directory reaches."""
    if isinstance(desc, FileDesc):
        return desc.file
    return desc.device if isinstance(desc, DeviceDesc) else desc.dir


def write_filestat(run: RunState, ptr: int, node: Node | None) -> None:
    """Store ``node``'s filestat at ``ptr`` (None: a stdio stream)."""
    if node is None:  # stdio
        run.memory.pack(abi.FILESTAT, ptr, 0, 0, abi.FILETYPE_UNKNOWN, 1, 0, 0, 0, 0)
        return
    size = node.size if isinstance(node, (File, Symlink)) else 0
    run.memory.pack(
        abi.FILESTAT, ptr, 1, node.ino, filetype(node), 1, size, node.atime_ns, node.mtime_ns, node.ctime_ns
    )


def set_times(node: Node, atim: int, mtim: int, flags: int) -> int:
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
    if isinstance(desc, DirDesc):
        return abi.EISDIR
    require(desc, abi.RIGHT_FD_READ)
    vecs = _iovecs(run, iovs, iovs_len)
    if isinstance(desc, StdioDesc):
        if desc.stream is not StdStream.STDIN:
            return abi.EBADF
        if run.session is not None:  # blocks until the next eval's code arrives (see channel)
            n = _read_into(run, run.session.read_stdin(run, sum(length for _, length in vecs)), 0, vecs)
        else:
            n = _read_into(run, run.stdin, run.stdin_pos, vecs)
            run.stdin_pos += n
            if n == 0 and run.keyboard is not None:  # Spec.stdin is used up: wait for typing (see keyboard)
                n = _read_into(run, keyboard.read_blocking(run.keyboard, run.control, _wanted(vecs)), 0, vecs)
    elif isinstance(desc, FileDesc):
        if not desc.readable:
            return abi.EBADF
        n = _read_into(run, desc.file.read(desc.pos, _wanted(vecs)), 0, vecs)
        desc.pos += n
    else:
        if not desc.readable:
            return abi.EBADF
        n = _read_into(run, devices.read(desc.device, _wanted(vecs)), 0, vecs)
    run.memory.pack(abi.U32, nread_ptr, n)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiIi")
def fd_pread(run: RunState, fd: int, iovs: int, iovs_len: int, offset: int, nread_ptr: int) -> int:
    run.memory.check(nread_ptr, 4)  # fail before any side effect
    desc = run.fds.file(fd, abi.RIGHT_FD_READ | abi.RIGHT_FD_SEEK)
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
    if isinstance(desc, DirDesc):
        return abi.EISDIR
    require(desc, abi.RIGHT_FD_WRITE)
    vecs = _iovecs(run, iovs, iovs_len)
    if isinstance(desc, StdioDesc):
        stream = _OUTPUT_STREAM.get(desc.stream)
        if stream is None:
            data = b"".join(run.memory.view[buf : buf + length] for buf, length in vecs)
            if desc.stream is StdStream.REPORT:
                total = run.report.write(data)
            elif desc.stream is StdStream.CONTROL and run.session is not None:
                total = run.session.write_control(data)
            else:
                return abi.EBADF
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
        if not desc.writable:
            return abi.EBADF
        total = _wanted(vecs)  # a device keeps nothing: every byte is taken, none is stored
    run.memory.pack(abi.U32, nwritten_ptr, total)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iiiIi")
def fd_pwrite(run: RunState, fd: int, iovs: int, iovs_len: int, offset: int, nwritten_ptr: int) -> int:
    run.memory.check(nwritten_ptr, 4)  # fail before any side effect
    desc = run.fds.file(fd, abi.RIGHT_FD_WRITE | abi.RIGHT_FD_SEEK)
    if not desc.writable:
        return abi.EBADF
    if offset < 0:
        return abi.EINVAL
    total = _write_file(run, desc, offset, _iovecs(run, iovs, iovs_len))
    run.memory.pack(abi.U32, nwritten_ptr, total)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iIii")
def fd_seek(run: RunState, fd: int, offset: int, whence: int, newoffset_ptr: int) -> int:
    device = run.fds.get(fd)
    if isinstance(device, DeviceDesc):  # a character device stays at 0, as Linux's
        _tell_right(device)
        if whence not in (abi.WHENCE_SET, abi.WHENCE_CUR, abi.WHENCE_END):
            return abi.EINVAL
        run.memory.pack(abi.U64, newoffset_ptr, 0)
        return abi.SUCCESS
    desc = run.fds.file(fd)
    if offset == 0 and whence == abi.WHENCE_CUR:
        _tell_right(desc)  # a seek that only asks where it is: fd_tell's right is enough
    else:
        require(desc, abi.RIGHT_FD_SEEK)
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
    device = run.fds.get(fd)
    desc = device if isinstance(device, DeviceDesc) else run.fds.file(fd)
    _tell_right(desc)
    run.memory.pack(abi.U64, offset_ptr, desc.pos if isinstance(desc, FileDesc) else 0)
    return abi.SUCCESS


def _tell_right(desc: FileDesc | DeviceDesc) -> None:
    """``FD_SEEK`` implies ``FD_TELL`` (WASI preview1 ``rights``)."""
    if not desc.rights & (abi.RIGHT_FD_TELL | abi.RIGHT_FD_SEEK):
        raise WasiError(abi.ENOTCAPABLE)


# -- descriptor management -------------------------------------------------------------


@_wasi(FUNCTIONS, "i")
def fd_close(run: RunState, fd: int) -> int:
    _note_report_end(run, fd)
    run.fds.close(fd)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_renumber(run: RunState, fd: int, to: int) -> int:
    if fd != to:
        _note_report_end(run, to)
    run.fds.renumber(fd, to)
    return abi.SUCCESS


def _note_report_end(run: RunState, fd: int) -> None:
    """The guest is about to close (or replace) descriptor ``fd``: if it is the report channel, say so."""
    desc = run.fds.get(fd)
    if isinstance(desc, StdioDesc) and desc.stream is StdStream.REPORT:
        run.report.closed()


@_wasi(FUNCTIONS, "i")
def fd_sync(run: RunState, fd: int) -> int:
    run.fds.get(fd, abi.RIGHT_FD_SYNC)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "i")
def fd_datasync(run: RunState, fd: int) -> int:
    run.fds.get(fd, abi.RIGHT_FD_DATASYNC)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iIIi")
def fd_advise(run: RunState, fd: int, offset: int, length: int, advice: int) -> int:
    run.fds.file(fd, abi.RIGHT_FD_ADVISE)
    if advice > 5 or offset < 0 or length < 0:
        return abi.EINVAL
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iII")
def fd_allocate(run: RunState, fd: int, offset: int, length: int) -> int:
    desc = run.fds.file(fd, abi.RIGHT_FD_ALLOCATE)
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
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_UNKNOWN, desc.flags, desc.rights, desc.inheriting)
    elif isinstance(desc, FileDesc):
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_REGULAR_FILE, desc.flags, desc.rights, desc.inheriting)
    elif isinstance(desc, DeviceDesc):
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_CHARACTER_DEVICE, desc.flags, desc.rights, desc.inheriting)
    else:
        run.memory.pack(abi.FDSTAT, ptr, abi.FILETYPE_DIRECTORY, desc.flags, desc.rights, desc.inheriting)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_fdstat_set_flags(run: RunState, fd: int, flags: int) -> int:
    desc = run.fds.get(fd, abi.RIGHT_FD_FDSTAT_SET_FLAGS)
    if flags & ~(abi.FDFLAGS_APPEND | abi.FDFLAGS_NONBLOCK | abi.FDFLAGS_DSYNC | abi.FDFLAGS_RSYNC | abi.FDFLAGS_SYNC):
        return abi.EINVAL
    desc.flags = flags
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iII")
def fd_fdstat_set_rights(run: RunState, fd: int, base: int, inheriting: int) -> int:
    desc = run.fds.get(fd)
    if base & ~desc.rights or inheriting & ~desc.inheriting:
        return abi.ENOTCAPABLE  # rights can only be dropped
    desc.rights, desc.inheriting = base, inheriting
    if isinstance(desc, FileDesc | DeviceDesc):
        desc.readable = desc.readable and bool(base & abi.RIGHT_FD_READ)
        desc.writable = desc.writable and bool(base & abi.RIGHT_FD_WRITE)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def fd_filestat_get(run: RunState, fd: int, ptr: int) -> int:
    desc = run.fds.get(fd, abi.RIGHT_FD_FILESTAT_GET)
    if isinstance(desc, StdioDesc):
        write_filestat(run, ptr, None)
    else:
        write_filestat(run, ptr, _node_of(desc))
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iI")
def fd_filestat_set_size(run: RunState, fd: int, size: int) -> int:
    desc = run.fds.file(fd, abi.RIGHT_FD_FILESTAT_SET_SIZE)
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
    desc = run.fds.get(fd, abi.RIGHT_FD_FILESTAT_SET_TIMES)
    if isinstance(desc, StdioDesc):
        return abi.EBADF
    return set_times(_node_of(desc), atim, mtim, flags)


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
    desc = run.fds.dir(fd, abi.RIGHT_FD_READDIR)
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
        out += abi.DIRENT.pack(index + 1, node.ino, len(raw), filetype(node)) + raw
    data = bytes(out[:buf_len])
    memory.write(buf, data)
    memory.pack(abi.U32, bufused_ptr, len(data))
    return abi.SUCCESS
