"""The real server (``.venv/bin/playground mcp``) on the real Wasm backend, driven over stdio.

These need the Wasm language packs in ``default_sandbox()``; a language
that is not installed fails here rather than being skipped, so a missing
runtime is noticed.
"""

from __future__ import annotations

import base64
import os

import anyio
import pytest
import wasmtime
from mcp import StdioServerParameters
from mcp_support import PLAYGROUND, call, connect, error_text, ok, real_server

pytestmark = pytest.mark.timeout(300)

WASM_LANGUAGES = ("javascript", "typescript", "python", "lua", "wasm")

HELLO_WAT = r"""(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "6 * 7 = 42\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 11))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"""

HELLO = {
    "javascript": {"code": 'console.log("6 * 7 = " + 6 * 7)'},
    "typescript": {"code": 'const n: number = 6 * 7;\nconsole.log(`6 * 7 = ${n}`);'},
    "python": {"code": "print('6 * 7 =', 6 * 7)"},
    "lua": {"code": 'print("6 * 7 = " .. 6 * 7)'},
    "wasm": {"code": base64.b64encode(wasmtime.wat2wasm(HELLO_WAT)).decode(), "code_encoding": "base64"},
}


async def test_wasm_languages_are_listed_as_available() -> None:
    async with connect(real_server()) as client:
        langs = {lang["name"]: lang for lang in ok(await call(client, "list_languages"))["languages"]}
    for name in WASM_LANGUAGES:
        assert name in langs, f"{name} is not installed: {sorted(langs)}"
        assert langs[name]["available"], langs[name]["reason"]
        assert langs[name]["backend"] == "wasm"
        assert 0 < langs[name]["cold_start_ms"] < 1000, langs[name]


@pytest.mark.parametrize("language", WASM_LANGUAGES)
async def test_hello_in_each_wasm_language(language: str) -> None:
    async with connect(real_server("--wasm-only")) as client:
        out = ok(await call(client, "execute_code", language=language, **HELLO[language]))
    assert out["status"] == "completed" and out["exit_code"] == 0, out
    assert out["stdout"] == "6 * 7 = 42\n" and out["backend"] == "wasm"


async def test_wasm_accepts_wat_text() -> None:
    async with connect(real_server()) as client:
        out = ok(await call(client, "execute_code", language="wasm", code=HELLO_WAT))
        bad = await call(client, "execute_code", language="wasm", code="(module (oops")
    assert out["stdout"] == "6 * 7 = 42\n"
    assert "not valid WAT" in error_text(bad)


async def test_python_reads_in_files_and_returns_out_files() -> None:
    code = (
        "import sys\n"
        "data = open('/in/data/numbers.txt').read().split()\n"
        "open('/out/sum.txt', 'w').write(str(sum(map(int, data))))\n"
        "open('/out/blob.bin', 'wb').write(bytes(range(256)))\n"
        "print(sys.argv[1:], sys.stdin.read())\n"
        "sys.exit(3)\n"
    )
    async with connect(real_server()) as client:
        result = await call(client, "execute_code", language="py", code=code, args=["a", "b"], stdin="IN",
                            files={"data/numbers.txt": "1 2 3 4"})
    out = ok(result)
    assert out["exit_code"] == 3 and out["stdout"] == "['a', 'b'] IN\n", out
    files = {f["name"]: f for f in out["files"]}
    assert files["sum.txt"] == {"name": "sum.txt", "size": 2, "delivery": "inline", "text": "10",
                                "uri": None, "mime_type": "text/plain", "note": None}
    assert files["blob.bin"]["delivery"] == "embedded"
    blob = next(b for b in result.content if b.type == "resource")
    assert base64.b64decode(blob.resource.blob) == bytes(range(256))


@pytest.mark.parametrize(
    ("language", "code"),
    [("python", "while True:\n    pass\n"), ("javascript", "for (;;) {}"), ("lua", "while true do end")],
)
async def test_infinite_loop_is_stopped_by_the_timeout(language: str, code: str) -> None:
    async with connect(real_server()) as client:
        out = ok(await call(client, "execute_code", language=language, code=code, timeout="1s"))
    assert out["status"] == "limit_exceeded" and out["limit_exceeded"] == "wall_time", out
    assert out["exit_code"] is None


async def test_output_flood_is_stopped_with_partial_output() -> None:
    async with connect(real_server()) as client:
        out = ok(await call(client, "execute_code", language="python", code="while True:\n    print('x' * 100)\n",
                            max_output="8K"))
    assert out["status"] == "limit_exceeded" and out["limit_exceeded"] == "max_output", out
    assert out["truncated"] is True and 0 < len(out["stdout"]) <= 8192 and out["stdout"].startswith("x" * 100)


async def test_a_syntax_error_is_a_result_not_a_tool_error() -> None:
    async with connect(real_server()) as client:
        out = ok(await call(client, "execute_code", language="python", code="def (:\n"))
    assert out["status"] == "completed" and out["exit_code"] != 0 and "SyntaxError" in out["stderr"]


