"""Errors name the user's file and line on the Docker tier: bash, Go, Rust, Java, C (issue #17).

The program is stored under the user's file name (``Spec.main_file``);
compilers and runtimes then name it, and the pack's patterns find the
line. Java runs the class named after the file (``{stem}``), Rust
compiles a file whose name is no crate name (``--crate-name main``). The
compiled languages run under their pack defaults (``Pack.limits``).
"""

from __future__ import annotations

import pytest

from backends.docker.engine import Engine
from playground.core import Sandbox, Spec, find_locations
from playground.packs import bash, c, go, java, rust
from tests.integration.docker.conftest import require_image

pytestmark = pytest.mark.timeout(600)

#: (pack, file name, program, lines named, in order)
CASES = {
    "bash": (bash.PACK, "deploy.sh", "echo start\nx=1\nnope_command arg\necho $((1/0))\n", [3, 4]),
    "go": (go.PACK, "prog.go", 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(undefinedThing)\n}\n',
           [6]),
    "rust": (rust.PACK, "my-prog.rs", 'fn main() {\n    let x: i32 = "no";\n    println!("{}", x);\n}\n', [2]),
    "java": (java.PACK, "Hello.java",
             "public class Hello {\n    static int f(int[] a) {\n        return a[3];\n    }\n\n"
             "    public static void main(String[] args) {\n        System.out.println(f(new int[1]));\n    }\n}\n",
             [3, 7]),
    # gcc: '/work/prog.c:4:20: error: ...' and its note on the same place.
    "c": (c.PACK, "prog.c", '#include <stdio.h>\n\nint main(void) {\n    printf("%d\\n", missing);\n    return 0;\n}\n',
          [4, 4]),
}  # fmt: skip


@pytest.mark.parametrize("lang", sorted(CASES))
def test_errors_name_the_users_file_and_line(engine: Engine, lang: str) -> None:
    pack, name, code, lines = CASES[lang]
    require_image(engine, pack)
    from backends.docker import DockerBackend

    backend = DockerBackend(packs=[pack])
    sandbox = Sandbox(backends=[backend], packs=[pack])  # the pack's own default limits, nothing else
    try:
        result = sandbox.run_sync(Spec(lang=lang, code=code, main_file=name))
    finally:
        sandbox.close()
    stderr = result.stderr.decode()
    assert result.exit_code != 0, stderr
    assert name in stderr, stderr
    found = find_locations(stderr, pack.error_locations, name)
    assert [loc.line for loc in found] == lines, stderr
    if lang == "java":
        assert "at Hello.f(Hello.java:3)" in stderr  # it compiled and ran: the class named after the file
    if lang == "c":
        assert "/work/prog.c:4:20: error: 'missing' undeclared" in stderr
