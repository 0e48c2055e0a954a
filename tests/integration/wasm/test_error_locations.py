"""Errors name the user's file and line on the Wasm tier: Python, JavaScript, TypeScript, Lua (issue #17).

Each program fails on a known line while stored under the user's file
name (``Spec.main_file``); the pack's patterns must find that line in the
real output, in the user's file. TypeScript's runtime errors name the
TypeScript's line although the code ran as JavaScript (``tslines``). The
CLI then names the host file as the user typed it (``playground: error at
FILE:LINE``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Spec, find_locations
from playground.packs import javascript, lua, python, typescript
from tests.integration.wasm.test_runtimes import _need

PLAYGROUND = Path(sys.executable).parent / "playground"

#: language -> (file name, program, the lines its error output must name, innermost last)
CASES = {
    "python": ("solver.py", "def f(x):\n    return 1 / x\n\nprint('start')\nf(0)\n", [5, 2]),
    "javascript": ("app.js", "function f(o) {\n  return o.x.y;\n}\nconsole.log('start');\nf({});\n", [2, 5]),
    "typescript": (
        "app.ts",
        "interface P {\n  x: number;\n}\n\ntype Name = string;\n\nfunction f(o: any): number {\n"
        "  return o.x.y;\n}\n\nconst label: Name = 'start';\nconsole.log(label);\nf({} as P);\n",
        [8, 13],
    ),
    "lua": ("game.lua", "local function f(t)\n  return t.x.y\nend\nprint('start')\nf({})\n", [2, 2, 5]),
}
SYNTAX = {
    "python": ("solver.py", "print('a')\nif True\n    pass\n", 2),
    "javascript": ("app.js", "console.log('a');\nlet x = ;\n", 2),
    "typescript": ("app.ts", "const a: number = 1;\nconst b: = 2;\n", 2),
    "lua": ("game.lua", "print('a')\nlocal x = = 1\n", 2),
}


@pytest.fixture(scope="module")
def sb() -> Sandbox:
    return Sandbox(backends=[WasmBackend()], packs=[python.PACK, javascript.PACK, typescript.PACK, lua.PACK])


@pytest.mark.parametrize("lang", sorted(CASES))
async def test_a_runtime_error_names_the_users_file_and_line(sb: Sandbox, lang: str) -> None:
    _need(sb, lang)
    name, code, lines = CASES[lang]
    result = await sb.run(Spec(lang=lang, code=code, main_file=name, limits=Limits(wall_time=20.0)))
    stderr = result.stderr.decode()
    assert result.exit_code == 1 and result.stdout == b"start\n", stderr
    found = find_locations(stderr, sb.pack(lang).error_locations, name)
    assert [loc.line for loc in found] == lines, stderr
    assert f"/work/{name}:" in stderr or f'"/work/{name}"' in stderr


@pytest.mark.parametrize("lang", sorted(SYNTAX))
async def test_a_syntax_error_names_the_users_file_and_line(sb: Sandbox, lang: str) -> None:
    _need(sb, lang)
    name, code, line = SYNTAX[lang]
    result = await sb.run(Spec(lang=lang, code=code, main_file=name, limits=Limits(wall_time=20.0)))
    stderr = result.stderr.decode()
    found = find_locations(stderr, sb.pack(lang).error_locations, name)
    assert result.exit_code != 0 and found and found[0].line == line, stderr


async def test_typescript_without_a_name_is_main_ts(sb: Sandbox) -> None:
    _need(sb, "typescript")
    _, code, lines = CASES["typescript"]
    result = await sb.run(Spec(lang="ts", code=code, limits=Limits(wall_time=20.0)))
    stderr = result.stderr.decode()
    assert [loc.line for loc in find_locations(stderr, typescript.PACK.error_locations, "main.ts")] == lines, stderr


def test_the_cli_names_the_host_file_and_line(sb: Sandbox, tmp_path: Path) -> None:
    _need(sb, "python")
    program = tmp_path / "solver.py"
    program.write_text(CASES["python"][1])
    proc = subprocess.run([str(PLAYGROUND), "run", "--policy", "wasm-only", str(program)], capture_output=True,
                          text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 1
    assert 'File "/work/solver.py", line 5' in proc.stderr
    assert proc.stderr.rstrip().endswith(f"playground: error at {program}:5"), proc.stderr
