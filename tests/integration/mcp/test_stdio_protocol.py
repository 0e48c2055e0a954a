"""The stdio server end to end: tools, results, limits and hostile input, on the scripted fake backend.

The server runs in a subprocess through the real CLI (``main(["mcp", ...])``)
and is driven by the SDK's own client; only the guest is scripted, so these
tests pin the MCP behaviour without depending on a language runtime.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import anyio
import pytest
from mcp_support import ROOT, call, connect, error_text, fake_server, ok

pytestmark = pytest.mark.timeout(120)


async def test_tools_are_listed_with_schemas_and_descriptions() -> None:
    async with connect(fake_server()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"execute_code", "eval_session", "close_session", "list_languages"}
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None
    props = tools["execute_code"].input_schema["properties"]
    assert tools["execute_code"].input_schema["required"] == ["language", "code"]
    for name in ("language", "code", "code_encoding", "stdin", "files", "files_base64", "args", "timeout",
                 "memory", "max_output"):
        assert props[name].get("description"), name
    assert "'5s'" in props["timeout"]["description"] and "'64M'" in props["memory"]["description"]
    out = tools["execute_code"].output_schema
    assert {"status", "stdout", "stderr", "exit_code", "truncated", "limit_exceeded", "usage", "files"} <= set(
        out["properties"])
    assert tools["list_languages"].annotations is not None and tools["list_languages"].annotations.read_only_hint


async def test_run_returns_output_exit_code_usage_and_out_files() -> None:
    code = "print hello\neprint warn\nstdin\nargs\ncat /in/data/a.txt\ncat /in/b.bin\nout r.txt result\n" \
           "outbin img.png 89504e47\nexit 3"
    async with connect(fake_server()) as client:
        result = await call(client, "execute_code", language="fl", code=code, stdin="IN\n", args=["x", "y"],
                            files={"data/a.txt": "A\n"}, files_base64={"b.bin": base64.b64encode(b"B\n").decode()})
    out = ok(result)
    assert out["status"] == "completed" and out["exit_code"] == 3 and out["limit_exceeded"] is None
    assert out["stdout"] == "hello\nIN\nx y\nA\nB\n" and out["stderr"] == "warn\n"
    assert out["language"] == "fakelang" and out["backend"] == "wasm"
    assert out["usage"]["wall_seconds"] >= 0 and out["limits"]["timeout"] == "10s"
    files = {f["name"]: f for f in out["files"]}
    assert files["r.txt"]["delivery"] == "inline" and files["r.txt"]["text"] == "result"
    assert files["img.png"]["delivery"] == "embedded" and files["img.png"]["mime_type"] == "image/png"
    embedded = [b for b in result.content if b.type == "resource"]
    assert len(embedded) == 1
    assert embedded[0].resource.uri == files["img.png"]["uri"]
    assert base64.b64decode(embedded[0].resource.blob) == bytes.fromhex("89504e47")
    # The first block is the same data as JSON, for clients that only show text.
    assert json.loads(result.content[0].text) == out


async def test_timeout_is_a_result_naming_the_limit() -> None:
    async with connect(fake_server()) as client:
        out = ok(await call(client, "execute_code", language="fl", code="print before\nsleep 30", timeout="300ms"))
    assert out["status"] == "limit_exceeded" and out["limit_exceeded"] == "wall_time"
    assert out["exit_code"] is None and out["stdout"] == "before\n" and out["message"]
    assert out["limits"]["timeout"] == "300ms"


async def test_output_flood_is_a_result_naming_the_limit_with_partial_output() -> None:
    async with connect(fake_server()) as client:
        out = ok(await call(client, "execute_code", language="fl", code="flood", max_output=2048))
    assert out["status"] == "limit_exceeded" and out["limit_exceeded"] == "max_output"
    assert out["truncated"] is True and out["stdout"] == "z" * 2048


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"language": "cobol", "code": "x"}, "unknown language 'cobol'"),
        ({"language": "fl", "code": "x" * ((1 << 20) + 1)}, "at most 1M"),
        ({"language": "fl", "code": "x", "timeout": "2h"}, "above this server's maximum of 60s"),
        ({"language": "fl", "code": "x", "timeout": "unlimited"}, "above this server's maximum"),
        ({"language": "fl", "code": "x", "memory": "4G"}, "above this server's maximum of 512M"),
        ({"language": "fl", "code": "x", "max_output": "1G"}, "above this server's maximum of 4M"),
        ({"language": "fl", "code": "x", "timeout": "soon"}, "not a duration"),
        ({"language": "fl", "code": "x", "timeout": -1}, "positive"),
        ({"language": "fl", "code": "x", "files": {"../x": "a"}}, "bad file name"),
        ({"language": "fl", "code": "x", "files": {"/etc/passwd": "a"}}, "bad file name"),
        ({"language": "fl", "code": "x", "files": {"a/./b": "a"}}, "bad file name"),
        ({"language": "fl", "code": "x", "files_base64": {"a": "%%%"}}, "not valid base64"),
        ({"language": "fl", "code": "x", "files": {"a": "1"}, "files_base64": {"a": "MQ=="}}, "both"),
        ({"language": "fl", "code": "x", "files": {"big": "x" * (9 << 20)}}, "input files exceed 8M"),
        ({"language": "fl", "code": "not base64!", "code_encoding": "base64"}, "not valid base64"),
        ({"language": "fl", "code": "x", "code_encoding": "rot13"}, "code_encoding"),
        ({"language": "fl"}, "code"),
    ],
)
async def test_hostile_requests_are_clean_tool_errors(arguments: dict[str, object], expected: str) -> None:
    async with connect(fake_server()) as client:
        result = await client.call_tool("execute_code", arguments)
    text = error_text(result)
    assert expected in text
    assert "Traceback" not in text and len(text) < 2000


async def test_ceilings_come_from_the_flags_and_defaults_are_clipped() -> None:
    flags = ("--max-timeout", "2s", "--max-memory", "64M", "--max-output", "16K")
    async with connect(fake_server(*flags)) as client:
        langs = ok(await call(client, "list_languages"))
        within = ok(await call(client, "execute_code", language="fl", code="print ok", timeout="2s"))
        above = await call(client, "execute_code", language="fl", code="print ok", timeout="2.5s")
    assert (langs["max_timeout"], langs["max_memory"], langs["max_output"]) == ("2s", "64M", "16K")
    assert langs["default_limits"] == {"timeout": "2s", "memory": "64M", "max_output": "16K"}
    assert within["status"] == "completed"
    assert "--max-timeout" in error_text(above)


async def test_languages_flag_restricts_what_agents_may_use() -> None:
    async with connect(fake_server("--languages", "fl")) as client:
        langs = ok(await call(client, "list_languages"))
        refused = await call(client, "execute_code", language="plainlang", code="print x")
    assert [lang["name"] for lang in langs["languages"]] == ["fakelang"]
    assert "not enabled on this server" in error_text(refused)


def test_unknown_language_in_flags_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.integration.mcp.fake_server", "mcp", "--languages", "fl,klingon"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False,
    )
    assert proc.returncode == 2 and "klingon" in proc.stderr and proc.stdout == ""


async def test_list_languages_reports_the_matrix() -> None:
    async with connect(fake_server()) as client:
        langs = {lang["name"]: lang for lang in ok(await call(client, "list_languages"))["languages"]}
    assert langs["fakelang"] == {
        "name": "fakelang", "aliases": ["fl"], "extensions": [".fl"], "version": "1.0", "available": True,
        "backend": "wasm", "reason": None, "sessions": True, "sessions_reason": None,
        "cold_start_ms": None,  # the scripted pack has no measured start time
    }
    assert langs["plainlang"]["sessions"] is False and "no REPL" in langs["plainlang"]["sessions_reason"]


async def test_session_state_persists_across_three_calls_and_closes() -> None:
    async with connect(fake_server()) as client:
        first = ok(await call(client, "eval_session", language="fl", code="set x 41"))
        sid = first["session_id"]
        second = ok(await call(client, "eval_session", session_id=sid, code="set y 1\nget x"))
        third = ok(await call(client, "eval_session", session_id=sid, code="get x\nget y"))
        closed = ok(await call(client, "close_session", session_id=sid))
        again = await call(client, "close_session", session_id=sid)
        after = await call(client, "eval_session", session_id=sid, code="get x")
    assert first["session_alive"] and len(sid) >= 22
    assert second["stdout"] == "41\n" and second["session_id"] == sid
    assert third["stdout"] == "41\n1\n"
    assert closed == {"session_id": sid, "closed": True}
    assert "no open session" in error_text(again)
    assert "no open session" in error_text(after)


async def test_session_timeout_kills_it_and_says_so() -> None:
    async with connect(fake_server()) as client:
        sid = ok(await call(client, "eval_session", language="fl", code="set x 1", timeout="300ms"))["session_id"]
        out = ok(await call(client, "eval_session", session_id=sid, code="sleep 30"))
        gone = await call(client, "eval_session", session_id=sid, code="get x")
    assert out["status"] == "limit_exceeded" and out["limit_exceeded"] == "wall_time"
    assert out["session_alive"] is False
    assert "no open session" in error_text(gone)


async def test_session_errors_are_clean() -> None:
    async with connect(fake_server("--max-sessions", "1")) as client:
        no_lang = await call(client, "eval_session", code="get x")
        unknown = await call(client, "eval_session", session_id="nope", code="get x")
        no_repl = await call(client, "eval_session", language="plainlang", code="x")
        sid = ok(await call(client, "eval_session", language="fl", code="set x 1"))["session_id"]
        too_many = await call(client, "eval_session", language="fl", code="set x 1")
        late_limits = await call(client, "eval_session", session_id=sid, code="get x", timeout="1s")
    assert "'language'" in error_text(no_lang)
    assert "no open session 'nope'" in error_text(unknown)
    assert "no REPL sessions" in error_text(no_repl) and "execute_code" in error_text(no_repl)
    assert "at most 1 sessions" in error_text(too_many)
    assert "only be set when a session is created" in error_text(late_limits)


def test_stdout_carries_only_protocol_messages() -> None:
    """Raw stdio: every line the server writes to stdout is a JSON-RPC message; logs go to stderr."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "execute_code", "arguments": {"language": "fl", "code": "print hi\neprint oops\nsleep 9",
                                                  "timeout": "200ms"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "execute_code", "arguments": {"language": "nope", "code": "x"}}},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.mcp.fake_server", "-v", "mcp"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        replies: dict[int, dict[str, object]] = {}
        while len(replies) < 3:
            line = proc.stdout.readline()
            assert line, "server closed stdout early"
            reply = json.loads(line)  # anything but a JSON-RPC message here would fail
            assert reply["jsonrpc"] == "2.0"
            if "id" in reply:
                replies[reply["id"]] = reply
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest.strip() == ""
    result = replies[2]["result"]
    assert isinstance(result, dict) and result["structuredContent"]["limit_exceeded"] == "wall_time"
    error = replies[3]["result"]
    assert isinstance(error, dict) and error["isError"] is True
    assert "playground MCP server ready" in stderr  # -v logging goes to stderr, never stdout
    assert proc.returncode == 0


async def test_a_cancelled_call_stops_its_guest_and_frees_its_slot() -> None:
    """With one run slot, a call after a cancelled one only completes if the cancelled guest was stopped."""
    async with connect(fake_server("--max-concurrent", "1")) as client:
        with anyio.move_on_after(1.0) as scope:
            await call(client, "execute_code", language="fl", code="sleep 60")
        assert scope.cancelled_caught
        with anyio.fail_after(20):
            out = ok(await call(client, "execute_code", language="fl", code="print next"))
    assert out["stdout"] == "next\n"
