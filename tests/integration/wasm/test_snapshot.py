"""Python one-shot runs from the snapshot of a started CPython (``backends/wasm/snapshot``), on the real runtime.

Each run is a fresh instance over a copy-on-write mapping of the image:
nothing of one run reaches the next; args, environment, stdin, files, exit
codes, tracebacks and limits are the run's own; runs that the snapshot
cannot serve start cold; a corrupt snapshot file is captured again.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.wasm import ArtifactMismatch, WasmBackend
from backends.wasm.artifacts import ArtifactStore, cache_root
from backends.wasm.backend import MAX_STARTS
from backends.wasm.snapshot import MAX_PAYLOAD
from playground.core import (
    CPUTimeLimitExceeded,
    FSQuotaExceeded,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Sandbox,
    Spec,
    TimeLimitExceeded,
)
from playground.core.limits import MiB
from playground.packs import python
from playground.packs.python_boot import LIGHT_ARGS
from tests.integration.wasm.conftest import require_runtime

#: Printed by a program: True when it runs from the snapshot (``dataclasses`` is preloaded there, not in a cold start).
FROM_SNAPSHOT = "import sys\nprint('snapshot' if 'dataclasses' in sys.modules else 'cold')\n"


@pytest.fixture(scope="module")
def real() -> Iterator[Sandbox]:
    backend = WasmBackend()  # the user's cache: the runtime, its compiled code and the snapshot
    require_runtime(backend, python.PACK)
    assert backend.snapshots.image(python.PACK, None) is not None, backend.snapshots.failure(python.PACK.wasm)  # type: ignore[arg-type]
    with Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=20.0)) as sb:
        yield sb


async def _run(sb: Sandbox, code: str, **kw: object) -> tuple[int, str, str]:
    result = await sb.run(Spec(lang="python", code=code, **kw))  # type: ignore[arg-type]
    return result.exit_code, result.stdout.decode(), result.stderr.decode()


async def test_a_run_starts_from_the_snapshot(real: Sandbox) -> None:
    assert await _run(real, FROM_SNAPSHOT) == (0, "snapshot\n", "")
    assert real.backends["wasm"].missing(python.PACK) == []  # type: ignore[attr-defined]


ISOLATION = """\
import builtins, os, sys, typing, json
print("seen", "LEAK" in globals(), getattr(typing, "LEAK", None), os.environ.get("LEAKENV"),
      getattr(builtins, "leak", None), os.path.exists("/work/leak.txt"), os.path.exists("/tmp/leak.txt"),
      sys.modules.get("leakmod"), typing.List is None, json.dumps is None,
      hasattr(sys, "_playground_run") or hasattr(sys, "_playground_preloaded"))
