"""WASI preview1 ABI constants and the Python-errno -> WASI-errno map.

Values come from the ``wasi_snapshot_preview1`` witx definitions; they are
part of the guest ABI and must never change.
"""

from __future__ import annotations

import errno
import struct
from typing import Final

MODULE: Final = "wasi_snapshot_preview1"

# -- errno ---------------------------------------------------------------------

_WASI_ERRNO_NAMES: Final = (
    "SUCCESS", "2BIG", "ACCES", "ADDRINUSE", "ADDRNOTAVAIL", "AFNOSUPPORT", "AGAIN", "ALREADY",
    "BADF", "BADMSG", "BUSY", "CANCELED", "CHILD", "CONNABORTED", "CONNREFUSED", "CONNRESET",
    "DEADLK", "DESTADDRREQ", "DOM", "DQUOT", "EXIST", "FAULT", "FBIG", "HOSTUNREACH", "IDRM",
    "ILSEQ", "INPROGRESS", "INTR", "INVAL", "IO", "ISCONN", "ISDIR", "LOOP", "MFILE", "MLINK",
    "MSGSIZE", "MULTIHOP", "NAMETOOLONG", "NETDOWN", "NETRESET", "NETUNREACH", "NFILE", "NOBUFS",
    "NODEV", "NOENT", "NOEXEC", "NOLCK", "NOLINK", "NOMEM", "NOMSG", "NOPROTOOPT", "NOSPC",
    "NOSYS", "NOTCONN", "NOTDIR", "NOTEMPTY", "NOTRECOVERABLE", "NOTSOCK", "NOTSUP", "NOTTY",
    "NXIO", "OVERFLOW", "OWNERDEAD", "PERM", "PIPE", "PROTO", "PROTONOSUPPORT", "PROTOTYPE",
    "RANGE", "ROFS", "SPIPE", "SRCH", "STALE", "TIMEDOUT", "TXTBSY", "XDEV", "NOTCAPABLE",
)  # fmt: skip

SUCCESS: Final = 0
E2BIG: Final = 1
EACCES: Final = 2
EAGAIN: Final = 6
EBADF: Final = 8
EBUSY: Final = 10
EDQUOT: Final = 19
EEXIST: Final = 20
EFAULT: Final = 21
EFBIG: Final = 22
EINVAL: Final = 28
EIO: Final = 29
EISDIR: Final = 31
ELOOP: Final = 32
EMFILE: Final = 33
ENAMETOOLONG: Final = 37
ENOENT: Final = 44
ENOSYS: Final = 52
ENOTDIR: Final = 54
ENOTEMPTY: Final = 55
ENOTSOCK: Final = 57
ENOTSUP: Final = 58
EOVERFLOW: Final = 61
EPERM: Final = 63
EROFS: Final = 69
ESPIPE: Final = 70
EXDEV: Final = 75
ENOTCAPABLE: Final = 76

assert _WASI_ERRNO_NAMES[ENOTCAPABLE] == "NOTCAPABLE" and _WASI_ERRNO_NAMES[EROFS] == "ROFS"

#: Python (host) errno value -> WASI errno. Unknown values map to EIO.
FROM_HOST_ERRNO: Final[dict[int, int]] = {
    getattr(errno, "E" + name): code
    for code, name in enumerate(_WASI_ERRNO_NAMES)
    if code and hasattr(errno, "E" + name)
}
FROM_HOST_ERRNO[errno.EDQUOT] = EDQUOT


def wasi_errno(host_errno: int | None) -> int:
    """The WASI errno for a host ``errno`` value (EIO when it has no match)."""
    if host_errno is None:
        return EIO
    return FROM_HOST_ERRNO.get(host_errno, EIO)


# -- file types, flags, rights ---------------------------------------------------

