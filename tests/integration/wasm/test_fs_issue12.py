"""Issue #12 through real guests: the filesystem quota cannot be bypassed, and deep trees never crash the host.

Hand-written WAT guests call WASI directly (no runtime needed); the CPython
guests and the REPL session use the runtime in the user cache (skipped
without it, failed under CI=true). See also ``tests/unit/test_vfs_lifetime.py``
and ``tests/unit/test_vfs_depth.py``.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from playground.core import FSQuotaExceeded, Limits, Result, Sandbox, Session, Spec
from playground.core.limits import MiB
from playground.core.vfs import BASE_DIRS, MAX_DEPTH
from playground.packs import python
from tests.integration.wasm.conftest import WASM_PACK, need_runtime, open_session

REPO = Path(__file__).resolve().parents[3]
#: The default limits (16 MiB quota, 256 files) with room in time only, so a slow machine does not time out.
DEFAULT_BUT_TIME = Limits(wall_time=60.0, cpu_time=60.0)
QUOTA = 16 * MiB
EDQUOT, ENAMETOOLONG = 19, 37  # WASI errno values

WASI = '"wasi_snapshot_preview1"'
IMPORTS = f"""
  (import {WASI} "proc_exit" (func $exit (param i32)))
  (import {WASI} "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import {WASI} "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import {WASI} "fd_pwrite" (func $pwrite (param i32 i32 i32 i64 i32) (result i32)))
  (import {WASI} "fd_filestat_set_size" (func $setsize (param i32 i64) (result i32)))
  (import {WASI} "fd_allocate" (func $allocate (param i32 i64 i64) (result i32)))
  (import {WASI} "fd_close" (func $close (param i32) (result i32)))
  (import {WASI} "path_unlink_file" (func $unlink (param i32 i32 i32) (result i32)))
  (import {WASI} "path_create_directory" (func $mkdir (param i32 i32 i32) (result i32)))
  ;; 4 bytes (little-endian) of $v to stdout
  (func $emit (param $v i32)
    (i32.store (i32.const 200) (local.get $v))
    (i32.store (i32.const 0) (i32.const 200))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
"""

#: The attack of issue #12 in WASI calls: 4 MiB into /work/t, unlink it while open, ftruncate(0) through the
#: descriptor, close, then 4 MiB into /out/o<letter>; 24 rounds. Prints the rounds that stored a file and the
#: errno that stopped it (0: none did). Paths are relative to the root preopen (fd 3, issue #14).
UNLINK_ATTACK_WAT = f"""(module {IMPORTS}
  (memory (export "memory") 66)
  (data (i32.const 16) "work/t")
  (data (i32.const 32) "out/oA")
  ;; open dir/path with O_CREAT|O_TRUNC and write 4 MiB: the fd, or -errno
  (func $put (param $dir i32) (param $path i32) (param $len i32) (result i32)
    (local $err i32) (local $fd i32)
    (local.set $err (call $open (local.get $dir) (i32.const 0) (local.get $path) (local.get $len) (i32.const 9)
                              (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 12)))
    (if (local.get $err) (then (return (i32.sub (i32.const 0) (local.get $err)))))
    (local.set $fd (i32.load (i32.const 12)))
    (i32.store (i32.const 0) (i32.const 65536))
    (i32.store (i32.const 4) (i32.const 4194304))
    (local.set $err (call $write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))
    (if (local.get $err) (then (return (i32.sub (i32.const 0) (local.get $err)))))
    (local.get $fd))
  (func (export "_start")
    (local $i i32) (local $fd i32)
    (block $done
      (loop $round
        (local.set $fd (call $put (i32.const 3) (i32.const 16) (i32.const 6)))
        (br_if $done (i32.lt_s (local.get $fd) (i32.const 0)))
        (drop (call $unlink (i32.const 3) (i32.const 16) (i32.const 6)))
        (drop (call $setsize (local.get $fd) (i64.const 0)))
        (drop (call $close (local.get $fd)))
        (i32.store8 (i32.const 37) (i32.add (i32.const 65) (local.get $i)))
        (local.set $fd (call $put (i32.const 3) (i32.const 32) (i32.const 6)))
        (br_if $done (i32.lt_s (local.get $fd) (i32.const 0)))
        (drop (call $close (local.get $fd)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $round (i32.lt_u (local.get $i) (i32.const 24)))))
    (call $emit (local.get $i))
    (call $emit (if (result i32) (i32.lt_s (local.get $fd) (i32.const 0))
                  (then (i32.sub (i32.const 0) (local.get $fd))) (else (i32.const 0))))
    (call $exit (i32.const 0))))"""

#: Grow /out/s to 1 GiB by pwrite, by ftruncate and by fallocate; prints the three errnos.
SPARSE_WAT = f"""(module {IMPORTS}
  (memory (export "memory") 1)
  (data (i32.const 16) "out/s")
  (data (i32.const 100) "x")
  (func (export "_start")
    (local $fd i32)
    (drop (call $open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 5) (i32.const 9)
                      (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 12)))
    (local.set $fd (i32.load (i32.const 12)))
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 1))
    (call $emit (call $pwrite (local.get $fd) (i32.const 0) (i32.const 1) (i64.const 1073741824) (i32.const 8)))
    (call $emit (call $setsize (local.get $fd) (i64.const 1073741824)))
    (call $emit (call $allocate (local.get $fd) (i64.const 0) (i64.const 1073741824)))
    (call $exit (i32.const 0))))"""

#: Dig /out/d/d/d/... one directory descriptor at a time (no path ever longer than "d"), until refused;
#: prints the depth reached below /out and the errno. Each directory is opened with every right it may pass
#: on but FD_WRITE (rights are enforced since issue #14; a directory asked for FD_WRITE is EISDIR).
DIG_WAT = f"""(module {IMPORTS}
  (memory (export "memory") 1)
  (data (i32.const 16) "d")
  (data (i32.const 20) "out")
  (func (export "_start")
    (local $dir i32) (local $depth i32) (local $err i32)
    (drop (call $open (i32.const 3) (i32.const 0) (i32.const 20) (i32.const 3) (i32.const 2)
                      (i64.const -65) (i64.const -1) (i32.const 0) (i32.const 12)))
    (local.set $dir (i32.load (i32.const 12)))
    (block $done
      (loop $down
        (local.set $err (call $mkdir (local.get $dir) (i32.const 16) (i32.const 1)))
        (br_if $done (local.get $err))
        (local.set $err (call $open (local.get $dir) (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 2)
                                  (i64.const -65) (i64.const -1) (i32.const 0) (i32.const 12)))
        (br_if $done (local.get $err))
        (drop (call $close (local.get $dir)))
        (local.set $dir (i32.load (i32.const 12)))
        (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
        (br $down)))
    (call $emit (local.get $depth))
    (call $emit (local.get $err))
    (call $exit (i32.const 0))))"""

#: The attack of issue #12 as a Python program (what the hostile suite ran).
PY_UNLINK_ATTACK = """
import os
junk = b"x" * (4 << 20)
stored = 0
for i in range(24):
    with open("/work/t", "wb") as f:
        try:
            f.write(junk)
            f.flush()
        except OSError as e:
            print("refused", e.errno)
            break
        os.unlink("/work/t")
        f.truncate(0)
    try:
        with open(f"/out/o{i}", "wb") as g:
            g.write(junk)
    except OSError as e:
        print("refused", e.errno)
        break
    stored += 1
print("stored", stored)
"""

#: The same through rename: the open file loses its name to a rename over it, then is truncated through the fd.
PY_RENAME_ATTACK = """
import os
junk = b"x" * (4 << 20)
stored = 0
for i in range(24):
    try:
        f = open("/work/victim", "wb")
        f.write(junk)
        f.flush()
        open("/work/small", "wb").close()
        os.rename("/work/small", "/work/victim")
        f.truncate(0)
        f.close()
        os.unlink("/work/victim")
        with open(f"/out/o{i}", "wb") as g:
            g.write(junk)
    except OSError as e:
        print("refused", e.errno)
        break
    stored += 1
print("stored", stored)
"""

#: Dig under /out with chdir (relative paths) until refused, then leave a file one level up.
PY_DIG = """
import errno, os
os.chdir("/out")
depth = 0
try:
    while True:
        os.mkdir("d")
        os.chdir("d")
        depth += 1
except OSError as e:
    print(depth, errno.errorcode.get(e.errno))
os.chdir("..")
with open("leaf.txt", "w") as f:
    f.write("leaf")
"""


@pytest.fixture(scope="module")
def real() -> Sandbox:
    """The user's cache (where install.py puts runtimes), with the ``wasm`` pack for WAT guests."""
    return Sandbox(backends=[WasmBackend()], packs=[python.PACK, WASM_PACK])


def words(result: Result) -> tuple[int, ...]:
    return struct.unpack(f"<{len(result.stdout) // 4}i", result.stdout)


def out_bytes(result: Result) -> int:
    return sum(len(data) for data in result.files.values())


async def quota_run(sb: Sandbox, spec: Spec) -> Result:
    with pytest.raises(FSQuotaExceeded) as info:
        await sb.run(spec)
    result = info.value.result
    assert result is not None
    assert out_bytes(result) <= QUOTA and 0 <= result.usage.fs_bytes <= QUOTA
    return result


# -- item 1: the quota --------------------------------------------------------------------


async def test_wat_unlink_then_ftruncate_attack_stores_no_more_than_the_quota(real: Sandbox) -> None:
    result = await quota_run(real, Spec(lang="wasm", code=UNLINK_ATTACK_WAT, limits=DEFAULT_BUT_TIME))
    # 4 rounds fill /out to exactly 16 MiB; the fifth cannot even put 4 MiB in /work/t.
    assert words(result) == (4, EDQUOT)
    assert out_bytes(result) == QUOTA


@pytest.mark.parametrize("attack", [PY_UNLINK_ATTACK, PY_RENAME_ATTACK], ids=["unlink", "rename"])
async def test_python_quota_attack_stores_no_more_than_the_quota(real: Sandbox, attack: str) -> None:
    need_runtime(real, "python")
    result = await quota_run(real, Spec(lang="python", code=attack, limits=DEFAULT_BUT_TIME))
    # The program itself sits in /work, so 12 MiB in /out plus 4 MiB in /work/t no longer fit in round 4.
    assert result.stdout.decode().splitlines() == ["refused 19", "stored 3"], result.stderr


async def test_sparse_growth_to_1_gib_is_refused_before_allocating(real: Sandbox) -> None:
    result = await quota_run(real, Spec(lang="wasm", code=SPARSE_WAT, limits=DEFAULT_BUT_TIME))
    assert words(result) == (EDQUOT, EDQUOT, EDQUOT)
    assert dict(result.files) == {"s": b""} and result.usage.fs_bytes == 0


async def test_session_an_unlinked_file_kept_open_across_evals_still_counts(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    session = await open_session(real, "python", open_sessions, limits=DEFAULT_BUT_TIME)
    hold = await session.eval("import os\nf = open('/work/t', 'wb')\nf.write(b'x' * (12 << 20))\nf.flush()\n"
                              "os.unlink('/work/t')\nprint(os.listdir('/work'))")  # fmt: skip
    assert hold.stdout == b"[]\n" and hold.usage.fs_bytes == 12 * MiB
    shrink = await session.eval("f.truncate(0)\nprint(f.tell())")
    assert shrink.usage.fs_bytes == 0
    grow = await session.eval("f.seek(0)\nf.write(b'y' * (10 << 20))\nf.flush()\nprint('grown')")
    assert grow.stdout == b"grown\n" and grow.usage.fs_bytes == 10 * MiB
    with pytest.raises(FSQuotaExceeded) as info:
        await session.eval("open('/out/a', 'wb').write(b'z' * (8 << 20))")
    result = info.value.result  # 10 MiB held by the nameless file + 8 MiB > 16 MiB
    assert result is not None and out_bytes(result) == 0
    assert b"[Errno 19]" in result.stderr


# -- item 3: deep trees ----------------------------------------------------------------------


async def test_wat_digging_under_out_stops_at_the_depth_limit(real: Sandbox) -> None:
    result = await real.run(Spec(lang="wasm", code=DIG_WAT, limits=Limits(max_files=5000)))
    assert words(result) == (MAX_DEPTH - 1, ENAMETOOLONG)  # /out is depth 1
    assert result.files == {} and result.usage.fs_files == len(BASE_DIRS) + MAX_DEPTH - 1


async def test_python_digging_under_out_completes_and_collects(real: Sandbox) -> None:
    need_runtime(real, "python")
    result = await real.run(Spec(lang="python", code=PY_DIG, limits=Limits(max_files=5000)))
    assert result.stdout == f"{MAX_DEPTH - 1} ENAMETOOLONG\n".encode(), result.stderr
    assert dict(result.files) == {"d/" * (MAX_DEPTH - 2) + "leaf.txt": b"leaf"}


def test_cli_out_after_a_deep_dig_writes_without_a_traceback(real: Sandbox, tmp_path: Path) -> None:
    need_runtime(real, "python")
    out_dir = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "playground.cli", "run", "-l", "python", "-e", PY_DIG, "--max-files", "5000",
         "--out", str(out_dir)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (out_dir / ("d/" * (MAX_DEPTH - 2) + "leaf.txt")).read_text() == "leaf"
