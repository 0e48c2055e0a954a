"""Python REPL sessions from the session snapshot (``WasmSpec.session_snapshot``), on the real runtime.

Each session, and each ``Session.reset()``, is a fresh instance over a
copy-on-write mapping of the image: nothing of one session reaches the next
or its own reset; its environment, randomness, clock, limits (memory
counting the image), Ctrl-C and keyboard are its own; sessions the snapshot
cannot serve start cold.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from backends.wasm import WasmBackend, session
from backends.wasm.channel import SESSION_DIR
from playground.core import InputStream, Limits, MemoryLimitExceeded, Sandbox, Session, SessionConfig, SessionKilled
from playground.core.limits import MiB
from playground.packs import python
from tests.integration.wasm.conftest import require_runtime

#: Echoes whether the session runs from the snapshot: ``dataclasses`` is preloaded there; the cold driver
#: never imports it.
FROM_SNAPSHOT = "'snapshot' if 'dataclasses' in __import__('sys').modules else 'cold'"

#: Leaves something behind in every place a session's state can hide: a global, a module attribute, a
#: monkeypatched builtin, an environment variable, files in /work and /tmp, a fake module, the seed.
LEAVE = """\
import builtins, json, os, sys, typing, random
LEAK = 1
typing.List = None
typing.LEAK = 2
json.dumps = None
builtins.abs = lambda x: 42
builtins.leak = 4
os.environ["LEAKENV"] = "3"
open("/work/leak.txt", "w").write("x")
open("/tmp/leak.txt", "w").write("x")
sys.modules["leakmod"] = 5
random.seed(42)
"""
#: What a session sees of ``LEAVE``'s traces.
SEEN = """\
import builtins, json, os, sys, typing
("LEAK" in globals(), typing.List is None, getattr(typing, "LEAK", None), json.dumps is None, abs(-2),
 getattr(builtins, "leak", None), os.environ.get("LEAKENV"), os.path.exists("/work/leak.txt"),
 os.path.exists("/tmp/leak.txt"), "leakmod" in sys.modules, hasattr(sys, "_playground_run"))
"""
CLEAN = "(False, False, None, False, 2, None, None, False, False, False, False)\n"


@pytest.fixture(scope="module")
def backend() -> WasmBackend:
    backend = WasmBackend()  # the user's cache: the runtime, its compiled code and the snapshots
    require_runtime(backend, python.PACK)
    snap = session.session_snapshot(python.PACK)
    assert snap is not None
    got = backend.snapshots.image(python.PACK, None, snap, preopens=(SESSION_DIR,))
    assert got is not None, backend.snapshots.failure(python.PACK.wasm, snap, (SESSION_DIR,))  # type: ignore[arg-type]
    return backend


class Sessions:
    """Opens sessions on one sandbox and closes them after the test."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.opened: list[Session] = []

    async def open(self, **config: object) -> Session:
        s = await self.sandbox.new_session("python", SessionConfig(**config))  # type: ignore[arg-type]
        self.opened.append(s)
        return s


@pytest.fixture
async def sb(backend: WasmBackend) -> AsyncIterator[Sessions]:
    sessions = Sessions(Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=20.0)))
    yield sessions
    for s in sessions.opened:
        s.close()


async def _echo(s: Session, code: str) -> str:
    result = await s.eval(code)
    assert result.exit_code == 0, result.stderr
    return result.stdout.decode()


async def test_a_session_starts_from_the_snapshot(sb: Sessions, backend: WasmBackend) -> None:
    s = await sb.open()
    assert await _echo(s, FROM_SNAPSHOT) == "'snapshot'\n"
    assert await _echo(s, "x = 41\nx + 1") == "42\n"
    assert await _echo(s, "import gc\ngc.get_freeze_count() > 5000") == "True\n"  # python_snapshot._FREEZE
    assert backend.missing(python.PACK) == []
    (line,) = [d for d in WasmBackend(packs=[python.PACK]).diagnostics() if d.name == "python session snapshot"]
    assert line.ok and line.detail.startswith("ready"), line


async def test_reset_leaves_nothing_behind(sb: Sessions) -> None:
    s = await sb.open()
    assert await _echo(s, SEEN) == CLEAN
    await _echo(s, LEAVE)
    assert await _echo(s, SEEN) == "(True, True, 2, True, 42, 4, '3', True, True, True, False)\n"  # it did stay
    for _ in range(2):
        await s.reset()
        assert await _echo(s, SEEN) == CLEAN
        assert await _echo(s, FROM_SNAPSHOT) == "'snapshot'\n"
        await _echo(s, LEAVE)


