"""TypeScript: transpiled to JavaScript inside Wasm (OXC), then run on QuickJS-NG."""

from playground.core import Editing, Pack, WasmSpec
from playground.packs.javascript import CANNOT as JAVASCRIPT_CANNOT
from playground.packs.javascript import PACK as JAVASCRIPT
from playground.packs.javascript import SERVER_SIGNS
from playground.packs.runtimes import QUICKJS, TYPESCRIPT_TRANSFORM

#: A decorator: ``@name`` (``@a.b(...)``) at the start of a line, or before a parameter.
DECORATOR = r"(?m)^[ \t]*@[A-Za-z_$][\w$.]*|[(,][ \t]*@[A-Za-z_$][\w$.]*[ \t(]"
DECORATORS = (
    "decorators (@name) do not run here: the transform strips the TypeScript's types but leaves its decorators "
    "in, and this WebAssembly JavaScript (QuickJS) has no decorators; call the decorator function on the class "
    "or its method yourself, after the class"
)

PACK = Pack(
    name="typescript",
    aliases=("ts",),
    version="TypeScript via OXC (quickjs-rs 0.2.6) on QuickJS-NG 0.17",
    extensions=(".ts", ".mts", ".cts"),
    wasm=WasmSpec(
        module=QUICKJS,
        args=("--", "{main}", "{args}"),
        # The JavaScript is stored under the TypeScript's name, on the TypeScript's lines (backends/wasm/tslines.py),
        # so a runtime error names main.ts and the line the user wrote.
        main_file="main.ts",
        cannot=JAVASCRIPT_CANNOT,
        cannot_parse={DECORATOR: DECORATORS},
        transform="typescript",
        transformer=TYPESCRIPT_TRANSFORM,
        typical_start=0.004,  # bench/oneshot_speed.py, Sandbox.run p50 (transform included)
        # The transformed program runs from JavaScript's snapshot (the same runtime, capture and image).
        snapshot=JAVASCRIPT.wasm.snapshot if JAVASCRIPT.wasm is not None else None,
    ),
    example="function greet(name: string): string {\n  return `hello, ${name}`;\n}\nconsole.log(greet(\"ts\"));\n",
    description="TypeScript (types stripped in WebAssembly, run on QuickJS-NG)",
    # Runtime errors '    at f (/work/main.ts:4:9)' (the TypeScript's lines), syntax errors 'main.ts:2: syntax error'.
    error_locations=(r"(?<![^\s():])(?P<file>[^\s():]+\.[cm]?ts):(?P<line>\d+)(?::(?P<col>\d+))?",),
    editing=Editing(lexer="typescript", indent=2, server_signs=SERVER_SIGNS),
)
