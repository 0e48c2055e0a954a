"""The real MCP server: 'filename' names the program, and 'error_locations' lead to its lines (issue #17)."""

from __future__ import annotations

import pytest
from mcp_support import call, connect, error_text, ok, real_server

pytestmark = pytest.mark.timeout(300)

PROGRAM = "def f(x):\n    return 1 / x\n\nprint('start')\nf(0)\n"


async def test_a_traceback_names_the_given_filename_and_its_lines_come_back() -> None:
    async with connect(real_server("--wasm-only")) as client:
        named = ok(await call(client, "execute_code", language="python", code=PROGRAM, filename="solver.py"))
        default = ok(await call(client, "execute_code", language="python", code=PROGRAM))
        ts = ok(await call(client, "execute_code", language="typescript",
                           code="type N = number;\n\nconst n: N = 1;\nconsole.log(n);\nnull!.x;\n"))
        clean = ok(await call(client, "execute_code", language="python", code="print('fine')\n"))
        refused = await call(client, "execute_code", language="typescript", code="1;", filename="app.js")
        nested = await call(client, "execute_code", language="python", code="1", filename="dir/solver.py")
    assert named["exit_code"] == 1 and 'File "/work/solver.py", line 5' in named["stderr"]
    assert named["error_locations"] == [{"file": "solver.py", "line": 5, "column": None},
                                        {"file": "solver.py", "line": 2, "column": None}]
    assert [loc["line"] for loc in default["error_locations"]] == [5, 2]
    assert default["error_locations"][0]["file"] == "main.py"
    assert ts["exit_code"] == 1 and ts["error_locations"][0]["file"] == "main.ts"
    assert ts["error_locations"][0]["line"] == 5, ts["stderr"]  # the TypeScript's line, not the JavaScript's
    assert clean["error_locations"] == []
    assert "filename 'app.js'" in error_text(refused) and ".ts" in error_text(refused)
    assert "filename 'dir/solver.py'" in error_text(nested)
