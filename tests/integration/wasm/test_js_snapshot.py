"""JavaScript one-shot runs from the snapshot of the set-up QuickJS driver (``packs/javascript_snapshot``).

On the real runtime: every run is a fresh instance over a copy-on-write
mapping of the image, so nothing one program does (globals, patched
built-ins and prototypes, module objects, process.env, files) reaches the
next; argv, environment, stdin, files and exit codes are the run's own
(argv and env travel as JSON: a value that tries to break out of it is
just a value); Math.random is drawn afresh; the memory limit covers the
image; runs the snapshot cannot serve start cold and behave the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from backends.wasm import WasmBackend, runner, wasmbin
from backends.wasm.artifacts import artifact_path, cache_root
from backends.wasm.snapshot import MAX_PAYLOAD
from playground.core import (
    CPUTimeLimitExceeded,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Sandbox,
    Spec,
    TimeLimitExceeded,
)
from playground.core.limits import MiB
from playground.packs import javascript, javascript_snapshot, typescript
from playground.packs.runtimes import QUICKJS
from tests.integration.wasm.conftest import require_runtime


@pytest.fixture(scope="module")
def real() -> Iterator[Sandbox]:
    backend = WasmBackend()  # the user's cache: the runtime, its compiled code and the snapshot
    require_runtime(backend, javascript.PACK)
    got = backend.snapshots.image(javascript.PACK, None)
    assert got is not None, backend.snapshots.failure(javascript.PACK.wasm)  # type: ignore[arg-type]
    with Sandbox(backends=[backend], packs=[javascript.PACK], default_limits=Limits(wall_time=20.0)) as sb:
        yield sb


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each run started: "snapshot" (the entry called with a payload) or "cold"."""
    seen: list[str] = []
    real_run = runner.run

    def spy(engine: Any, launch: runner.Launch, control: Any) -> Any:
        seen.append("snapshot" if launch.image is not None and launch.image.payload is not None else "cold")
        return real_run(engine, launch, control)

    monkeypatch.setattr(runner, "run", spy)
    return seen


async def _run(sb: Sandbox, code: str, **kw: object) -> tuple[int, str, str]:
    result = await sb.run(Spec(lang="javascript", code=code, **kw))  # type: ignore[arg-type]
    return result.exit_code, result.stdout.decode(), result.stderr.decode()


def test_the_pinned_entry_is_the_drivers_export() -> None:
    """``ENTRY_FUNCTION`` is ``qjs_snapshot_run`` of the pinned build (a rebuild that moves it must re-pin)."""
    path = artifact_path(QUICKJS, cache_root())
    if not path.is_file():
        pytest.skip("the QuickJS runtime is not installed")
    parts = wasmbin.sections(path.read_bytes())
    exports = {e.name: e.index for e in wasmbin.read_exports(dict(parts)[wasmbin.EXPORT])}
    assert exports[javascript_snapshot.ENTRY_EXPORT] == javascript_snapshot.ENTRY_FUNCTION
    marker = javascript_snapshot.ENTRY_MARKER.encode()
    assert wasmbin.references_string(parts, javascript_snapshot.ENTRY_FUNCTION, marker)


async def test_a_run_starts_from_the_snapshot(real: Sandbox, starts: list[str]) -> None:
    assert await _run(real, 'console.log("hello world")') == (0, "hello world\n", "")
    assert starts == ["snapshot"]
    assert real.backends["wasm"].missing(javascript.PACK) == []  # type: ignore[attr-defined]


ISOLATION = """\
import fs from "fs";
const seen = [typeof LEAK, globalThis.leak2, Object.prototype.leak, Array.prototype.push.name,
  Math.random.name, JSON.stringify.name, typeof console.log, process.env.LEAKENV, process.exitCode,
  fs.existsSync("/work/leak.txt"), fs.existsSync("/tmp/leak.txt"), fs.leak, String.prototype.trim.name,
  typeof setTimeout, scriptArgs.length];
console.log("seen " + JSON.stringify(seen));
globalThis.LEAK = 1;
var leak2 = 2;
Object.prototype.leak = 3;
Array.prototype.push = function () { return 0; };
Math.random = () => 4;
JSON.stringify = () => "5";
process.env.LEAKENV = "6";
fs.writeFileSync("/work/leak.txt", "x");
fs.writeFileSync("/tmp/leak.txt", "x");
fs.leak = 7;
String.prototype.trim = null;
globalThis.setTimeout = undefined;
scriptArgs.push("more");
"""

CLEAN = (
    'seen ["undefined",null,null,"push","random","stringify","function",null,null,false,false,null,"trim",'
    '"function",1]\n'
)


