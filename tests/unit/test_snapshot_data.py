"""The snapshot as pack data (``WasmSnapshot``) and the wasm reader/writer the snapshotter uses (``wasmbin``).

The capture and the runs themselves are tested on the real runtime in
``tests/integration/wasm/test_snapshot.py``.
"""

from __future__ import annotations

import json

import pytest
import wasmtime

from backends.wasm import snapshot, wasmbin
from playground.core import Artifact, InvalidPack, WasmSnapshot, WasmSpec
from playground.packs import javascript, javascript_snapshot, python, python_snapshot
from playground.packs.runtimes import CPYTHON, QUICKJS


def _snap(**kw: object) -> WasmSnapshot:
    fields: dict[str, object] = {
        "artifact_sha256": CPYTHON.sha256, "entry_function": 1, "entry_marker": "main",
        "capture_args": ("-c", "x"), "run_source": "run({argv}, {env})", "cold_env": ("PYTHON*", "TZ"),
    }  # fmt: skip
    fields.update(kw)
    return WasmSnapshot(**fields)  # type: ignore[arg-type]


def test_the_python_pack_pins_its_snapshot_to_its_runtime() -> None:
    spec = python.PACK.wasm
    assert spec is not None and spec.snapshot is not None and spec.module is not None
    assert spec.snapshot.artifact_sha256 == spec.module.sha256 == CPYTHON.sha256
    assert spec.snapshot.entry_function == python_snapshot.PYRUN_SIMPLE_STRING_FLAGS
    assert all(v.wasm.snapshot is None for v in spec.variants)  # the scientific runtime starts cold


def test_a_snapshot_must_match_its_runtime() -> None:
    with pytest.raises(InvalidPack):
        WasmSpec(module=Artifact(name="other.wasm", sha256="0" * 64), snapshot=_snap())
    with pytest.raises(InvalidPack):
        WasmSpec(module=None, snapshot=_snap())
    with pytest.raises(InvalidPack):
        _snap(run_source="run()")
    with pytest.raises(InvalidPack):
        _snap(artifact_sha256="nope")
    assert WasmSpec(module=CPYTHON, snapshot=_snap()).snapshot is not None


def test_variables_read_at_start_up_need_a_cold_start() -> None:
    snap = _snap()
    assert snap.needs_cold_start({"PYTHONPATH": "/x"}) and snap.needs_cold_start({"TZ": "UTC"})
    assert not snap.needs_cold_start({"HOME": "/home/user", "TZX": "1", "MYPYTHON": "1"})


def test_the_payload_is_json_and_a_python_literal() -> None:
    argv = ["python", "-B", "-c", "boot", "/work/main.py", 'quote " and \\ and \n', "\udcff"]
    env = {"HOME": "/home/user", "X": "é"}
    data = snapshot.payload(python_snapshot_spec(), argv, env)
    assert data.endswith(b"\0") and b"\0" not in data[:-1]
    source = data[:-1].decode("utf-8", "surrogatepass")
    call = source[source.index("_playground_run(") + len("_playground_run(") : source.rindex(")")]
    assert eval("[" + call + "]") == [argv, env]  # our own literal
    assert json.loads("[" + call + "]") == [argv, env]


def python_snapshot_spec() -> WasmSnapshot:
    spec = python.PACK.wasm
    assert spec is not None and spec.snapshot is not None
    return spec.snapshot


def test_leb128_round_trips() -> None:
    for value in (0, 1, 63, 64, 127, 128, 624485, 2**32 - 1):
        assert wasmbin.uleb(wasmbin.enc_uleb(value), 0) == (value, len(wasmbin.enc_uleb(value)))
    for value in (0, -1, 63, -64, 64, -65, 0x80000, -(2**31)):
        assert wasmbin.sleb(wasmbin.enc_sleb(value), 0) == (value, len(wasmbin.enc_sleb(value)))


TOY = """
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
  (memory (export "memory") 2)
  (global $sp (mut i32) (i32.const 65536))
  (global i32 (i32.const 7))
  (data (i32.const 1024) "xx __main__\\00")
  (func (export "_start"))
  (func (param i32 i32) (result i32) (drop (i32.const 1027)) (i32.const 0)))
"""


def test_the_code_module_exports_the_entry_and_stack_pointer_and_drops_the_data() -> None:
    wasm = bytes(wasmtime.wat2wasm(TOY))
    snap = _snap(entry_function=2, entry_marker="__main__")
    code, stack_pointer = snapshot.code_module(wasm, snap)
    assert stack_pointer == 65536
    module = wasmtime.Module(wasmtime.Engine(), code)
    names = {e.name for e in module.exports}
    assert {"memory", "_start", snapshot.ENTRY_EXPORT, snapshot.STACK_EXPORT} <= names
    assert dict(wasmbin.sections(code)).get(wasmbin.DATA) == b"\0"
    memory = snapshot.initial_memory(wasm)
    assert len(memory) == 2 * 65536 and memory[1024:1036] == b"xx __main__\0"
    with pytest.raises(snapshot.SnapshotError, match="not \\(i32, i32\\)"):
        snapshot.code_module(wasm, _snap(entry_function=1, entry_marker="__main__"))
    with pytest.raises(snapshot.SnapshotError, match="does not refer"):
        snapshot.code_module(wasm, _snap(entry_function=2, entry_marker="__other__"))
    with pytest.raises(snapshot.SnapshotError, match="imported"):
        snapshot.code_module(wasm, _snap(entry_function=0, entry_marker="__main__"))


def _code_section(*bodies: bytes) -> bytes:
    out = wasmbin.enc_uleb(len(bodies))
    for body in bodies:
        out += wasmbin.enc_uleb(len(body)) + body
    return out


def test_a_string_reference_is_found_in_the_padded_form_a_linker_leaves() -> None:
    """wasm-ld writes a patched address as a 5-byte LEB128 (our QuickJS build); the marker check reads both forms,
    and only the exact address counts."""
    parts = wasmbin.sections(bytes(wasmtime.wat2wasm(TOY)))
    start = b"\x00\x0b"
    for address, found in ((1027, True), (1026, False), (1028, False)):
        entry = b"\x00\x41" + wasmbin.padded_sleb32(address) + b"\x1a\x41\x00\x0b"  # drop (i32.const addr); 0
        patched = [(sid, _code_section(start, entry) if sid == wasmbin.CODE else body) for sid, body in parts]
        wasmtime.Module(wasmtime.Engine(), wasmbin.build(patched))  # still a valid module
        assert wasmbin.references_string(patched, 2, b"__main__") is found, address
        assert wasmbin.sleb(wasmbin.padded_sleb32(address), 0) == (address, 5)
    assert wasmbin.references_string(parts, 2, b"__main__")  # the shortest form, as before


def test_the_javascript_pack_pins_its_snapshot_to_its_runtime() -> None:
    spec = javascript.PACK.wasm
    assert spec is not None and spec.snapshot is not None and spec.module is not None
    assert spec.snapshot.artifact_sha256 == spec.module.sha256 == QUICKJS.sha256
    assert spec.snapshot.entry_function == javascript_snapshot.ENTRY_FUNCTION
    assert spec.snapshot.needs_cold_start({"QJS_STACK_SIZE": "1"}) and not spec.snapshot.needs_cold_start({"X": "1"})
    argv, env = ["javascript", "--", "/work/main.js", '"]}'], {"K": "v\0"}
    data = snapshot.payload(spec.snapshot, argv, env)
    assert json.loads(data[:-1]) == {"argv": argv, "env": env}
