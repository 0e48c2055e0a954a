"""Issue #12, item 6: a guest's bytes that are not UTF-8 never cost the agent its result.

A guest can name a file ``/out/<ff fe>.txt`` or print bytes that are not
UTF-8. Such a name used to turn ``execute_code`` into a bare "Error
executing tool" and the agent lost stdout and every other file. Now every
guest-chosen string reaches the result in the lossless escaped form of
``playground.core.guest_text`` with a ``*_escaped: true`` flag next to it.

The real server (``.venv/bin/playground mcp``) on the real Wasm backend is
driven by the SDK's client, in Python and Lua (whose strings are bytes);
the scripted fake backend covers the paths a runtime does not reach easily
(a limit message and a sandbox error that quote such a name).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from mcp_support import call, connect, error_text, fake_server, ok, real_server
from mcp_types import CallToolResult

pytestmark = pytest.mark.timeout(300)

WEIRD = b"\xff\xfe.txt"  # not UTF-8 in any reading
OTHER = b"\xfe\xff.txt"  # a different name that a lossy decoding would merge with WEIRD
STDOUT = b"before \xff\\x41 after\n"  # an undecodable byte next to a literal backslash-escape lookalike

#: What each language runs: /out gets the two weird names, a binary file with a weird name and a normal file;
#: stdout gets ``STDOUT``, stderr an undecodable byte.
PROGRAMS = {
    "python": (
        "import sys\n"
        "open(b'/out/\\xff\\xfe.txt', 'wb').write(b'weird one')\n"
        "open(b'/out/\\xfe\\xff.txt', 'wb').write(b'weird two')\n"
        "open(b'/out/bin\\xff.dat', 'wb').write(bytes(range(256)))\n"
        "open('/out/ok.txt', 'w').write('fine')\n"
        "sys.stdout.buffer.write(b'before \\xff\\\\x41 after\\n')\n"
        "sys.stderr.buffer.write(b'err \\xfe\\n')\n"
        "pass\n"  # as a session eval, a final expression's value would be printed too
    ),
    "lua": (
        'local function put(name, data) local f = assert(io.open(name, "wb")); f:write(data); f:close() end\n'
        'put("/out/\\255\\254.txt", "weird one")\n'
        'put("/out/\\254\\255.txt", "weird two")\n'
        'local all = {} for i = 0, 255 do all[#all + 1] = string.char(i) end\n'
        'put("/out/bin\\255.dat", table.concat(all))\n'
        'put("/out/ok.txt", "fine")\n'
        'io.write("before \\255\\\\x41 after\\n")\n'
        'io.stderr:write("err \\254\\n")\n'
        "local _ = nil\n"
    ),
}


def unescape(text: str) -> bytes:
    """Rebuild the guest's bytes from the escaped form (the inverse an agent would apply)."""
    out = bytearray()
    for match in re.finditer(r"\\\\|\\x([0-9a-f]{2})|[^\\]+", text, re.DOTALL):
        if match.group(0) == "\\\\":
            out += b"\\"
        elif match.group(1):
            out.append(int(match.group(1), 16))
        else:
            out += match.group(0).encode("utf-8")
    return bytes(out)


def check_run(result: CallToolResult) -> dict[str, Any]:
    """The assertions shared by every language and tool: nothing lost, everything escaped losslessly."""
    out = ok(result)  # not a tool error: the result arrived
    assert json.loads(result.content[0].text) == out  # the text block carries the same data, valid JSON
    assert out["stdout_escaped"] is True and unescape(out["stdout"]) == STDOUT, out["stdout"]
    assert out["stdout"] == "before \\xff\\\\x41 after\n"
    assert out["stderr_escaped"] is True and unescape(out["stderr"]) == b"err \xfe\n"
    files = {unescape(f["name"]) if f.get("name_escaped") else f["name"].encode(): f for f in out["files"]}
    assert set(files) == {WEIRD, OTHER, b"bin\xff.dat", b"ok.txt"}, out["files"]
    assert files[WEIRD]["name"] == "\\xff\\xfe.txt" and files[WEIRD]["text"] == "weird one"
    assert files[OTHER]["name"] == "\\xfe\\xff.txt" and files[OTHER]["text"] == "weird two"
    assert files[b"ok.txt"] == {"name": "ok.txt", "size": 4, "delivery": "inline", "text": "fine", "uri": None,
                                "mime_type": "text/plain", "note": None}  # an ordinary name: no flag at all
    binary = files[b"bin\xff.dat"]
    assert binary["name_escaped"] is True and binary["delivery"] == "embedded"
    assert binary["uri"] == "playground://out/bin%FF.dat"  # the exact bytes, percent-encoded
    blob = next(b for b in result.content if b.type == "resource")
    assert blob.resource.uri == binary["uri"] and base64.b64decode(blob.resource.blob) == bytes(range(256))
    return out


@pytest.mark.parametrize("language", sorted(PROGRAMS))
async def test_execute_code_keeps_stdout_and_every_file_despite_non_utf8_names(language: str) -> None:
    """The attack as reported (Python), and the same from Lua, whose strings are plain bytes."""
    async with connect(real_server("--wasm-only")) as client:
        out = check_run(await call(client, "execute_code", language=language, code=PROGRAMS[language]))
        after = ok(await call(client, "execute_code", language=language, code="print(6 * 7)"))
    assert out["status"] == "completed" and out["exit_code"] == 0
    assert after["stdout"] == "42\n" and "stdout_escaped" not in after  # the server is fine afterwards


@pytest.mark.parametrize("language", sorted(PROGRAMS))
async def test_eval_session_keeps_its_output_and_the_session(language: str) -> None:
    async with connect(real_server("--wasm-only")) as client:
        result = await call(client, "eval_session", language=language, code=PROGRAMS[language])
        out = check_run(result)
        sid = out["session_id"]
        again = ok(await call(client, "eval_session", session_id=sid, code="print(6 * 7)"))
        ok(await call(client, "close_session", session_id=sid))
    assert out["session_alive"] is True
    assert again["stdout"] == "42\n" and "stdout_escaped" not in again


async def test_a_limit_message_and_a_sandbox_error_quoting_a_non_utf8_name_still_arrive() -> None:
    """Guest text inside messages: a limit's message (a result) and a sandbox error (a tool error)."""
    async with connect(fake_server()) as client:
        stopped = ok(await call(client, "execute_code", language="fl", code=f"quotahex {WEIRD.hex()}"))
        failed = await call(client, "execute_code", language="fl", code=f"failhex {WEIRD.hex()}")
        stdout = ok(await call(client, "execute_code", language="fl",
                               code=f"printhex {STDOUT.hex()}\neprinthex 5c fe\noutbin {'x' * 3} 00\n"
                                    f"outhex {WEIRD.hex()} data"))
    assert stopped["status"] == "limit_exceeded" and stopped["limit_exceeded"] == "fs_quota"
    assert stopped["message"] == "/out/\\xff\\xfe.txt does not fit"
    assert error_text(failed).endswith(": cannot use \\xff\\xfe.txt")
    assert stdout["stdout"] == "before \\xff\\\\x41 after\n" and stdout["stdout_escaped"] is True
    assert stdout["stderr"] == "\\\\\\xfe" and unescape(stdout["stderr"]) == b"\\\xfe"
    assert [(f["name"], f.get("name_escaped", False)) for f in stdout["files"]] == [
        ("xxx", False), ("\\xff\\xfe.txt", True)]
