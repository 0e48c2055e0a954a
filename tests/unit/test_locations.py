"""Error locations: each pack's patterns on real outputs, captured from real runs (issue #17).

Every text below was printed by the real runtime or compiler in this
sandbox (``Sandbox.run`` on the Wasm tier, or the Docker tier's local
images), with the program stored under the user's file name where the test
says so. ``find_locations`` must find the places in the user's file, in
order, and nothing in other files.
"""

from __future__ import annotations

import time

import pytest

from playground.core import Location, Pack, default_program_file, find_locations, program_file
from playground.core.locations import first_lines
from playground.packs import ALL_PACKS, bash, go, java, javascript, lua, node, python, rust, typescript

PYTHON_RUNTIME = """Traceback (most recent call last):
  File "/work/prog.py", line 5, in <module>
    f(0)
  File "/work/prog.py", line 2, in f
    return 1 / x
           ~~^~~
ZeroDivisionError: division by zero
"""
PYTHON_SYNTAX = """  File "/work/main.py", line 2
    if True
           ^
SyntaxError: expected ':'
"""
PYTHON_OTHER_FILE = """Traceback (most recent call last):
  File "/work/prog.py", line 3, in <module>
    helper.go()
  File "/work/helper.py", line 2, in go
    raise ValueError("no")
  File "/usr/local/lib/python3.12/json/__init__.py", line 346, in loads
ValueError: no
"""
JS_RUNTIME = """Uncaught TypeError: cannot read property 'y' of undefined
    at f (/work/prog.js:2:10)
    at <eval> (/work/prog.js:5:1)
"""
JS_SYNTAX = """Uncaught SyntaxError: unexpected token in expression: ';'
    at /work/main.js:2:9
"""
TS_RUNTIME = """Uncaught TypeError: cannot read property 'y' of undefined
    at f (/work/prog.ts:4:9)
    at <eval> (/work/prog.ts:7:1)
"""
TS_SYNTAX = "prog.ts:2: syntax error: Unexpected token\n"
LUA_RUNTIME = """lua: /work/prog.lua:2: attempt to index a nil value (field 'x')
stack traceback:
\t/work/prog.lua:2: in local 'f'
\t/work/prog.lua:5: in main chunk
\t[C]: in ?
"""
LUA_SYNTAX = "lua: /work/main.lua:2: unexpected symbol near '='\n"


def spans(text: str, pack: Pack, program: str) -> list[tuple[int, int | None, str]]:
    return [(loc.line, loc.column, text[loc.start : loc.end]) for loc in find_locations(text, pack.error_locations,
                                                                                      program)]


def test_python_traceback_names_the_users_file_innermost_last() -> None:
    assert spans(PYTHON_RUNTIME, python.PACK, "prog.py") == [
        (5, None, 'File "/work/prog.py", line 5'),
        (2, None, 'File "/work/prog.py", line 2'),
    ]


def test_python_syntax_error() -> None:
    assert spans(PYTHON_SYNTAX, python.PACK, "main.py") == [(2, None, 'File "/work/main.py", line 2')]


def test_other_files_are_not_the_program() -> None:
    assert [loc.line for loc in find_locations(PYTHON_OTHER_FILE, python.PACK.error_locations, "prog.py")] == [3]
    everything = find_locations(PYTHON_OTHER_FILE, python.PACK.error_locations)
    assert [loc.file for loc in everything] == [
        "/work/prog.py", "/work/helper.py", "/usr/local/lib/python3.12/json/__init__.py"]


def test_javascript_stack_and_syntax_error() -> None:
    assert spans(JS_RUNTIME, javascript.PACK, "prog.js") == [(2, 10, "/work/prog.js:2:10"), (5, 1, "/work/prog.js:5:1")]
    assert spans(JS_SYNTAX, javascript.PACK, "main.js") == [(2, 9, "/work/main.js:2:9")]