FILETYPE_UNKNOWN: Final = 0
FILETYPE_CHARACTER_DEVICE: Final = 2
FILETYPE_DIRECTORY: Final = 3
FILETYPE_REGULAR_FILE: Final = 4
FILETYPE_SYMBOLIC_LINK: Final = 7

LOOKUPFLAGS_SYMLINK_FOLLOW: Final = 1

FDFLAGS_APPEND: Final = 1
FDFLAGS_DSYNC: Final = 2
FDFLAGS_NONBLOCK: Final = 4
FDFLAGS_RSYNC: Final = 8
FDFLAGS_SYNC: Final = 16

OFLAGS_CREAT: Final = 1
OFLAGS_DIRECTORY: Final = 2
OFLAGS_EXCL: Final = 4
OFLAGS_TRUNC: Final = 8

FSTFLAGS_ATIM: Final = 1
FSTFLAGS_ATIM_NOW: Final = 2
FSTFLAGS_MTIM: Final = 4
FSTFLAGS_MTIM_NOW: Final = 8

WHENCE_SET: Final = 0
WHENCE_CUR: Final = 1
WHENCE_END: Final = 2

RIGHT_FD_DATASYNC: Final = 1 << 0
RIGHT_FD_READ: Final = 1 << 1
RIGHT_FD_SEEK: Final = 1 << 2
RIGHT_FD_FDSTAT_SET_FLAGS: Final = 1 << 3
RIGHT_FD_SYNC: Final = 1 << 4
RIGHT_FD_TELL: Final = 1 << 5
RIGHT_FD_WRITE: Final = 1 << 6
RIGHT_FD_ADVISE: Final = 1 << 7
RIGHT_FD_ALLOCATE: Final = 1 << 8
RIGHT_PATH_CREATE_DIRECTORY: Final = 1 << 9
RIGHT_PATH_CREATE_FILE: Final = 1 << 10
RIGHT_PATH_LINK_SOURCE: Final = 1 << 11
RIGHT_PATH_LINK_TARGET: Final = 1 << 12
RIGHT_PATH_OPEN: Final = 1 << 13
RIGHT_FD_READDIR: Final = 1 << 14
RIGHT_PATH_READLINK: Final = 1 << 15
RIGHT_PATH_RENAME_SOURCE: Final = 1 << 16
RIGHT_PATH_RENAME_TARGET: Final = 1 << 17
RIGHT_PATH_FILESTAT_GET: Final = 1 << 18
RIGHT_PATH_FILESTAT_SET_SIZE: Final = 1 << 19
RIGHT_PATH_FILESTAT_SET_TIMES: Final = 1 << 20
RIGHT_FD_FILESTAT_GET: Final = 1 << 21
RIGHT_FD_FILESTAT_SET_SIZE: Final = 1 << 22
RIGHT_FD_FILESTAT_SET_TIMES: Final = 1 << 23
RIGHT_PATH_SYMLINK: Final = 1 << 24
RIGHT_PATH_REMOVE_DIRECTORY: Final = 1 << 25
RIGHT_PATH_UNLINK_FILE: Final = 1 << 26
RIGHT_POLL_FD_READWRITE: Final = 1 << 27
RIGHT_SOCK_SHUTDOWN: Final = 1 << 28
RIGHT_SOCK_ACCEPT: Final = 1 << 29

#: Rights that allow changing file content or metadata.
RIGHTS_WRITE: Final = RIGHT_FD_WRITE | RIGHT_FD_ALLOCATE | RIGHT_FD_FILESTAT_SET_SIZE | RIGHT_FD_DATASYNC

#: Everything a regular file descriptor can do.
RIGHTS_FILE: Final = (
    RIGHT_FD_DATASYNC | RIGHT_FD_READ | RIGHT_FD_SEEK | RIGHT_FD_FDSTAT_SET_FLAGS | RIGHT_FD_SYNC
    | RIGHT_FD_TELL | RIGHT_FD_WRITE | RIGHT_FD_ADVISE | RIGHT_FD_ALLOCATE | RIGHT_FD_FILESTAT_GET
    | RIGHT_FD_FILESTAT_SET_SIZE | RIGHT_FD_FILESTAT_SET_TIMES | RIGHT_POLL_FD_READWRITE
)  # fmt: skip

