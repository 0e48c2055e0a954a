"""Issue #14: WASI preview1 rights, call by call (WAT guests over the real backend).

Each case opens ``/work`` (or ``/work/f.txt``) through the root preopen
with every right, or with every right but the one the call needs, makes
the call and exits with its errno: with the right it is not ENOTCAPABLE
(mostly success), without it it is. Then inheritance: a descriptor opened
through a directory gets at most that directory's inheriting rights, and
``fd_fdstat_set_rights`` only ever drops rights.
"""

from __future__ import annotations

import pytest

from playground.core import Sandbox, Spec

ENOTCAPABLE, EPERM, EISDIR, SUCCESS = 76, 63, 31, 0
ALL = (1 << 30) - 1
#: Rights bits (WASI preview1 ``rights``).
R = {
    "fd_datasync": 0, "fd_read": 1, "fd_seek": 2, "fd_fdstat_set_flags": 3, "fd_sync": 4, "fd_tell": 5,
    "fd_write": 6, "fd_advise": 7, "fd_allocate": 8, "path_create_directory": 9, "path_create_file": 10,
    "path_link_source": 11, "path_link_target": 12, "path_open": 13, "fd_readdir": 14, "path_readlink": 15,
    "path_rename_source": 16, "path_rename_target": 17, "path_filestat_get": 18, "path_filestat_set_size": 19,
    "path_filestat_set_times": 20, "fd_filestat_get": 21, "fd_filestat_set_size": 22,
    "fd_filestat_set_times": 23, "path_symlink": 24, "path_remove_directory": 25, "path_unlink_file": 26,
    "poll_fd_readwrite": 27,
}  # fmt: skip

W = '"wasi_snapshot_preview1"'
IMPORTS = f"""
  (import {W} "proc_exit" (func $exit (param i32)))
  (import {W} "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import {W} "path_symlink" (func $symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import {W} "path_create_directory" (func $mkdir (param i32 i32 i32) (result i32)))
  (import {W} "path_remove_directory" (func $rmdir (param i32 i32 i32) (result i32)))
  (import {W} "path_unlink_file" (func $unlink (param i32 i32 i32) (result i32)))
  (import {W} "path_rename" (func $rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import {W} "path_link" (func $link (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import {W} "path_readlink" (func $readlink (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import {W} "path_filestat_get" (func $pstat (param i32 i32 i32 i32 i32) (result i32)))
  (import {W} "path_filestat_set_times" (func $ptimes (param i32 i32 i32 i32 i64 i64 i32) (result i32)))
  (import {W} "fd_readdir" (func $readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import {W} "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import {W} "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import {W} "fd_pread" (func $pread (param i32 i32 i32 i64 i32) (result i32)))
  (import {W} "fd_pwrite" (func $pwrite (param i32 i32 i32 i64 i32) (result i32)))
  (import {W} "fd_seek" (func $seek (param i32 i64 i32 i32) (result i32)))
  (import {W} "fd_tell" (func $tell (param i32 i32) (result i32)))
  (import {W} "fd_sync" (func $sync (param i32) (result i32)))
  (import {W} "fd_datasync" (func $datasync (param i32) (result i32)))
  (import {W} "fd_advise" (func $advise (param i32 i64 i64 i32) (result i32)))
  (import {W} "fd_allocate" (func $allocate (param i32 i64 i64) (result i32)))
  (import {W} "fd_filestat_get" (func $fstat (param i32 i32) (result i32)))
  (import {W} "fd_filestat_set_size" (func $fsize (param i32 i64) (result i32)))
  (import {W} "fd_filestat_set_times" (func $ftimes (param i32 i64 i64 i32) (result i32)))
  (import {W} "fd_fdstat_get" (func $fdstat (param i32 i32) (result i32)))
  (import {W} "fd_fdstat_set_flags" (func $setflags (param i32 i32) (result i32)))
  (import {W} "fd_fdstat_set_rights" (func $setrights (param i32 i64 i64) (result i32)))
"""
#: Strings at fixed addresses: name -> (address, text).
STRINGS = {
    "work": (100, "work"), "f": (120, "f.txt"), "new": (160, "new.txt"),
    "g": (180, "g.txt"), "link": (200, "link"), "l2": (220, "l2"), "h": (240, "h"), "newdir": (260, "newdir"),
    "wf": (280, "work/f.txt"), "wlink": (300, "work/link"),
}  # fmt: skip
DATA = "\n".join(f'  (data (i32.const {addr}) "{text}")' for addr, text in STRINGS.values())
#: An iovec at 0: 8 bytes at 1000.
IOVEC = '  (data (i32.const 0) "\\e8\\03\\00\\00\\08\\00\\00\\00")'


