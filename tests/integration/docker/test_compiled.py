"""The compiled packs (go, rust, java, c): hello world and compile errors, when their images exist."""

from __future__ import annotations

import signal

import pytest

from backends.docker.engine import Engine
from playground.core import Pack, Sandbox, Spec
from playground.packs import c, go, java, rust

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
    (
        c.PACK,
        '#include <stdio.h>\nint main(int argc, char **argv) { printf("hello from go %d\\n", argc); return 0; }\n',
        "int main(void) { return undefined_thing; }\n",
        b"error: 'undefined_thing' undeclared",
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


async def test_a_c_crash_is_reported_as_the_signal_it_was(sandbox: Sandbox, engine: Engine) -> None:
    """A segmentation fault: the output before it, exit status 128 + SIGSEGV and the shell's own words."""
    require_image(engine, c.PACK)
    code = (
        "#include <stdio.h>\n"
        "int main(void) {\n"
        "    volatile int *p = 0;\n"
        '    printf("before\\n");\n'
        "    fflush(stdout);\n"
        "    *p = 42;\n"
        '    printf("after\\n");\n'
        "    return 0;\n"
        "}\n"
    )
    result = await sandbox.run(Spec(lang="c", code=code, limits=COMPILE_LIMITS))
    assert result.exit_code == 128 + signal.SIGSEGV, result.stderr
    assert result.stdout == b"before\n"
    assert b"Segmentation fault" in result.stderr


async def test_c_runs_under_its_pack_defaults(engine: Engine) -> None:
    """The pack's own limits (``c.LIMITS``) are enough for the example, with nothing else given."""
    require_image(engine, c.PACK)
    from backends.docker import DockerBackend

    backend = DockerBackend(packs=[c.PACK])
    sandbox = Sandbox(backends=[backend], packs=[c.PACK])
    try:
        assert sandbox.default_limits_for("c").memory == c.LIMITS.memory
        result = await sandbox.run(Spec(lang="c", code=c.PACK.example))
    finally:
        sandbox.close()
    assert (result.exit_code, result.stdout, result.stderr) == (0, b"hello from C\n", b"")
    assert result.usage.peak_memory < (c.LIMITS.memory or 0) // 2