async def test_guest_cannot_see_host_files() -> None:
    async with connect(real_server()) as client:
        out = ok(await call(client, "execute_code", language="python",
                            code="import os\ntry:\n    open('/etc/passwd')\n    print('LEAK')\n"
                                 "except OSError as e:\n    print('denied', type(e).__name__)\n"
                                 "print(sorted(os.environ))\n"))
    assert "LEAK" not in out["stdout"] and "denied" in out["stdout"], out


@pytest.mark.parametrize(
    ("language", "steps"),
    [
        ("python", ["x = 41", "x += 1", "print(x)"]),
        ("javascript", ["var x = 41", "x += 1", "console.log(x)"]),
    ],
)
async def test_session_keeps_state_across_three_calls(language: str, steps: list[str]) -> None:
    async with connect(real_server()) as client:
        first = ok(await call(client, "eval_session", language=language, code=steps[0]))
        sid = first["session_id"]
        ok(await call(client, "eval_session", session_id=sid, code=steps[1]))
        third = ok(await call(client, "eval_session", session_id=sid, code=steps[2]))
        ok(await call(client, "close_session", session_id=sid))
        after = await call(client, "eval_session", session_id=sid, code=steps[2])
    assert third["stdout"].strip() == "42", third
    assert "no open session" in error_text(after)


async def test_session_infinite_loop_kills_the_session() -> None:
    async with connect(real_server()) as client:
        sid = ok(await call(client, "eval_session", language="python", code="x = 1", timeout="1s"))["session_id"]
        out = ok(await call(client, "eval_session", session_id=sid, code="while True:\n    pass\n"))
    assert out["limit_exceeded"] == "wall_time" and out["session_alive"] is False, out


@pytest.mark.parametrize(
    ("language", "setup", "spin", "check"),
    [("python", "x = 41", "while True:\n    pass\n", "print(x + 1)"),
     ("javascript", "var x = 41", "for (;;) {}", "console.log(x + 1)"),
     ("lua", "x = 41", "while true do end", "print(x + 1)")],
)  # fmt: skip
async def test_a_cancelled_eval_keeps_the_session(language: str, setup: str, spin: str, check: str) -> None:
    """A client that cancels a call (an agent's user pressing stop) interrupts the eval like Ctrl-C.

    The session keeps its state for the next call instead of being killed.
    """
    async with connect(real_server()) as client:
        sid = ok(await call(client, "eval_session", language=language, code=setup, timeout="60s"))["session_id"]
        with anyio.move_on_after(1.0) as scope:
            await call(client, "eval_session", session_id=sid, code=spin)
        assert scope.cancelled_caught
        with anyio.fail_after(20):
            out = ok(await call(client, "eval_session", session_id=sid, code=check))
    assert (out["stdout"], out["session_alive"], out["restarted"]) == ("42\n", True, False), out


async def test_sessions_unsupported_are_a_clean_tool_error() -> None:
    """The wasm pack runs a user's module: it has no REPL, so eval_session refuses it cleanly."""
    async with connect(real_server()) as client:
        result = await call(client, "eval_session", language="wasm", code="x")
    assert "no REPL sessions" in error_text(result)


async def test_the_readme_desktop_config_works_as_given() -> None:
    """What Claude Desktop / Cursor do with the README snippet: absolute command, args ["mcp"], another cwd."""
    params = StdioServerParameters(command=str(PLAYGROUND.absolute()), args=["mcp"], cwd="/")
    async with connect(params) as client:
        out = ok(await call(client, "execute_code", language="python", code="print(6 * 7)"))
    assert out["stdout"] == "42\n"


def _workers_of_servers() -> list[int]:
    """Pids of Wasm worker processes whose parent is a ``playground mcp`` server."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if b"backends.wasm.procworker" not in f.read():
                    continue
            with open(f"/proc/{entry}/stat") as f:
                parent = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{parent}/cmdline", "rb") as f:
                if b"\0mcp" in f.read():
                    found.append(int(entry))
        except OSError:
            continue  # it ended meanwhile
    return found


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the server has workers by default on 2 CPUs or more")
async def test_overlapping_calls_get_worker_processes_by_default_and_they_end_with_the_server() -> None:
    assert _workers_of_servers() == []
    async with connect(real_server()) as client:
        first = ok(await call(client, "execute_code", language="python", code="print(1)"))
        assert first["stdout"] == "1\n"
        assert _workers_of_servers() == [], "a call on its own started worker processes"
        outputs: list[str] = []

        async def run(code: str) -> None:
            outputs.append(ok(await call(client, "execute_code", language="python", code=code))["stdout"])

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(run, "import time\ntime.sleep(1)\nprint('slow')")
                await anyio.sleep(0.3)
                group.start_soon(run, "print('fast')")
        assert sorted(outputs) == ["fast\n", "slow\n"]
        workers = _workers_of_servers()
        assert len(workers) == 2
    with anyio.fail_after(10):
        while any(_alive(pid) for pid in workers):
            await anyio.sleep(0.1)


def _alive(pid: int) -> bool:
    """Not ended (a zombie that its parent has not reaped yet counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