def test_typescript_runtime_and_syntax_error() -> None:
    assert spans(TS_RUNTIME, typescript.PACK, "prog.ts") == [(4, 9, "/work/prog.ts:4:9"), (7, 1, "/work/prog.ts:7:1")]
    assert spans(TS_SYNTAX, typescript.PACK, "prog.ts") == [(2, None, "prog.ts:2")]


def test_lua_error_and_traceback() -> None:
    assert [line for line, _, _ in spans(LUA_RUNTIME, lua.PACK, "prog.lua")] == [2, 2, 5]
    assert spans(LUA_SYNTAX, lua.PACK, "main.lua") == [(2, None, "/work/main.lua:2:")]


def test_a_name_inside_a_longer_one_is_not_the_program() -> None:
    text = "  File \"/work/xmain.py\", line 4\n  File \"/tmp/main.py\", line 9\n"
    assert find_locations(text, python.PACK.error_locations, "main.py") == []


def test_first_lines_keeps_order_without_repeats() -> None:
    found = [Location(0, 1, "a", 5), Location(2, 3, "a", 2), Location(4, 5, "a", 5)]
    assert first_lines(found) == [5, 2]


@pytest.mark.parametrize("pack", ALL_PACKS, ids=lambda p: p.name)
def test_every_pack_with_a_language_has_patterns_that_compile(pack: Pack) -> None:
    pack.validate()
    if pack.name != "wasm":
        assert pack.error_locations, f"{pack.name} declares no error locations"


def test_program_file_keeps_the_users_name_where_the_language_takes_it() -> None:
    assert program_file(python.PACK, "/home/me/solver.py") == "solver.py"
    assert program_file(python.PACK, "script") == "script"  # an interpreter takes any name
    assert program_file(go.PACK, "prog") is None  # go build wants .go
    assert program_file(rust.PACK, "my-prog.rs") == "my-prog.rs"
    assert program_file(java.PACK, "Hello.java") == "Hello.java"
    assert program_file(typescript.PACK, "app.js") is None  # the transform wants TypeScript
    assert program_file(node.PACK, "server.js") == "server.js"
    assert program_file(bash.PACK, "..") is None
    assert program_file(lua.PACK, "") is None


def test_default_program_file_per_backend() -> None:
    assert default_program_file(python.PACK, "wasm") == "main.py"
    assert default_program_file(java.PACK, "docker") == "Main.java"
    assert default_program_file(typescript.PACK, "wasm") == "main.ts"


# -- the Docker tier (its local images: bash 5.2, Go 1.19, rustc 1.63, OpenJDK 17, Node 18, CPython 3.11) ----------

BASH_RUNTIME = ('/work/prog.sh: line 3: nope_command: command not found\n'
                '/work/prog.sh: line 4: 1/0: division by 0 (error token is "0")\n')
BASH_SYNTAX = "/work/main.sh: line 2: syntax error near unexpected token `then'\n/work/main.sh: line 2: `if then'\n"
BASH_FORK = "/work/main.sh: fork: retry: Resource temporarily unavailable\n"
GO_COMPILE = "# command-line-arguments\n./prog.go:6:14: undefined: undefinedThing\n"
GO_PANIC = ("panic: runtime error: index out of range [3] with length 1\n\ngoroutine 1 [running]:\nmain.f(...)\n"
            "\t/work/main.go:4\nmain.main()\n\t/work/main.go:8 +0x1d\n")
RUST_COMPILE = ('error[E0308]: mismatched types\n --> /work/my-prog.rs:2:18\n  |\n2 |     let x: i32 = "no";\n'
                "  |            ---   ^^^^ expected `i32`, found `&str`\n")
RUST_PANIC_OLD = ("thread 'main' panicked at 'index out of bounds: the len is 0 but the index is 0', "
                  "/work/main.rs:3:20\n")
RUST_PANIC_NEW = "thread 'main' panicked at /work/main.rs:3:20:\nindex out of bounds: the len is 0 but the index is 0\n"
JAVA_COMPILE = ('/work/Hello.java:3: error: incompatible types: String cannot be converted to int\n'
                '        int x = "no";\n                ^\n1 error\n')