LEAK = 1
typing.LEAK = 2
os.environ["LEAKENV"] = "3"
builtins.leak = 4
typing.List = None
json.dumps = None
open("/work/leak.txt", "w").write("x")
open("/tmp/leak.txt", "w").write("x")
sys.modules["leakmod"] = 5
import random
random.seed(42)
"""


#: The same from the plain snapshot: it imports nothing of ``python_snapshot.STDLIB_FOR`` (ISOLATION's json and
#: random start it from the stdlib snapshot, with json preloaded).
ISOLATION_PLAIN = ISOLATION.replace("json.dumps", "string.capwords").replace("json", "string").replace(
    "import random\nrandom.seed(42)\n", ""
)

#: Which snapshot a program started from: the stdlib one has ``statistics`` preloaded, the plain one not.
WHICH = "import sys\nprint('stdlib' if 'statistics' in sys.modules else 'plain')\n"


async def test_programs_that_import_slow_modules_start_from_the_stdlib_snapshot(real: Sandbox) -> None:
    """``python_snapshot.STDLIB_FOR``: such a program starts with them imported (``import json`` about 6 ms
    instead of 14, ``statistics`` 7 instead of 37: bench/python_snapshot.py); any other from the plain one."""
    assert await _run(real, "import json\n" + WHICH) == (0, "stdlib\n", "")
    assert await _run(real, "from urllib.request import urlopen\n" + WHICH) == (0, "stdlib\n", "")
    assert await _run(real, "import math, datetime\n" + WHICH) == (0, "plain\n", "")
    assert (await _run(real, ISOLATION + WHICH))[1].endswith("\nstdlib\n")
    assert (await _run(real, ISOLATION_PLAIN + WHICH))[1].endswith("\nplain\n")
    # logging was imported at the capture: a record's relativeCreated still counts from the run's start (the
    # capture was at least a second before: at the run above, or earlier)
    await asyncio.sleep(1.1)
    logs = "import logging\nlogging.basicConfig(format='%(relativeCreated)d')\nlogging.warning('x')"
    code, _, err = await _run(real, logs)
    assert code == 0 and 0 <= int(err) < 1000, err


@pytest.mark.parametrize("program", [ISOLATION, ISOLATION_PLAIN], ids=["stdlib", "plain"])
async def test_nothing_of_a_run_reaches_the_next(real: Sandbox, program: str) -> None:
    clean = "seen False None None None False False None False False False\n"
    for _ in range(3):
        assert await _run(real, program) == (0, clean, "")
    # a builtin monkeypatched for good: the next run has its own
    code, _, _ = await _run(real, "import builtins\nbuiltins.len = lambda x: 42\nbuiltins.print = None\n")
    assert code == 0
    assert await _run(real, "print(len('ab'), print is not None)") == (0, "2 True\n", "")


async def test_concurrent_runs_share_nothing(real: Sandbox) -> None:
    clean = "seen False None None None False False None False False False\n"
    results = await asyncio.gather(*(_run(real, program) for program in (ISOLATION, ISOLATION_PLAIN) * 3))
    assert results == [(0, clean, "")] * 6


async def test_doctor_reports_the_snapshot(real: Sandbox) -> None:
    backend = WasmBackend(packs=[python.PACK])
    (line,) = [d for d in backend.diagnostics() if d.name == "python snapshot"]
    assert line.ok and line.detail.startswith("ready"), line


async def test_args_env_stdin_and_files_are_the_runs_own(real: Sandbox) -> None:
    code = (
        "import os, sys\n"
        "print(sys.argv, sys.orig_argv[-2:], dict(os.environ), os.getcwd(), __file__, __name__)\n"
        "print(input(), open('/in/data.txt').read(), open('helper.py').read())\n"
    )
    result = await _run(
        real, code, args=("a b", "c"), env={"X": "1"}, stdin=b"typed\n", files={"data.txt": b"from /in"},
        work_files={"helper.py": b"work file"},
    )  # fmt: skip
    assert result == (
        0,
        "['/work/main.py', 'a b', 'c'] ['a b', 'c'] {'HOME': '/home/user', 'USER': 'user', 'LOGNAME': 'user', "
        "'X': '1'} /work /work/main.py __main__\n"
        "typed from /in work file\n",
        "",
    )
    # a second run with other arguments sees only its own
    assert await _run(real, "import os, sys\nprint(sys.argv[1:], os.environ.get('X'))") == (0, "[] None\n", "")


async def test_a_start_worked_out_once_serves_only_runs_with_its_arguments_and_environment(real: Sandbox) -> None:
    """``WasmBackend._starts``: a run's start (its payload holds the arguments and the environment) is worked out
    once per arguments and environment; a run with others gets its own, and the backend keeps a bounded number."""
    backend = real.backends["wasm"]
    assert isinstance(backend, WasmBackend)
    code = "import os, sys\nprint(sys.argv[1:], os.environ.get('X'))"
    for _ in range(2):
        for i in range(3):
            assert await _run(real, code, args=(str(i),), env={"X": str(i)}) == (0, f"['{i}'] {i}\n", "")
            assert await _run(real, code) == (0, "[] None\n", "")
    for i in range(MAX_STARTS + 5):
        assert await _run(real, code, env={"X": f"v{i}"}) == (0, f"[] v{i}\n", "")
        assert len(backend._starts) <= MAX_STARTS


async def test_a_runtime_replaced_after_its_start_was_worked_out_is_refused(tmp_path: Path) -> None:
    """A known start (``WasmBackend._starts``) does not skip the runtime's check: a run after the file changed
    is refused as the first one would be."""
    user = WasmBackend()
    require_runtime(user, python.PACK)
    spec = python.PACK.wasm
    assert spec is not None and spec.module is not None
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "modules").symlink_to(cache_root() / "modules")  # the compiled code: no compile here
    runtime = ArtifactStore(cache).path(spec.module)
    runtime.parent.mkdir(parents=True)
    shutil.copyfile(ArtifactStore(user.cache_dir).verified_path(spec.module, "python"), runtime)
    with Sandbox(backends=[WasmBackend(cache_dir=cache)], packs=[python.PACK]) as sb:
        assert await _run(sb, FROM_SNAPSHOT) == (0, "snapshot\n", "")
        assert await _run(sb, FROM_SNAPSHOT) == (0, "snapshot\n", "")
        with runtime.open("ab") as file:
            file.write(b"tampered")
        with pytest.raises(ArtifactMismatch, match="corrupt or was replaced"):
            await _run(sb, FROM_SNAPSHOT)


async def test_the_command_line_is_a_cold_starts_though_the_run_does_not_send_it(real: Sandbox) -> None:
    """``WasmSnapshot.kept_args``: the boot script is in the image, and ``sys.orig_argv`` still has it."""
    code = "import sys\nprint(repr([sys.orig_argv, sys.argv]))\n"
    cold = await _run(real, FROM_SNAPSHOT + code, args=("x", "-y"), env={"PYTHONHASHSEED": "1"})
    warm = await _run(real, FROM_SNAPSHOT + code, args=("x", "-y"))
    assert cold[1].startswith("cold\n") and warm[1].startswith("snapshot\n"), (cold, warm)
    assert cold[1].split("\n")[1] == warm[1].split("\n")[1]
    assert repr(["python", *LIGHT_ARGS, "/work/main.py", "x", "-y"]) in warm[1]


async def test_exit_codes_tracebacks_and_exit_handlers(real: Sandbox) -> None:
    assert (await _run(real, "import sys\nsys.exit(3)"))[0] == 3
    assert (await _run(real, "raise SystemExit(-1)"))[0] == 255
    assert (await _run(real, "import os\nos._exit(5)"))[0] == 5
    assert await _run(real, "import sys\nsys.exit('bye')") == (1, "", "bye\n")
    code, out, err = await _run(real, "print('before')\ndef f():\n    1 / 0\nf()\n")
    assert (code, out) == (1, "before\n")
    assert err.startswith("Traceback (most recent call last):\n")
    assert 'File "/work/main.py", line 4, in <module>' in err and 'File "/work/main.py", line 3, in f' in err
    assert err.endswith("ZeroDivisionError: division by zero\n") and "<string>" not in err
    assert (await _run(real, "raise KeyboardInterrupt"))[0] == 130
    atexit = "import atexit\natexit.register(lambda: print('atexit ran'))\nprint('no newline', end='')"
    assert await _run(real, atexit) == (0, "no newlineatexit ran\n", "")
    assert await _run(real, atexit + "\nimport sys\nsys.exit(2)") == (2, "no newlineatexit ran\n", "")
    code, _, err = await _run(real, "def f(:\n")
    assert code == 1 and 'File "/work/main.py", line 1' in err and "SyntaxError" in err


async def test_the_end_of_a_run_finalises_the_program_as_cpython_does(real: Sandbox) -> None:
    """Without a full ``Py_Exit`` (15 ms), the run still ends as one would: ``__del__`` methods of the
    program's objects run while its namespace stands (as python3 on Linux prints), files it left open are
    flushed, in the main module and in its own modules."""
    helper = b"log = open('/out/helper.txt', 'w')\nlog.write('helper flushed')\n"
    code = (
        FROM_SNAPSHOT + "import helper, atexit\natexit.register(print, 'atexit ran')\n"
        "class Noisy:\n    def __del__(self):\n        print('__del__ ran', _private)\n"
        "_private = 'seen'\nkept = Noisy()\nleft_open = open('/out/main.txt', 'w')\nleft_open.write('main flushed')\n"
    )
    for ending, status in (("", 0), ("import sys\nsys.exit(4)", 4)):
        result = await real.run(Spec(lang="python", code=code + ending, work_files={"helper.py": helper}))
        assert (result.exit_code, result.stderr) == (status, b""), result.stderr
        assert result.stdout == b"snapshot\natexit ran\n__del__ ran seen\n"
        assert result.files == {"main.txt": b"main flushed", "helper.txt": b"helper flushed"}


async def test_each_run_draws_its_own_randomness(real: Sandbox) -> None:
    # random was imported at the stdlib snapshot's capture (seeded then): each run reseeds it
    code = "import os, random\nprint(random.random(), os.urandom(8).hex(), hash('abc'))\n" + WHICH
    first = (await _run(real, code))[1].split()
    second = (await _run(real, code))[1].split()
    assert first[3] == second[3] == "stdlib"
    assert first[0] != second[0] and first[1] != second[1]
    assert first[2] == second[2]  # hash() is stable for one snapshot, as with a fixed PYTHONHASHSEED


#: A program's view of the collector: what the capture made is frozen, the program's own cycles still go.
GC_STATE = """\
import gc
class Node:
    pass