#: Everything a directory descriptor can do (the link rights included: links are refused by the
#: filesystem with EPERM, not by a missing right, so a program sees the POSIX reason).
RIGHTS_DIR: Final = (
    RIGHT_FD_FDSTAT_SET_FLAGS | RIGHT_FD_SYNC | RIGHT_FD_ADVISE | RIGHT_PATH_CREATE_DIRECTORY
    | RIGHT_PATH_CREATE_FILE | RIGHT_PATH_LINK_SOURCE | RIGHT_PATH_LINK_TARGET | RIGHT_PATH_OPEN
    | RIGHT_FD_READDIR | RIGHT_PATH_READLINK | RIGHT_PATH_RENAME_SOURCE | RIGHT_PATH_RENAME_TARGET
    | RIGHT_PATH_FILESTAT_GET | RIGHT_PATH_FILESTAT_SET_SIZE | RIGHT_PATH_FILESTAT_SET_TIMES
    | RIGHT_FD_FILESTAT_GET | RIGHT_FD_FILESTAT_SET_TIMES | RIGHT_PATH_SYMLINK | RIGHT_PATH_REMOVE_DIRECTORY
    | RIGHT_PATH_UNLINK_FILE
)  # fmt: skip

#: What a directory may pass on to descriptors opened through it: directories and files.
RIGHTS_INHERITING: Final = RIGHTS_DIR | RIGHTS_FILE

#: Rights of stdin/stdout/stderr: a pipe (no seek, tell, size or times), whose flags may be set and which may be
#: synced and polled.
RIGHTS_STDIO: Final = (
    RIGHT_FD_READ | RIGHT_FD_WRITE | RIGHT_FD_FDSTAT_SET_FLAGS | RIGHT_FD_SYNC | RIGHT_FD_DATASYNC
    | RIGHT_FD_FILESTAT_GET | RIGHT_POLL_FD_READWRITE
)  # fmt: skip

# -- clocks, events ----------------------------------------------------------------

CLOCK_REALTIME: Final = 0
CLOCK_MONOTONIC: Final = 1
CLOCK_PROCESS_CPUTIME: Final = 2
CLOCK_THREAD_CPUTIME: Final = 3

EVENTTYPE_CLOCK: Final = 0
EVENTTYPE_FD_READ: Final = 1
EVENTTYPE_FD_WRITE: Final = 2
SUBCLOCKFLAGS_ABSTIME: Final = 1

PREOPENTYPE_DIR: Final = 0

# -- struct layouts (little-endian, natural alignment) ------------------------------

IOVEC: Final = struct.Struct("<II")  # buf, len
FDSTAT: Final = struct.Struct("<BxHxxxxQQ")  # filetype, flags, rights base, rights inheriting
FILESTAT: Final = struct.Struct("<QQBxxxxxxxQQQQQ")  # dev ino type nlink size atim mtim ctim
PRESTAT: Final = struct.Struct("<BxxxI")  # tag, name length
DIRENT: Final = struct.Struct("<QQIBxxx")  # next cookie, ino, name length, type
SUBSCRIPTION: Final = struct.Struct("<QB7xI4xQQH6x")  # userdata, tag, clock id|fd, timeout, precision, flags
EVENT: Final = struct.Struct("<QHB5xQH6x")  # userdata, error, type, nbytes, flags
U32: Final = struct.Struct("<I")
U64: Final = struct.Struct("<Q")
U32_PAIR: Final = struct.Struct("<II")

assert FDSTAT.size == 24 and FILESTAT.size == 64 and PRESTAT.size == 8 and DIRENT.size == 24
assert SUBSCRIPTION.size == 48 and EVENT.size == 32