JAVA_RUNTIME = ('Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: Index 3 out of bounds for '
                "length 1\n\tat Main.f(Main.java:3)\n\tat Main.main(Main.java:6)\n")
NODE_RUNTIME = ("/work/app.js:2\n  return o.x.y;\n             ^\n\nTypeError: Cannot read properties of undefined "
                "(reading 'y')\n    at f (/work/app.js:2:14)\n    at Object.<anonymous> (/work/app.js:4:1)\n"
                "    at Module._compile (node:internal/modules/cjs/loader:1364:14)\n")
PYTHON_DOCKER = ('Traceback (most recent call last):\n  File "/work/p.py", line 3, in <module>\n    json.loads(\'{\')\n'
                 '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n'
                 "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 "
                 "(char 1)\n")


def test_bash_errors_and_no_line_in_a_fork_message() -> None:
    assert [line for line, _, _ in spans(BASH_RUNTIME, bash.PACK, "prog.sh")] == [3, 4]
    assert spans(BASH_SYNTAX, bash.PACK, "main.sh")[0] == (2, None, "/work/main.sh: line 2:")
    assert spans(BASH_FORK, bash.PACK, "main.sh") == []


def test_go_compile_error_relative_and_panic_frames() -> None:
    assert spans(GO_COMPILE, go.PACK, "prog.go") == [(6, 14, "./prog.go:6:14")]
    assert [line for line, _, _ in spans(GO_PANIC, go.PACK, "main.go")] == [4, 8]


def test_rust_compile_error_and_panics_old_and_new() -> None:
    assert spans(RUST_COMPILE, rust.PACK, "my-prog.rs") == [(2, 18, "/work/my-prog.rs:2:18")]
    assert spans(RUST_PANIC_OLD, rust.PACK, "main.rs") == [(3, 20, "/work/main.rs:3:20")]
    assert spans(RUST_PANIC_NEW, rust.PACK, "main.rs") == [(3, 20, "/work/main.rs:3:20")]


def test_java_compile_error_and_stack_frames_by_bare_name() -> None:
    assert spans(JAVA_COMPILE, java.PACK, "Hello.java") == [(3, None, "/work/Hello.java:3")]
    assert spans(JAVA_RUNTIME, java.PACK, "Main.java") == [(3, None, "Main.java:3"), (6, None, "Main.java:6")]


def test_node_source_line_and_frames_but_not_its_internals() -> None:
    assert spans(NODE_RUNTIME, node.PACK, "app.js") == [
        (2, None, "/work/app.js:2"), (2, 14, "/work/app.js:2:14"), (4, 1, "/work/app.js:4:1")]


def test_python_on_docker_skips_the_standard_library() -> None:
    assert spans(PYTHON_DOCKER, python.PACK, "p.py") == [(3, None, 'File "/work/p.py", line 3')]


@pytest.mark.parametrize("pack", [p for p in ALL_PACKS if p.error_locations], ids=lambda p: p.name)
def test_every_packs_patterns_scan_a_flood_in_linear_time(pack: Pack) -> None:
    """A run's whole output is scanned on the GUI thread once it ends: a pattern that backtracks over a
    line without separators (``[^\\s:]+\\.js`` from every start) took 0.4 s for 1 MiB of short lines and
    7.7 s for 2000-character lines. Each pattern may start only at a token boundary now."""
    floods = {
        "short lines": ("x" * 63 + "\n") * 16384,
        "long lines": ("x" * 2000 + "\n") * 512,
        "one line": "y" * (1 << 20) + ":1:2",
    }
    for name, text in floods.items():
        started = time.perf_counter()
        find_locations(text, pack.error_locations, "main")
        took = time.perf_counter() - started
        assert took < 0.3, f"{pack.name}: {name}: {took:.2f} s for 1 MiB (a quadratic pattern takes seconds)"
