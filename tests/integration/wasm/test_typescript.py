"""TypeScript: transpiled inside Wasm by the OXC reactor, then run on QuickJS."""

from __future__ import annotations

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Spec
from playground.packs import typescript
from tests.integration.wasm.test_runtimes import _need


@pytest.fixture(scope="module")
def ts() -> Sandbox:
    sb = Sandbox(backends=[WasmBackend()], packs=[typescript.PACK])
    _need(sb, "typescript")
    return sb


async def run(sb: Sandbox, code: str) -> tuple[int, str, str]:
    result = await sb.run(Spec(lang="ts", code=code, limits=Limits(wall_time=20.0)))
    return result.exit_code, result.stdout.decode(), result.stderr.decode()


async def test_types_enums_generics_interfaces_namespaces(ts: Sandbox) -> None:
    code = """
enum Color { Red, Green = 5, Blue }
interface Point { x: number; y: number }
type Pair<T> = [T, T];
function first<T>(pair: Pair<T>): T { return pair[0]; }
namespace Geometry { export const origin: Point = { x: 0, y: 0 }; }
class Counter {
  constructor(private count: number = 0) {}
  inc(): number { return ++this.count; }
}
const p = { x: 3, y: 4 } satisfies Point;
let big: bigint = 2n ** 64n;
console.log(Color.Green, Color[6], first<string>(["a", "b"]), Geometry.origin.x, new Counter(1).inc(),
            Math.hypot(p.x, p.y), big.toString());
"""
    assert await run(ts, code) == (0, "5 Blue a 0 2 5 18446744073709551616\n", "")


async def test_syntax_error_points_at_the_ts_line(ts: Sandbox) -> None:
    code = "let a: number = 1;\nconst b = 2;\nfunction broken(x: string {\n  return x;\n}\nconsole.log(a);\n"
    exit_code, out, err = await run(ts, code)
    assert exit_code == 1 and out == ""
    assert err.startswith("main.ts:3: syntax error:"), err


async def test_unclosed_bracket_points_at_the_end(ts: Sandbox) -> None:
    exit_code, _, err = await run(ts, "let a = 1;\nconsole.log((a;\n")
    assert exit_code == 1
    assert err.startswith("main.ts:2: syntax error:"), err


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("function log(t: any, k: string, d: PropertyDescriptor) {}\nclass Calc {\n  @log\n  add() {}\n}\n", 3),
        ("function sealed(c: Function) {}\n@sealed\nclass A {}\n", 2),
        ("function f(t: any, k: string) {}\nclass C {\n  @f name: string = 'x';\n}\n", 3),
    ],
)
async def test_a_decorator_fails_where_it_stands_with_a_hint_that_names_it(ts: Sandbox, code: str, line: int) -> None:
    """QuickJS's syntax errors for a decorator the transform left in never say "decorator" (``cannot_parse``)."""
    spec = Spec(lang="typescript", code=code)
    result = await ts.run(spec)
    assert result.exit_code == 1 and b"SyntaxError" in result.stderr and f"main.ts:{line}:".encode() in result.stderr
    assert (ts.hint(spec, result) or "").startswith("decorators (@name) do not run here")


async def test_runtime_error_is_the_programs_not_the_transpilers(ts: Sandbox) -> None:
    exit_code, _, err = await run(ts, "const x: any = null;\nx.boom();\n")
    assert exit_code == 1 and "TypeError" in err


async def test_hostile_inputs_end_cleanly(ts: Sandbox) -> None:
    deep = "let x = " + "(" * 50_000 + "1" + ")" * 50_000 + ";\nconsole.log(x)\n"
    exit_code, _, err = await run(ts, deep)
    assert exit_code != 0 and err
    exit_code, out, _ = await run(ts, "")
    assert (exit_code, out) == (0, "")