async def test_sessions_side_by_side_share_nothing(sb: Sessions) -> None:
    sessions = await asyncio.gather(*(sb.open() for _ in range(4)))
    await asyncio.gather(*(_echo(s, LEAVE) for s in sessions[:2]))
    seen = await asyncio.gather(*(_echo(s, SEEN) for s in sessions[2:]))
    assert seen == [CLEAN, CLEAN]
    fresh = await sb.open()
    assert await _echo(fresh, SEEN) == CLEAN


async def test_each_session_has_its_own_randomness_env_and_clock(sb: Sessions) -> None:
    draw = "import random, os\n(random.random(), os.urandom(8).hex())"
    a = await sb.open(env={"WHO": "a"})
    b = await sb.open(env={"WHO": "b"})
    assert await _echo(a, draw) != await _echo(b, draw)
    env = "{'HOME': '/home/user', 'USER': 'user', 'LOGNAME': 'user', 'WHO': 'a'}\n"
    assert await _echo(a, "import os\ndict(os.environ)") == env
    assert await _echo(b, "os.environ['WHO'], os.getcwd(), __name__") == "('b', '/work', '__main__')\n"
    seconds = float(await _echo(a, "import time\ntime.process_time()"))
    assert 0 <= seconds < 0.5, seconds  # counted from the session's start, not the capture's
    busy = "c, w = time.process_time(), time.perf_counter()\nwhile time.perf_counter() - w < 0.2: pass\n"
    spent = float(await _echo(a, busy + "time.process_time() - c"))
    assert 0.05 < spent < 5, spent


async def test_memory_limit_covers_the_snapshot(sb: Sessions) -> None:
    with pytest.raises(MemoryLimitExceeded) as below:
        await sb.open(limits=Limits(memory=8 * MiB))
    message = str(below.value)
    assert "the python session snapshot starts with" in message and "raise the memory limit" in message, message
    s = await sb.open(limits=Limits(memory=64 * MiB))
    result = await s.eval("x = bytearray(20 * 2**20)\nprint('ok')")
    assert result.stdout == b"ok\n" and result.usage.peak_memory > 20 * MiB
    with pytest.raises(MemoryLimitExceeded):
        await s.eval("y = bytearray(200 * 2**20)")
    with pytest.raises(SessionKilled):
        await s.eval("1")


async def test_ctrl_c_and_the_keyboard_work_from_the_snapshot(sb: Sessions) -> None:
    s = await sb.open()
    await _echo(s, "x = 7")
    spin = asyncio.ensure_future(s.eval("while True: pass"))
    await asyncio.sleep(0.3)
    assert s.interrupt()
    result = await asyncio.wait_for(spin, 10)
    assert result.interrupted and b"KeyboardInterrupt" in result.stderr, result
    assert await _echo(s, "x") == "7\n"
    keyboard = InputStream()
    keyboard.write(b"Ada\n")
    keyboard.close()
    result = await s.eval("name = input('who? ')\nprint('hi', name)", input=keyboard)
    assert result.stdout == b"who? hi Ada\n", result


async def test_start_up_variables_start_cold(sb: Sessions) -> None:
    s = await sb.open(env={"PYTHONHASHSEED": "0"})
    assert await _echo(s, FROM_SNAPSHOT) == "'cold'\n"
    assert await _echo(s, "hash('abc') == hash('abc'), __import__('os').environ['PYTHONHASHSEED']") == "(True, '0')\n"


async def test_attempts_are_reported_per_eval_from_the_snapshot(sb: Sessions) -> None:
    s = await sb.open()
    tried = await s.eval("import os\ntry:\n    os.system('id')\nexcept OSError as e:\n    print(e)")
    assert b"blocked by the sandbox" in tried.stdout, tried
    assert [(a.kind.value, a.target) for a in tried.attempts] == [("process_spawn", "id")]
    assert (await s.eval("1 + 1")).attempts == ()
    await s.reset()
    assert [a.target for a in (await s.eval("import os\nos.environ.get('SECRET'), os.environ['SECRET']")).attempts] == [
        "SECRET"
    ]
