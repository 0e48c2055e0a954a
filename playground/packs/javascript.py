"""JavaScript on QuickJS-NG compiled to WASI (ES2023, BigInt, console, timers, promises, node-like fs and
stdin, process.env, and Node's CommonJS, path, events, util, assert, crypto, Buffer, URL ...: the driver's
node_compat/), with REPL sessions and web apps served through the handler bridge
(`export default { fetch(request) }`, see packaging/runtimes/quickjs/driver.c)."""

from playground.core import Editing, Pack, WasmDriver, WasmSnapshot, WasmSpec
from playground.packs import javascript_snapshot
from playground.packs.runtimes import QUICKJS

#: The REPL: QuickJS's own (packaging/runtimes/quickjs/driver.c), polling for Ctrl-C.
REPL = WasmDriver(args=("--repl",), interrupt="poll")

#: What marks a JavaScript program as a web server (``Editing.server_signs``); TypeScript and Node share it.
SERVER_SIGNS = (
    (r"(?s)export\s+default\s*\{[^}]*\bfetch\b", "exports a fetch(request) handler"),
    (r"(?<![\w.$])serve\s*\(\s*(?:async\s*)?(?:function\b|\(|\w+\s*=>|[A-Za-z_$][\w$]*\s*\))", "calls serve(handler)"),
    (r"\b(?:Deno|Bun)\.serve\s*\(", "calls Deno.serve / Bun.serve"),
    (r"\bcreateServer\s*\(", "calls createServer()"),
    (r"\.listen\s*\(", "calls listen()"),
)

#: What the driver's JavaScript has not (``WasmSpec.cannot``): time zones beyond UTC and those of major cities
#: (its Intl, ``node_compat/intl.js``, is English with a table of zones), and Node's built-in modules beyond
#: those its compatibility layer gives (its error lists them). Node, on the Docker tier, has both (``node``).
CANNOT = {
    "this sandbox's JavaScript knows UTC and the zones of major cities only": (
        "this WebAssembly JavaScript knows UTC and the time zones of major cities only; the node language has "
        "every time zone on the Docker tier (playground run -l node, with Docker)"
    ),
    "(this sandbox's JavaScript has: ": (
        "this WebAssembly JavaScript has the part of Node's library the error lists, and no npm packages; the "
        "node language has the rest of Node's built-in modules on the Docker tier (playground run -l node, with "
        "Docker); npm packages are on neither"
    ),
}

PACK = Pack(
    name="javascript",
    aliases=("js",),
    version="QuickJS-NG 0.17 (ES2023)",
    extensions=(".js", ".mjs", ".cjs"),
    wasm=WasmSpec(
        module=QUICKJS, args=("--", "{main}", "{args}"), main_file="main.js", session=REPL,
        serve_args=("--serve", "{main}", "{args}"),  # the handler bridge (packaging/runtimes/quickjs/driver.c)
        cannot=CANNOT,
        typical_start=0.0015,  # bench/oneshot_speed.py, Sandbox.run p50 from the snapshot (cold: about 0.005)
        # One-shot runs start from a snapshot of the set-up driver (javascript_snapshot, backends/wasm/snapshot).
        snapshot=WasmSnapshot(
            artifact_sha256=QUICKJS.sha256,
            entry_function=javascript_snapshot.ENTRY_FUNCTION,
            entry_marker=javascript_snapshot.ENTRY_MARKER,
            capture_args=javascript_snapshot.CAPTURE_ARGS,
            run_source=javascript_snapshot.RUN,
            cold_env=javascript_snapshot.COLD_ENV,
        ),
    ),
    example='const xs = [1, 2, 3].map((n) => n * n);\nconsole.log("squares:", xs);\n',
    description="JavaScript (QuickJS-NG in WebAssembly, with Node's fs, path, events, crypto, Buffer, URL ...)",
    # QuickJS: '    at f (/work/main.js:2:10)', a syntax error '    at /work/main.js:2:9'.
    error_locations=(r"(?<![^\s():])(?P<file>[^\s():]+\.[cm]?js):(?P<line>\d+)(?::(?P<col>\d+))?",),
    editing=Editing(lexer="javascript", indent=2, server_signs=SERVER_SIGNS),
)
