"""Lua 5.4 compiled to WASI.

No start-up snapshot (unlike Python and JavaScript): one was built and measured
(a state with its libraries open, entered per run) and was no faster. Opening
Lua's libraries is cheap, and mapping the image and its copy-on-write faults
(``lua_close`` touches the whole heap) cost as much as they saved; the time of a
run is mostly the host's (``bench/oneshot_speed.py``). What our build adds to
Lua (``resources/runtime_sources/lua/playground_lua.c``) is there for speed
too: the attempt hooks are C (a Lua chunk before each program was a tenth of a
hello world), and small blocks come from Lua's own allocator (fewer memory
grows, each a trip through the host's memory accounting).
"""

from playground.core import Editing, InputSyntax, Pack, WasmDriver, WasmSpec
from playground.packs.runtimes import LUA

#: The REPL: our driver script, polling for Ctrl-C. lua.c refuses an -e argument that starts with "-" (the
#: script's comment): ";" is an empty statement.
REPL = WasmDriver(args=("-e", ";{driver}"), script="repl.lua", interrupt="poll")

PACK = Pack(
    name="lua",
    aliases=("lua54",),
    version="Lua 5.4.8",
    extensions=(".lua",),
    wasm=WasmSpec(
        # The in-guest attempt report (os.execute, io.popen, os.getenv) is compiled into lua.wasm
        # (resources/runtime_sources/lua/playground_lua.c): nothing runs before the program.
        module=LUA, args=("{main}", "{args}"), main_file="main.lua", session=REPL,
        typical_start=0.001,  # bench/oneshot_speed.py, Sandbox.run p50 (0.7-1.0 ms with the machine's load)
    ),
    example='print("hello from " .. _VERSION)\n',
    description="Lua 5.4 (in WebAssembly; no os.execute or temp files)",
    # 'lua: /work/main.lua:2: attempt to index...' and traceback lines '\t/work/main.lua:5: in main chunk'.
    error_locations=(r"(?<![^\s:])(?P<file>[^\s:]+\.lua):(?P<line>\d+):",),
    editing=Editing(lexer="lua", indent=2, input_syntax=InputSyntax.LUA),
)
