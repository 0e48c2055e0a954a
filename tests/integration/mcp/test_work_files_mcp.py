"""Issue #14 over MCP: ``work_files``/``work_files_base64`` put files next to the program in /work (real server,
real Wasm Python, driven over stdio)."""

from __future__ import annotations

import base64

import pytest
from mcp_support import call, connect, error_text, ok, real_server

pytestmark = pytest.mark.timeout(300)

PROGRAM = """
import os, helper
open("notes.txt", "w").write(open("data.csv").read().upper())
print(os.getcwd(), helper.X, sorted(os.listdir(".")), open("blob.bin", "rb").read().hex())
open("/out/notes.txt", "w").write(open("notes.txt").read())
"""


async def test_work_files_sit_next_to_the_program() -> None:
    async with connect(real_server()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        props = tools["execute_code"].input_schema["properties"]
        assert "/work" in props["work_files"]["description"] and props["work_files_base64"]["description"]
        result = await call(client, "execute_code", language="python", code=PROGRAM,
                            work_files={"helper.py": "X = 42\n", "data.csv": "a,b\n"},
                            work_files_base64={"blob.bin": base64.b64encode(b"\x00\xff").decode()})
    out = ok(result)
    assert out["exit_code"] == 0, out["stderr"]
    assert out["stdout"] == "/work 42 ['blob.bin', 'data.csv', 'helper.py', 'main.py', 'notes.txt'] 00ff\n"
    assert {f["name"]: f.get("text") for f in out["files"]} == {"notes.txt": "A,B\n"}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"work_files": {"main.py": "print(2)"}}, "main.py"),
        ({"work_files": {"../x": "1"}}, "bad file name"),
        ({"work_files": {"a": "1"}, "work_files_base64": {"a": "MQ=="}}, "both"),
        ({"work_files_base64": {"a": "%%%"}}, "not valid base64"),
        ({"work_files": {"a": 1}}, "work_files"),
    ],
)
async def test_bad_work_files_are_tool_errors(arguments: dict[str, object], message: str) -> None:
    async with connect(real_server()) as client:
        result = await call(client, "execute_code", language="python", code="print(1)", **arguments)
    assert message in error_text(result)
