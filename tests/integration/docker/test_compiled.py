"""The compiled packs (go, rust, java): hello world and compile errors, when their images exist."""

from __future__ import annotations

import pytest

from backends.docker.engine import Engine
from playground.core import Pack, Sandbox, Spec
from playground.packs import go, java, rust

from .conftest import COMPILE_LIMITS, require_image

pytestmark = pytest.mark.slow

CASES = [
    (
        go.PACK,
        'package main\nimport ("fmt"; "os")\nfunc main() { fmt.Println("hello from go", len(os.Args)) }\n',
        "package main\nfunc main() { undefined_thing() }\n",
        b"undefined",
    ),
    (
        rust.PACK,
        'fn main() { println!("hello from go {}", std::env::args().count()); }\n',
        'fn main() { let x: i32 = "no"; }\n',
        b"mismatched types",
    ),
    (
        java.PACK,
        "public class Main {\n"
        '    public static void main(String[] a) { System.out.println("hello from go " + (a.length + 1)); }\n'
        "}\n",
        'public class Main { void f() { int x = "no"; } }\n',
        b"incompatible types",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0].name for c in CASES])
async def test_compile_and_run(sandbox: Sandbox, engine: Engine, case: tuple[Pack, str, str, bytes]) -> None:
    pack, good, bad, message = case
    require_image(engine, pack)
    result = await sandbox.run(Spec(lang=pack.name, code=good, args=["x"], limits=COMPILE_LIMITS))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == b"hello from go 2\n"

    failed = await sandbox.run(Spec(lang=pack.name, code=bad, limits=COMPILE_LIMITS))
    assert failed.exit_code != 0
    assert message in failed.stderr
    assert failed.stdout == b""
