"""Programs written for Node print on the Wasm tier's JavaScript what they print under Node.

Before, every one of them failed on its first line: QuickJS with our driver
had fs, process and readline, and ``require('path')``, ``Buffer``,
``crypto.randomUUID()``, ``new URL(...)``, ``module.exports`` and
``require.main === module`` (what AI snippets and students' programs reach
for first) were missing. ``node_compat/`` (embedded in the driver) gives
them; the expectations are Node's own output (``tests/integration/node_compat``,
checked against Node on the Docker tier).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Spec
from playground.packs import javascript, typescript
from tests.integration.node_compat import HERE as NODE_COMPAT
from tests.integration.node_compat import PROGRAMS, NodeProgram
from tests.integration.wasm.conftest import need_runtime


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    packs = [javascript.PACK, typescript.PACK]
    with Sandbox(backends=[WasmBackend()], packs=packs, default_limits=Limits(wall_time=30.0)) as sandbox:
        need_runtime(sandbox, "javascript")
        yield sandbox


#: How a run starts: from the snapshot (whose capture made every module), or cold (a variable the driver reads at
#: set-up: each module's file is compiled when the program first uses it).
STARTS = {"snapshot": {}, "cold": {"QJS_MEMORY_LIMIT": "0"}}


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
async def test_a_node_program_prints_what_node_prints(sb: Sandbox, program: NodeProgram, start: str) -> None:
    """Among them, programs that read ``process.stdin``: it was undefined, and every program that read its
    input the Node way (competitive programming, HackerRank's template) failed on its first line."""
    spec = Spec(lang="javascript", code=program.code, main_file=program.name, stdin=program.stdin, env=STARTS[start])
    result = await sb.run(spec)
    assert (result.exit_code, result.stderr) == (0, b""), result.stderr.decode()
    assert result.stdout.decode() == program.expected.decode()


async def test_the_program_cannot_reach_beyond_the_sandbox_through_them(sb: Sandbox) -> None:
    """The modules are plain JavaScript over the sandbox's WASI: a file outside the tree stays outside, a
    required file is read from the run's own tree, the host's user and machine are not told."""
    code = (
        "const fs = require('fs'), os = require('os'), path = require('path');\n"
        "for (const p of ['/etc/passwd', '../../etc/passwd', path.resolve('/', '..', 'etc', 'hostname')]) {\n"
        "  try { require(p); console.log('loaded', p); } catch (e) { console.log(e.code); }\n"
        "}\n"
        "console.log(os.hostname(), os.userInfo().username, os.cpus().length, os.homedir());\n"
        "console.log(require('crypto').randomBytes(65537).length);\n"
    )
    result = await sb.run(Spec(lang="javascript", code=code))
    assert result.stdout == b"MODULE_NOT_FOUND\nMODULE_NOT_FOUND\nMODULE_NOT_FOUND\nsandbox user 1 /\n", result.stderr
    assert b"RangeError: random: at most 65536 bytes at a time" in result.stderr
    assert "/etc/passwd" in {a.target for a in result.attempts}  # what it tried is reported as its own


async def test_a_missing_module_names_what_there_is(sb: Sandbox) -> None:
    spec = Spec(lang="javascript", code="require('express')")
    result = await sb.run(spec)
    assert result.exit_code == 1
    assert b"Cannot find module 'express' (this sandbox's JavaScript has: assert, assert/strict, buffer, " in (
        result.stderr
    )
    said = sb.hint(spec, result) or ""
    assert said.startswith("this WebAssembly JavaScript has the part of Node's library the error lists"), said
    # A file of the program's own that is not there is the program's mistake: no hint about Node.
    spec = Spec(lang="javascript", code="require('./helpers')")
    result = await sb.run(spec)
    assert b"Cannot find module './helpers'" in result.stderr and sb.hint(spec, result) is None


async def test_typescript_has_them_too(sb: Sandbox) -> None:
    code = (
        "import { join } from 'path';\nimport { createHash } from 'crypto';\n"
        "const u: URL = new URL('https://a.b/c?d=1');\n"
        "const h = createHash('sha256').update('').digest('hex');\n"
        "console.log(join('x', 'y'), h.slice(0, 8), u.searchParams.get('d'));\n"
    )
    result = await sb.run(Spec(lang="typescript", code=code))
    assert result.stdout == b"x/y e3b0c442 1\n", result.stderr


async def test_a_session_has_them(sb: Sandbox) -> None:
    """A session starts cold: each module is made as an input first uses it."""
    session = await sb.new_session("javascript")
    try:
        first = await session.eval("const path = require('path'); path.join('a', '..', 'b')")
        second = await session.eval(
            "new URL('http://h/x?q=1').searchParams.get('q') + Buffer.from('hi').toString('hex')"
        )
    finally:
        session.close()
    assert (first.stdout, second.stdout) == (b"b\n", b"16869\n"), (first.stderr, second.stderr)


async def test_intl_is_english_and_says_so_and_a_zone_it_lacks_is_refused_with_a_hint(sb: Sandbox) -> None:
    """``node_compat/intl.js``: another locale falls back to en-US as the standard has it (resolvedOptions says
    which), and a time zone outside its table is a RangeError whose hint names the node language."""
    code = (
        "console.log((1234.5).toLocaleString('de-DE'), new Intl.NumberFormat('fr-FR').resolvedOptions().locale);\n"
        "console.log(Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(3),"
        " Intl.NumberFormat() instanceof Intl.NumberFormat, typeof Intl, String(Intl));\n"
        "console.log(['b', 'a', 'C'].sort(Intl.Collator().compare).join(''), ['b', 'a', 'C'].sort().join(''));\n"
        "new Date(0).toLocaleString('en-US', { timeZone: 'Asia/Yerevan' });\n"
    )
    spec = Spec(lang="javascript", code=code)
    result = await sb.run(spec)
    assert result.stdout == b"1,234.5 en-US\n$3.00 true object [object Intl]\nabC Cab\n"
    assert b"RangeError: Invalid time zone specified: Asia/Yerevan" in result.stderr
    assert "time zones of major cities only" in (sb.hint(spec, result) or "")


async def test_every_time_zone_intl_knows_tells_the_time_node_tells(sb: Sandbox) -> None:
    """``node_compat/intl.js``'s zone table, at instants on both sides of this year's daylight-saving changes.

    ``node_compat/zones/zones.expected`` is Node 20.20's output (ICU 78.2, time zone data 2025c). The Docker
    tier's Node 18 cannot check it, unlike the programs beside it: its time zone data predates Mexico's end
    of daylight saving (2022) and Kazakhstan's single zone (2024).
    """
    zones = NODE_COMPAT / "zones"
    result = await sb.run(Spec(lang="javascript", code=(zones / "zones.js").read_text()))
    assert result.stderr == b""
    assert result.stdout.decode().splitlines() == (zones / "zones.expected").read_text().splitlines()

