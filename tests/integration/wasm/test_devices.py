"""``/dev/null``, ``/dev/zero``, ``/dev/random`` and ``/dev/urandom`` on the Wasm tier (``backends/wasm/devices``).

What programs do with them works (silencing output through ``os.devnull``,
reading zeros or random bytes, SQLite's seeding, which the attempt report
no longer lists as refused), and what a hostile program tries fails: a
flood into ``/dev/null`` is charged to nothing and shown nowhere, an
endless read of ``/dev/zero`` ends at the memory limit, one read is
bounded on the host, and ``/dev`` cannot be changed, emptied or exported.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend, devices
from playground.core import Limits, MemoryLimitExceeded, Sandbox, Session, Spec
from playground.core.limits import MiB
from playground.packs import javascript, lua, python
from tests.integration.wasm.conftest import need_runtime, open_session

LIMITS = Limits(wall_time=30.0, cpu_time=30.0)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK, lua.PACK, javascript.PACK], default_limits=LIMITS) as s:
        need_runtime(s, "python")
        yield s


async def py(sb: Sandbox, code: str, **spec: object) -> tuple[int, str, str]:
    result = await sb.run(Spec(lang="python", code=code, **spec))  # type: ignore[arg-type]
    return result.exit_code, result.stdout.decode(), result.stderr.decode()


async def test_what_programs_do_with_devices_works(sb: Sandbox) -> None:
    code = """\
import contextlib, os, sqlite3, stat
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    print("hidden")
print(sorted(os.listdir("/")), sorted(os.listdir("/dev")))
print([stat.S_ISCHR(os.stat("/dev/" + name).st_mode) for name in ("null", "zero", "random", "urandom")])
with open("/dev/zero", "rb") as zero:
    print(zero.read(4))
with open("/dev/urandom", "rb") as a, open("/dev/random", "rb") as b:
    x, y = a.read(32), b.read(32)
    print(len(x), len(y), x != y, x != bytes(32))
with open("/dev/null", "rb") as null:
    print(null.read(), null.seek(10), null.tell())
fd = os.open("/dev/null", os.O_WRONLY | os.O_TRUNC | os.O_APPEND)
print(os.write(fd, b"gone"), os.isatty(fd))
print(sqlite3.connect(":memory:").execute("select 1").fetchone())
"""
    result = await sb.run(Spec(lang="python", code=code))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.decode().splitlines() == [
        "['dev', 'in', 'out', 'tmp', 'work'] ['null', 'random', 'urandom', 'zero']",
        "[True, True, True, True]",
        "b'\\x00\\x00\\x00\\x00'",
        "32 32 True True",
        "b'' 0 0",
        "4 False",
        "(1,)",
    ]
    assert result.attempts == ()  # SQLite's /dev/urandom, the devnull write: nothing refused, nothing to report
    assert result.files == {} and result.usage.fs_files == 5  # /dev is charged to nothing (/in /work /out /tmp)


async def test_a_flood_into_dev_null_is_charged_to_nothing_and_shown_nowhere(sb: Sandbox) -> None:
    code = "import os\nfd = os.open('/dev/null', os.O_WRONLY)\nfor _ in range(200):\n    os.write(fd, b'x' * 65536)\n"
    code += "print('done')"
    result = await sb.run(Spec(lang="python", code=code, limits=Limits(fs_quota=4096, max_output=1024)))
    assert (result.exit_code, result.stdout, result.stderr) == (0, b"done\n", b"")
    assert result.usage.fs_bytes == len(code.encode())  # the program's own file, no more


async def test_one_read_is_bounded_and_an_endless_read_ends_at_the_memory_limit(sb: Sandbox) -> None:
    code = "f = open('/dev/zero', 'rb', buffering=0)\nprint(len(f.read(64 << 20)), len(f.read(1)))"
    assert await py(sb, code) == (0, f"{devices.MAX_READ} 1\n", "")
    started = time.monotonic()
    with pytest.raises(MemoryLimitExceeded):
        await sb.run(Spec(lang="python", code="open('/dev/zero', 'rb').read()", limits=Limits(memory=64 * MiB)))
    assert time.monotonic() - started < 20


async def test_dev_cannot_be_changed_or_exported(sb: Sandbox) -> None:
    code = """\
import os
attempts = [
    lambda: os.remove("/dev/null"), lambda: os.rename("/dev/null", "/out/null"), lambda: os.rename("/dev", "/out/dev"),
    lambda: open("/dev/new", "w"), lambda: os.mkdir("/dev/sub"), lambda: os.rmdir("/dev"),
    lambda: os.symlink("/dev/zero", "/dev/link"), lambda: os.utime("/dev/null"), lambda: os.truncate("/dev/zero", 0),
]
for attempt in attempts:
    try:
        attempt()
        print("done")
    except OSError as exc:
        print(exc.errno)
print(sorted(os.listdir("/dev")))
"""
    status, out, err = await py(sb, code)
    lines = out.splitlines()
    assert status == 0 and "done" not in lines[:-1], (out, err)
    assert lines[-1] == "['null', 'random', 'urandom', 'zero']"
    result = await sb.run(Spec(lang="python", code="import shutil\nshutil.copy('/dev/null', '/out/copy')"))
    assert result.exit_code == 0 and result.files == {"copy": b""}  # a copy is a regular, empty file


async def test_lua_and_javascript_see_them_too(sb: Sandbox) -> None:
    need_runtime(sb, "lua")
    lua_code = (
        'local f = assert(io.open("/dev/null", "w")) f:write("x") f:close() print(#io.open("/dev/zero", "rb"):read(3))'
    )
    result = await sb.run(Spec(lang="lua", code=lua_code))
    assert (result.exit_code, result.stdout) == (0, b"3\n"), result.stderr


async def test_a_caller_root_has_no_dev(sb: Sandbox) -> None:
    """A caller's root is writable: a host-made /dev there could be moved into /out (as runtime mounts)."""
    status, out, _ = await py(sb, "import os\nprint(os.path.exists('/dev'))", root_files={"work/x": b""})
    assert (status, out) == (0, "False\n")


async def test_sessions_have_them(sb: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(sb, "python", open_sessions, limits=LIMITS)
    result = await session.eval("import os\nprint(open(os.devnull, 'w').write('x'), sorted(os.listdir('/dev')))")
    assert (result.exit_code, result.stdout) == (0, b"1 ['null', 'random', 'urandom', 'zero']\n"), result.stderr


async def test_the_hosts_devices_are_refused_and_reported(sb: Sandbox) -> None:
    """Only the four are there: /dev/mem, /dev/sda, /dev/tty are the host's, tried and recorded as such."""
    code = """\
import os
for path in ("/dev/mem", "/dev/sda", "/dev/tty", "/dev/../dev/kmsg"):
    try:
        open(path, "rb")
    except OSError as exc:
        print(exc.errno == 44)
print(os.path.exists("/dev/null"))
"""
    result = await sb.run(Spec(lang="python", code=code))
    assert (result.exit_code, result.stdout) == (0, b"True\nTrue\nTrue\nTrue\nTrue\n"), result.stderr
    tried = {(a.target, a.verdict) for a in result.attempts}
    expected = {(p, "refused: not in the sandbox") for p in ("/dev/mem", "/dev/sda", "/dev/tty", "/dev/kmsg")}
    assert tried == expected