async def test_nothing_of_a_run_reaches_the_next(real: Sandbox, starts: list[str]) -> None:
    for _ in range(3):
        assert await _run(real, ISOLATION, main_file="main.mjs") == (0, CLEAN, "")
    # console.log replaced for good and the exit code set: the next run has its own
    assert await _run(real, "console.log = null; process.exitCode = 9; globalThis.print = 1") == (9, "", "")
    assert await _run(real, "console.log(typeof console.log, typeof print)") == (0, "function function\n", "")
    assert starts == ["snapshot"] * 5


async def test_concurrent_runs_share_nothing(real: Sandbox) -> None:
    results = await asyncio.gather(*(_run(real, ISOLATION, main_file="main.mjs") for _ in range(6)))
    assert results == [(0, CLEAN, "")] * 6


async def test_args_env_stdin_and_files_are_the_runs_own(real: Sandbox, starts: list[str]) -> None:
    code = (
        "const fs = require('fs');\n"
        "console.log(JSON.stringify([scriptArgs, process.argv, process.env, process.cwd()]));\n"
        "const read = (p) => fs.readFileSync(p, 'utf8');\n"
        "console.log(readStdin().trim(), read('/in/data.txt'), read('helper.js'));\n"
    )
    # a value that tries to end the JSON of the run's source and add its own argv or env
    sneaky = '"], "env": {"INJECTED": "1"}, "argv": ["x'
    exit_code, out, err = await _run(
        real, code, args=("a b", sneaky), env={"X": "1", "Y": sneaky}, stdin=b"typed\n",
        files={"data.txt": b"from /in"}, work_files={"helper.js": b"work file"},
    )  # fmt: skip
    assert (exit_code, err) == (0, "")
    args, argv, env, cwd = json.loads(out.splitlines()[0])
    assert args == ["/work/main.js", "a b", sneaky] and argv == ["qjs", *args]
    assert env == {"X": "1", "Y": sneaky} and cwd == "/work"
    assert out.splitlines()[1] == "typed from /in work file"
    # the next run with other arguments sees only its own
    assert await _run(real, "console.log(JSON.stringify([scriptArgs, process.env]))") == (
        0, '[["/work/main.js"],{}]\n', "",
    )  # fmt: skip
    assert starts == ["snapshot", "snapshot"]


async def test_each_run_draws_its_own_math_random(real: Sandbox) -> None:
    code = "console.log(Math.random(), Math.random())"
    outs = {(await _run(real, code))[1] for _ in range(4)}
    assert len(outs) == 4, outs


async def test_exit_codes_errors_modules_and_timers(real: Sandbox) -> None:
    assert (await _run(real, "process.exit(3)"))[0] == 3
    assert (await _run(real, "process.exitCode = 4"))[0] == 4
    assert (await _run(real, "process.exit(-1)"))[0] == 255
    code, out, err = await _run(real, "console.log('before');\nfunction f() { throw new Error('boom'); }\nf();\n")
    assert (code, out) == (1, "before\n")
    assert err.startswith("Uncaught Error: boom\n") and "/work/main.js:2" in err, err
    code, _, err = await _run(real, "let x = ;")
    assert code == 1 and "SyntaxError" in err and "/work/main.js:1" in err, err
    timers = "setTimeout(() => console.log('later'), 10);\nawait Promise.resolve();\nconsole.log('now');\n"
    assert await _run(real, timers) == (0, "now\nlater\n", "")
    assert await _run(real, "Promise.reject(new Error('nope'))") == (
        1, "", "Uncaught (in promise) Error: nope\n    at <eval> (/work/main.js:1:20)\n",
    )  # fmt: skip


AGREE = [
    ("console.log([1, 2, 3].map((n) => n * n), { a: 1 }, new Map([[1, 2]]), 10n ** 20n)", "main.js"),
    ("function f() { throw new TypeError('bad'); }\nf();\n", "main.js"),
    ("let x = ;", "main.js"),
    ("export const a = 1;\nconsole.log(import.meta.url, typeof require);\nawait 0;\nprocess.exit(7);\n", "main.mjs"),
    ("console.log(typeof fs, typeof TextEncoder, typeof Response, process.platform, typeof performance)", "main.js"),
    ("queueMicrotask(() => console.log('micro'));\nsetInterval(function () { console.log('tick'); "
     "if (++this.n > 2) clearInterval(1); }.bind({ n: 0 }), 5);\n", "main.js"),
    ("console.error('to stderr'); process.stdout.write('no newline')", "main.js"),
]  # fmt: skip


@pytest.mark.parametrize(("code", "main"), AGREE)
async def test_a_snapshot_run_and_a_cold_one_agree(real: Sandbox, starts: list[str], code: str, main: str) -> None:
    """The same program from the snapshot and from a cold start (a ``QJS_*`` variable forces one): same output."""
    warm = await _run(real, code, main_file=main)
    cold = await _run(real, code, main_file=main, env={"QJS_COLD_START": "1"})
    assert warm == cold
    assert starts == ["snapshot", "cold"]