a, b = Node(), Node()
a.other, b.other = b, a
del a, b
print(gc.get_freeze_count() > 5000, len(gc.get_objects()) < 2000, gc.collect() >= 2)
"""


async def test_the_snapshots_objects_are_frozen_and_the_programs_cycles_are_collected(real: Sandbox) -> None:
    """``python_snapshot._FREEZE``: a run's collections go through the program's objects only (so they copy
    no page of the image for it), and a cycle the program drops is still freed."""
    assert await _run(real, GC_STATE) == (0, "True True True\n", "")


async def test_process_time_starts_at_the_run(real: Sandbox) -> None:
    code, out, _ = await _run(real, "import time\nprint(time.process_time(), time.process_time_ns())")
    seconds, ns = (float(v) for v in out.split())
    assert code == 0 and 0 <= seconds < 0.5 and 0 <= ns < 0.5e9


async def test_the_guest_clock_goes_on_from_the_capture(real: Sandbox) -> None:
    """The C library read the monotonic clock at the capture (``times()``, behind ``process_time``); a run's
    clock continues from there, so a snapshot used long after its capture still counts CPU time (it once
    saturated after 15 minutes and ``process_time`` stood still)."""
    got = real.backends["wasm"].snapshots.image(python.PACK, None)  # type: ignore[attr-defined]
    assert got is not None
    code, out, _ = await _run(real, "import time\nprint(time.monotonic_ns())")
    assert code == 0 and abs(int(out) - got[1].monotonic) < 60e9, (int(out), got[1].monotonic)
    busy = "import time\nc, w = time.process_time(), time.perf_counter()\nwhile time.perf_counter() - w < 0.2: pass\n"
    code, out, _ = await _run(real, busy + "print(time.process_time() - c)")
    assert code == 0 and 0.05 < float(out) < 5, out


async def test_memory_limit_covers_the_snapshot(real: Sandbox) -> None:
    with pytest.raises(MemoryLimitExceeded) as info:
        await real.run(Spec(lang="python", code="x = bytearray(200 * 2**20)", limits=Limits(memory=64 * MiB)))
    assert info.value.result is not None
    result = await real.run(Spec(lang="python", code="x = bytearray(20 * 2**20)\nprint('ok')",
                                 limits=Limits(memory=64 * MiB)))  # fmt: skip
    assert result.stdout == b"ok\n" and result.usage.peak_memory > 20 * MiB
    with pytest.raises(MemoryLimitExceeded) as below:
        await real.run(Spec(lang="python", code="print(1)", limits=Limits(memory=8 * MiB)))
    message = str(below.value)
    assert "the python snapshot starts with" in message and "raise the memory limit" in message, message


async def test_time_output_and_quota_limits(real: Sandbox) -> None:
    with pytest.raises(TimeLimitExceeded):
        await real.run(Spec(lang="python", code="while True: pass", limits=Limits(wall_time=0.5)))
    with pytest.raises(CPUTimeLimitExceeded):
        await real.run(Spec(lang="python", code="while True: pass", limits=Limits(cpu_time=0.3, wall_time=10.0)))
    with pytest.raises(OutputLimitExceeded) as flood:
        await real.run(Spec(lang="python", code="while True: print('x' * 1000)", limits=Limits(max_output=10_000)))
    assert flood.value.result is not None and len(flood.value.result.stdout) == 10_000
    with pytest.raises(FSQuotaExceeded):
        await real.run(Spec(lang="python", code="open('big', 'wb').write(b'x' * (4 << 20))",
                            limits=Limits(fs_quota=1 * MiB)))  # fmt: skip


async def test_cancelling_a_run_stops_it(real: Sandbox) -> None:
    task = asyncio.create_task(real.run(Spec(lang="python", code="while True: pass")))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _run(real, "print('next')") == (0, "next\n", "")


@pytest.mark.parametrize(
    ("env", "why"), [({"PYTHONHASHSEED": "0"}, "PYTHON*"), ({"LANG": "C"}, "LANG"), ({"TZ": "UTC"}, "TZ"),
                     ({"LC_ALL": "C"}, "LC_*")],
)  # fmt: skip
async def test_variables_read_at_start_up_start_cold(real: Sandbox, env: dict[str, str], why: str) -> None:
    code, out, _ = await _run(real, FROM_SNAPSHOT + "import os\nprint(sorted(os.environ))", env=env)
    assert code == 0 and out.splitlines()[0] == "cold", why
    assert sorted(env)[0] in out


async def test_other_runs_start_cold(real: Sandbox) -> None:
    big = "x" * (MAX_PAYLOAD + 1)
    code, out, _ = await _run(real, FROM_SNAPSHOT + "import sys\nprint(len(sys.argv[1]))", args=(big,))
    assert (code, out) == (0, f"cold\n{len(big)}\n")
    root = {"work/data.txt": b"x"}
    result = await real.run(Spec(lang="python", code=FROM_SNAPSHOT, root_files=root))
    assert result.stdout == b"cold\n", result.stderr


async def test_a_corrupt_snapshot_is_captured_again_and_old_ones_are_pruned(tmp_path: Path) -> None:
    user = cache_root()
    cache = tmp_path / "cache"
    cache.mkdir()
    for shared in ("artifacts", "modules"):  # the runtime and its compiled code from the user's cache
        (cache / shared).symlink_to(user / shared)
    old, recent = cache / "snapshots" / "old.snap", cache / "snapshots" / "recent.snap"
    old.parent.mkdir()
    old.write_bytes(b"another version's")
    recent.write_bytes(b"another version's")
    os.utime(old, (0, 0))
    backend = WasmBackend(cache_dir=cache)
    require_runtime(backend, python.PACK)
    assert backend.snapshots.image(python.PACK, None) is not None
    assert not old.exists() and recent.exists()  # unused for 30 days: pruned at the capture
    spec = python.PACK.wasm
    assert spec is not None
    path = backend.snapshots.path(spec)
    good = path.read_bytes()
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    zeros = sum(good[i : i + 65536] == bytes(65536) for i in range(0, len(good) - 65535, 65536)) * 65536
    assert zeros > 0 and path.stat().st_blocks * 512 <= len(good) - zeros + 65536 * 2  # runs of zeros are holes
    corrupt = bytearray(good)
    corrupt[len(corrupt) // 2] ^= 0xFF
    path.write_bytes(bytes(corrupt))
    fresh = WasmBackend(cache_dir=cache)  # a new process's view: the file is verified before first use
    with Sandbox(backends=[fresh], packs=[python.PACK]) as sb:
        assert await _run(sb, FROM_SNAPSHOT) == (0, "snapshot\n", "")
    again = path.read_bytes()
    assert again != bytes(corrupt) and len(again) == len(good)
    path.write_bytes(b"truncated")
    with Sandbox(backends=[WasmBackend(cache_dir=cache)], packs=[python.PACK]) as sb:
        assert await _run(sb, FROM_SNAPSHOT) == (0, "snapshot\n", "")
    shutil.rmtree(cache / "snapshots")