def s(name: str) -> str:
    """``(i32.const addr) (i32.const len)`` of a string."""
    addr, text = STRINGS[name]
    return f"(i32.const {addr}) (i32.const {len(text)})"


def module(body: str, *, dir_rights: int = ALL, dir_inheriting: int = ALL, file_rights: int = ALL) -> str:
    """Open /work as $d and /work/f.txt as $f with the given rights, then exit with ``body``'s errno."""
    dir_base = dir_rights & ~(1 << R["fd_write"])  # a directory asked for FD_WRITE is EISDIR
    return f"""(module {IMPORTS}
  (memory (export "memory") 1)
{DATA}
{IOVEC}
  (func (export "_start") (local $d i32) (local $f i32) (local $e i32)
    (drop (call $symlink {s("f")} (i32.const 3) {s("wlink")}))
    (local.set $e (call $open (i32.const 3) (i32.const 0) {s("work")} (i32.const 2)
                              (i64.const {dir_base}) (i64.const {dir_inheriting}) (i32.const 0) (i32.const 500)))
    (if (local.get $e) (then (call $exit (i32.add (i32.const 200) (local.get $e)))))
    (local.set $d (i32.load (i32.const 500)))
    (local.set $e (call $open (i32.const 3) (i32.const 0) {s("wf")} (i32.const 0)
                              (i64.const {file_rights}) (i64.const 0) (i32.const 0) (i32.const 500)))
    (if (local.get $e) (then (call $exit (i32.add (i32.const 300) (local.get $e)))))
    (local.set $f (i32.load (i32.const 500)))
    (call $exit {body})))"""


#: (call, the right it needs, what it returns with every right).
PATH_CALLS = [
    (f"(call $mkdir (local.get $d) {s('newdir')})", "path_create_directory", SUCCESS),
    (f"(call $open (local.get $d) (i32.const 0) {s('f')} (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0)"
     " (i32.const 504))", "path_open", SUCCESS),
    (f"(call $open (local.get $d) (i32.const 0) {s('new')} (i32.const 1) (i64.const 2) (i64.const 0) (i32.const 0)"
     " (i32.const 504))", "path_create_file", SUCCESS),
    (f"(call $open (local.get $d) (i32.const 0) {s('f')} (i32.const 8) (i64.const 64) (i64.const 0) (i32.const 0)"
     " (i32.const 504))", "path_filestat_set_size", SUCCESS),
    (f"(call $pstat (local.get $d) (i32.const 0) {s('f')} (i32.const 600))", "path_filestat_get", SUCCESS),
    (f"(call $ptimes (local.get $d) (i32.const 0) {s('f')} (i64.const 0) (i64.const 0) (i32.const 2))",
     "path_filestat_set_times", SUCCESS),
    (f"(call $readlink (local.get $d) {s('link')} (i32.const 600) (i32.const 64) (i32.const 700))",
     "path_readlink", SUCCESS),
    (f"(block (result i32) (drop (call $mkdir (local.get $d) {s('newdir')}))"
     f" (call $rmdir (local.get $d) {s('newdir')}))",
     "path_remove_directory", SUCCESS),
    (f"(call $rename (local.get $d) {s('f')} (local.get $d) {s('g')})", "path_rename_source", SUCCESS),
    (f"(call $rename (local.get $d) {s('f')} (local.get $d) {s('g')})", "path_rename_target", SUCCESS),
    (f"(call $symlink {s('f')} (local.get $d) {s('l2')})", "path_symlink", SUCCESS),
    (f"(call $unlink (local.get $d) {s('f')})", "path_unlink_file", SUCCESS),
    (f"(call $link (local.get $d) (i32.const 0) {s('f')} (local.get $d) {s('h')})", "path_link_source", EPERM),
    (f"(call $link (local.get $d) (i32.const 0) {s('f')} (local.get $d) {s('h')})", "path_link_target", EPERM),
    ("(call $readdir (local.get $d) (i32.const 600) (i32.const 64) (i64.const 0) (i32.const 700))",
     "fd_readdir", SUCCESS),
]  # fmt: skip

