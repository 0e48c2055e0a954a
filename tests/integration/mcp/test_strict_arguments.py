"""Issue #12, item 7: every tool refuses arguments that are not exactly what its schema says, naming them.

``timeout: true`` used to run with a one-second limit and ``memory: true``
with a one-byte limit (pydantic's lax coercion), and an unknown argument
such as ``"limits": {"wall_time": "1s"}`` was dropped silently, so an
agent believed a limit applied that did not. Now booleans, unknown fields
(top level and nested), strings or objects where numbers are expected,
``null``, NaN (which a JSON client can only send as ``null``), infinities,
huge and non-positive numbers are tool errors that name the argument, and
the guest never runs.

The real CLI and server run on the scripted fake backend in a subprocess,
driven by the SDK's own client; the published input schemas are checked
too (``additionalProperties: false``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import Client
from mcp_support import call, connect, error_text, fake_server, ok

pytestmark = pytest.mark.timeout(120)

NAN = float("nan")
INF = float("inf")
HUGE = 10**400

RUN = {"language": "fl", "code": "print the guest ran"}

#: (tool, arguments, the argument the error must name). Valid calls of each tool plus one bad thing.
BAD: list[tuple[str, dict[str, Any], str]] = [
    # the reported cases
    ("execute_code", {**RUN, "timeout": True}, "timeout"),
    ("execute_code", {**RUN, "memory": True}, "memory"),
    ("execute_code", {**RUN, "limits": {"wall_time": "1s"}}, "limits"),
    # booleans everywhere
    ("execute_code", {**RUN, "max_output": False}, "max_output"),
    ("execute_code", {**RUN, "stdin": True}, "stdin"),
    ("execute_code", {**RUN, "args": [True]}, "args"),
    ("execute_code", {**RUN, "files": {"a.txt": True}}, "files"),
    ("execute_code", {**RUN, "code_encoding": True}, "code_encoding"),
    ("execute_code", {"language": True, "code": "print x"}, "language"),
    ("execute_code", {"language": "fl", "code": True}, "code"),
    # unknown fields, top level and nested
    ("execute_code", {**RUN, "wall_time": "1s"}, "wall_time"),
    ("execute_code", {**RUN, "Timeout": "1s"}, "Timeout"),
    ("execute_code", {**RUN, "files": {"a.txt": {"content": "x", "mode": "0644"}}}, "files"),
    ("execute_code", {**RUN, "args": [{"value": "x"}]}, "args"),
    # strings or other types where numbers are expected, and the reverse
    ("execute_code", {**RUN, "timeout": "soon"}, "timeout"),
    ("execute_code", {**RUN, "timeout": "true"}, "timeout"),
    ("execute_code", {**RUN, "timeout": ""}, "timeout"),
    ("execute_code", {**RUN, "memory": "lots"}, "memory"),
    ("execute_code", {**RUN, "memory": [64]}, "memory"),
    ("execute_code", {**RUN, "max_output": {"bytes": 10}}, "max_output"),
    ("execute_code", {**RUN, "memory": 1.5}, "memory"),
    ("execute_code", {**RUN, "stdin": 5}, "stdin"),
    ("execute_code", {**RUN, "args": "a b"}, "args"),
    # null, NaN, infinities, huge, zero and negative numbers
    ("execute_code", {**RUN, "timeout": None}, "timeout"),
    ("execute_code", {**RUN, "timeout": NAN}, "timeout"),
    ("execute_code", {**RUN, "memory": NAN}, "memory"),
    ("execute_code", {**RUN, "max_output": NAN}, "max_output"),
    ("execute_code", {**RUN, "stdin": NAN}, "stdin"),
    ("execute_code", {**RUN, "files": NAN}, "files"),
    ("execute_code", {**RUN, "timeout": INF}, "timeout"),
    ("execute_code", {**RUN, "timeout": -INF}, "timeout"),
    ("execute_code", {**RUN, "timeout": HUGE}, "timeout"),
    ("execute_code", {**RUN, "memory": HUGE}, "memory"),
    ("execute_code", {**RUN, "timeout": 0}, "timeout"),
    ("execute_code", {**RUN, "timeout": -1.5}, "timeout"),
    ("execute_code", {**RUN, "memory": 0}, "memory"),
    ("execute_code", {**RUN, "max_output": -1}, "max_output"),
    # eval_session
    ("eval_session", {"language": "fl", "code": "set x 1", "timeout": True}, "timeout"),
    ("eval_session", {"language": "fl", "code": "set x 1", "memory": True}, "memory"),
    ("eval_session", {"language": "fl", "code": "set x 1", "max_output": NAN}, "max_output"),
    ("eval_session", {"language": "fl", "code": "set x 1", "limits": {"wall_time": "1s"}}, "limits"),
    ("eval_session", {"language": "fl", "code": "set x 1", "session": "abc"}, "session"),
    ("eval_session", {"language": True, "code": "set x 1"}, "language"),
    ("eval_session", {"language": NAN, "code": "set x 1"}, "language"),
    ("eval_session", {"language": "fl", "code": NAN}, "code"),
    ("eval_session", {"language": "fl", "code": "set x 1", "session_id": True}, "session_id"),
    ("eval_session", {"language": "fl", "code": "set x 1", "session_id": NAN}, "session_id"),
    ("eval_session", {"language": "fl", "code": "set x 1", "session_id": ""}, "session_id"),
    ("eval_session", {"language": "fl", "code": "set x 1", "timeout": "1s", "memory": HUGE}, "memory"),
    # close_session
    ("close_session", {"session_id": True}, "session_id"),
    ("close_session", {"session_id": NAN}, "session_id"),
    ("close_session", {"session_id": 12345}, "session_id"),
    ("close_session", {"session_id": "abc", "force": True}, "force"),
    ("close_session", {}, "session_id"),
    # list_languages takes nothing at all
    ("list_languages", {"verbose": True}, "verbose"),
    ("list_languages", {"filter": NAN}, "filter"),
    ("list_languages", {"limits": {"wall_time": "1s"}}, "limits"),
]


def _id(case: tuple[str, dict[str, Any], str]) -> str:
    tool, arguments, field = case
    value = arguments.get(field, "missing")
    return f"{tool}-{field}-{str(value)[:20]}"


async def test_every_bad_argument_of_every_tool_is_an_error_naming_it() -> None:
    """One server for all cases (a subprocess each would be slow); each case is checked and reported."""
    failures = []
    async with connect(fake_server()) as client:
        for case in BAD:
            tool, arguments, field = case
            result = await client.call_tool(tool, arguments)
            text = result.content[0].text if result.content and result.content[0].type == "text" else ""
            if not result.is_error:
                failures.append(f"{_id(case)}: accepted, got {json.dumps(result.structured_content)[:200]}")
            elif not re.search(rf"(^|\W){re.escape(field)}(\W|$)", text):
                failures.append(f"{_id(case)}: the error does not name {field!r}: {text[:300]}")
            elif "Traceback" in text or len(text) > 3000:
                failures.append(f"{_id(case)}: not a clean message: {text[:300]}")
        assert not failures, f"{len(failures)} of {len(BAD)} cases:\n" + "\n".join(failures)
        await _no_guest_ran_and_no_session_was_left(client)


async def _no_guest_ran_and_no_session_was_left(client: Client) -> None:
    """None of the refused calls ran anything: a session started now is the only one (--max-sessions 8)."""
    sessions = [ok(await call(client, "eval_session", language="fl", code=f"set x {i}"))["session_id"]
                for i in range(8)]
    for sid in sessions:
        ok(await call(client, "close_session", session_id=sid))


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({"timeout": True}, "timeout"), ({"memory": True}, "memory"), ({"limits": {"wall_time": "1s"}}, "limits")],
)
async def test_the_reported_cases_do_not_run_the_guest(arguments: dict[str, Any], field: str) -> None:
    """``timeout: true`` ran with a 1 s limit, ``memory: true`` with 1 byte, ``limits`` was ignored: now refused."""
    async with connect(fake_server()) as client:
        result = await call(client, "execute_code", language="fl", code="print ran", **arguments)
        fine = ok(await call(client, "execute_code", language="fl", code="print ran", timeout=2, memory="64M"))
    text = error_text(result)
    assert re.search(rf"\b{field}\b", text) and "ran" not in text, text
    assert fine["stdout"] == "ran\n" and fine["limits"]["timeout"] == "2s" and fine["limits"]["memory"] == "64M"


async def test_good_arguments_still_work_including_json_encoded_lists() -> None:
    """What is valid stays valid: numbers for limits, unit strings, and args/files as JSON text (some clients)."""
    async with connect(fake_server()) as client:
        out = ok(await call(client, "execute_code", language="fl", code="args\ncat /in/a.txt", timeout=1.5,
                            memory=64 << 20, max_output="64K", args='["x", "y"]', files='{"a.txt": "A"}'))
        sid = ok(await call(client, "eval_session", language="fl", code="set x 1", timeout="2s"))["session_id"]
        again = ok(await call(client, "eval_session", session_id=sid, code="get x"))
        closed = ok(await call(client, "close_session", session_id=sid))
    assert out["stdout"] == "x y\nA" and out["limits"] == {"timeout": "1.5s", "memory": "64M", "max_output": "64K"}
    assert again["stdout"] == "1\n" and closed["closed"] is True


async def test_published_schemas_forbid_unknown_fields_and_null() -> None:
    async with connect(fake_server()) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert set(tools) == {"execute_code", "eval_session", "close_session", "list_languages"}
    for name, schema in tools.items():
        assert schema["additionalProperties"] is False, name
        for prop, spec in schema.get("properties", {}).items():
            kinds = [spec.get("type")] + [alt.get("type") for alt in spec.get("anyOf", [])]
            assert "null" not in kinds and spec.get("default", "") is not None, (name, prop, spec)
    timeout = tools["execute_code"]["properties"]["timeout"]
    assert {"type": "number", "exclusiveMinimum": 0} in timeout["anyOf"]
    assert {"type": "integer", "exclusiveMinimum": 0} in tools["execute_code"]["properties"]["memory"]["anyOf"]