async def test_deep_recursion_is_a_range_error_even_with_large_arguments(real: Sandbox, starts: list[str]) -> None:
    """The run's source sits on the guest's stack below the capture's frames: QuickJS's own stack limit still
    trips before the Wasm stack runs out."""
    code = "function f(n) { return f(n + 1) + 1; }\ntry { f(0); } catch (e) { console.log(String(e)); }\n"
    big = "y" * (MAX_PAYLOAD - 2000)
    for args in ((), (big,)):
        assert await _run(real, code, args=args) == (0, "RangeError: Maximum call stack size exceeded\n", "")
    assert starts == ["snapshot", "snapshot"]


async def test_memory_limit_covers_the_snapshot(real: Sandbox) -> None:
    got = real.backends["wasm"].snapshots.image(javascript.PACK, None)  # type: ignore[attr-defined]
    assert got is not None
    image = got[1].memory.length
    grow = "const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length);"
    with pytest.raises(MemoryLimitExceeded) as info:
        await real.run(Spec(lang="javascript", code=grow, limits=Limits(memory=32 * MiB)))
    assert info.value.result is not None
    result = await real.run(Spec(lang="javascript", code="console.log('ok')", limits=Limits(memory=32 * MiB)))
    assert result.stdout == b"ok\n" and result.usage.peak_memory >= image
    with pytest.raises(MemoryLimitExceeded) as below:
        await real.run(Spec(lang="javascript", code="console.log(1)", limits=Limits(memory=image - 65536)))
    message = str(below.value)
    assert "the javascript snapshot starts with" in message and "raise the memory limit" in message, message


async def test_time_and_output_limits(real: Sandbox) -> None:
    with pytest.raises(TimeLimitExceeded):
        await real.run(Spec(lang="javascript", code="for (;;) {}", limits=Limits(wall_time=0.5)))
    with pytest.raises(CPUTimeLimitExceeded):
        await real.run(Spec(lang="javascript", code="for (;;) {}", limits=Limits(cpu_time=0.3, wall_time=10.0)))
    with pytest.raises(OutputLimitExceeded) as flood:
        await real.run(Spec(lang="javascript", code="for (;;) console.log('x'.repeat(1000))",
                            limits=Limits(max_output=10_000)))  # fmt: skip
    assert flood.value.result is not None and len(flood.value.result.stdout) == 10_000
    assert await _run(real, "console.log('next')") == (0, "next\n", "")


async def test_variables_read_at_set_up_start_cold(real: Sandbox, starts: list[str]) -> None:
    code = "function f(n) { return f(n + 1) + 1; }\ntry { f(0); } catch (e) { console.log(String(e)); }\n"
    # a tiny stack limit is honoured: the driver read it at set-up, so this run cannot use the snapshot
    assert await _run(real, code, env={"QJS_STACK_SIZE": "4096"}) == (
        0, "RangeError: Maximum call stack size exceeded\n", "",
    )  # fmt: skip
    code, out, _ = await _run(real, "console.log(JSON.stringify(process.env))", env={"QJS_MEMORY_LIMIT": "0"})
    assert (code, out) == (0, '{"QJS_MEMORY_LIMIT":"0"}\n')
    assert starts == ["cold", "cold"]


async def test_other_runs_start_cold_and_agree(real: Sandbox, starts: list[str]) -> None:
    big = "x" * (MAX_PAYLOAD + 1)
    assert await _run(real, "console.log(scriptArgs[1].length)", args=(big,)) == (0, f"{len(big)}\n", "")
    result = await real.run(Spec(lang="javascript", code="console.log(scriptArgs)", root_files={"work/d.txt": b"x"}))
    assert result.stdout == b"[ '/work/main.js' ]\n", result.stderr
    assert starts == ["cold", "cold"]


async def test_typescript_runs_from_the_same_snapshot(starts: list[str]) -> None:
    backend = WasmBackend()
    require_runtime(backend, javascript.PACK)
    with Sandbox(backends=[backend], packs=[typescript.PACK], default_limits=Limits(wall_time=20.0)) as sb:
        code = "const n: number = scriptArgs.length;\nconsole.log(n, process.argv[1]);\nthrow new Error('x');\n"
        result = await sb.run(Spec(lang="typescript", code=code, args=("a",)))
    assert result.stdout == b"2 /work/main.ts\n" and result.exit_code == 1
    assert "/work/main.ts:3" in result.stderr.decode(), result.stderr  # the TypeScript's own line
    assert starts == ["snapshot"]
    assert typescript.PACK.wasm is not None and javascript.PACK.wasm is not None
    assert backend.snapshots.key(typescript.PACK.wasm) == backend.snapshots.key(javascript.PACK.wasm)  # one image