FILE_CALLS = [
    ("(call $read (local.get $f) (i32.const 0) (i32.const 1) (i32.const 700))", "fd_read"),
    ("(call $write (local.get $f) (i32.const 0) (i32.const 1) (i32.const 700))", "fd_write"),
    ("(call $pread (local.get $f) (i32.const 0) (i32.const 1) (i64.const 0) (i32.const 700))", "fd_read"),
    ("(call $pread (local.get $f) (i32.const 0) (i32.const 1) (i64.const 0) (i32.const 700))", "fd_seek"),
    ("(call $pwrite (local.get $f) (i32.const 0) (i32.const 1) (i64.const 0) (i32.const 700))", "fd_write"),
    ("(call $seek (local.get $f) (i64.const 1) (i32.const 0) (i32.const 700))", "fd_seek"),
    ("(call $tell (local.get $f) (i32.const 700))", "fd_tell"),
    ("(call $sync (local.get $f))", "fd_sync"),
    ("(call $datasync (local.get $f))", "fd_datasync"),
    ("(call $advise (local.get $f) (i64.const 0) (i64.const 1) (i32.const 0))", "fd_advise"),
    ("(call $allocate (local.get $f) (i64.const 0) (i64.const 16))", "fd_allocate"),
    ("(call $fstat (local.get $f) (i32.const 600))", "fd_filestat_get"),
    ("(call $fsize (local.get $f) (i64.const 3))", "fd_filestat_set_size"),
    ("(call $ftimes (local.get $f) (i64.const 0) (i64.const 0) (i32.const 2))", "fd_filestat_set_times"),
    ("(call $setflags (local.get $f) (i32.const 1))", "fd_fdstat_set_flags"),
]

FILES = {"f.txt": b"0123456789"}


async def exit_code(sandbox: Sandbox, wat: str) -> int:
    result = await sandbox.run(Spec(lang="wasm", code=wat, work_files=FILES))
    assert result.exit_code < 200, f"setup failed: {result.exit_code} {result.stderr!r}"
    return result.exit_code


@pytest.mark.parametrize(("call", "right", "expected"), PATH_CALLS, ids=[f"{r}" for _, r, _ in PATH_CALLS])
async def test_each_path_call_needs_its_right(sandbox: Sandbox, call: str, right: str, expected: int) -> None:
    with_right = await exit_code(sandbox, module(call))
    without = await exit_code(sandbox, module(call, dir_rights=ALL & ~(1 << R[right])))
    assert (with_right, without) == (expected, ENOTCAPABLE)


@pytest.mark.parametrize(("call", "right"), FILE_CALLS, ids=[f"{r}-{c.split()[1]}" for c, r in FILE_CALLS])
async def test_each_fd_call_needs_its_right(sandbox: Sandbox, call: str, right: str) -> None:
    dropped = 1 << R[right]
    if right == "fd_tell":
        dropped |= 1 << R["fd_seek"]  # FD_SEEK implies FD_TELL (the witx text)
    with_right = await exit_code(sandbox, module(call))
    without = await exit_code(sandbox, module(call, file_rights=ALL & ~dropped))
    assert (with_right, without) == (SUCCESS, ENOTCAPABLE)


