"""Raw WASI: the user's own WebAssembly module (preview1 command) is the program."""

from playground.core import Editing, Pack, WasmSpec

PACK = Pack(
    name="wasm",
    aliases=("wasi", "wasip1"),
    version="WASI preview1",
    extensions=(".wasm", ".wat"),
    # module=None: Spec.code is the module's bytes, or a path to a .wasm under /in.
    wasm=WasmSpec(module=None, args=("{args}",), main_file="main.wasm", typical_start=0.0008),
    example="",
    description="your own WASI preview1 module (bytes, or a .wasm given in /in)",
    editing=Editing(lexer="wast", indent=2),
)