async def test_tell_needs_tell_or_seek(sandbox: Sandbox) -> None:
    tell = "(call $tell (local.get $f) (i32.const 700))"
    assert await exit_code(sandbox, module(tell, file_rights=1 << R["fd_seek"])) == SUCCESS
    assert await exit_code(sandbox, module(tell, file_rights=1 << R["fd_tell"])) == SUCCESS
    assert await exit_code(sandbox, module(tell, file_rights=1 << R["fd_read"])) == ENOTCAPABLE


async def test_new_descriptors_get_at_most_the_directory_inheriting_rights(sandbox: Sandbox) -> None:
    no_write = ALL & ~(1 << R["fd_write"])
    # f.txt opened through $d, asking for every right: the write right is not inherited.
    body = (f"(block (result i32) (drop (call $open (local.get $d) (i32.const 0) {s('f')} (i32.const 0)"
            " (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 504)))"
            " (call $write (i32.load (i32.const 504)) (i32.const 0) (i32.const 1) (i32.const 700)))")  # fmt: skip
    assert await exit_code(sandbox, module(body, dir_inheriting=no_write)) == ENOTCAPABLE
    assert await exit_code(sandbox, module(body)) == SUCCESS
    # The rights fdstat reports are the masked ones (base at 608 in the fdstat at 600).
    stat = (f"(block (result i32) (drop (call $open (local.get $d) (i32.const 0) {s('f')} (i32.const 0)"
            " (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 504)))"
            " (drop (call $fdstat (i32.load (i32.const 504)) (i32.const 600)))"
            f" (i32.wrap_i64 (i64.and (i64.load (i32.const 608)) (i64.const {1 << R['fd_write']}))))")  # fmt: skip
    assert await exit_code(sandbox, module(stat, dir_inheriting=no_write)) == 0
    assert await exit_code(sandbox, module(stat)) == 1 << R["fd_write"]


async def test_opened_directories_get_only_what_they_ask_and_inherit(sandbox: Sandbox) -> None:
    # /work opened without PATH_CREATE_FILE cannot create, even though the root could.
    create = (f"(call $open (local.get $d) (i32.const 0) {s('new')} (i32.const 1) (i64.const 0) (i64.const 0)"
              " (i32.const 0) (i32.const 504))")  # fmt: skip
    assert await exit_code(sandbox, module(create, dir_rights=1 << R["path_open"])) == ENOTCAPABLE
    # A directory asked for FD_WRITE is EISDIR, as preview1 hosts answer.
    opendir = (f"(call $open (i32.const 3) (i32.const 0) {s('work')} (i32.const 2) (i64.const 64) (i64.const 0)"
               " (i32.const 0) (i32.const 504))")  # fmt: skip
    assert await exit_code(sandbox, module(opendir)) == EISDIR


async def test_rights_can_only_be_dropped(sandbox: Sandbox) -> None:
    read_only = 1 << R["fd_read"]
    drop = f"(call $setrights (local.get $f) (i64.const {read_only}) (i64.const 0))"
    regain = (f"(block (result i32) (drop {drop})"
              f" (call $setrights (local.get $f) (i64.const {read_only | 1 << R['fd_write']}) (i64.const 0)))")
    assert await exit_code(sandbox, module(drop)) == SUCCESS
    assert await exit_code(sandbox, module(regain)) == ENOTCAPABLE
    write_after = (f"(block (result i32) (drop {drop})"
                   " (call $write (local.get $f) (i32.const 0) (i32.const 1) (i32.const 700)))")
    assert await exit_code(sandbox, module(write_after)) == ENOTCAPABLE
    # stdio too: stdout can drop FD_WRITE and then cannot write.
    stdout = ("(block (result i32) (drop (call $setrights (i32.const 1) (i64.const 0) (i64.const 0)))"
              " (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 700)))")
    assert await exit_code(sandbox, module(stdout)) == ENOTCAPABLE
