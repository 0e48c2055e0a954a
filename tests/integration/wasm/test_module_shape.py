"""Reading a module's tables from its bytes (``shape``) and planning their charge (``tablelimit``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from backends.wasm import WasmBackend, shape
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.engine import shared_engine
from backends.wasm.shape import ModuleShape, ShapeError, TableDecl
from backends.wasm.tablelimit import ELEMENT_BYTES, GROWTH_SHARE, MAX_TABLES, plan
from playground.core import Artifact
from playground.core.limits import MiB
from playground.packs import runtimes

CASES = {
    "none": ("(module)", ModuleShape()),
    "fixed and growable": (
        "(module (table 3 3 funcref) (table 0 externref) (table 7 100 exnref) (memory 1) (memory 0))",
        ModuleShape(tables=(TableDecl(3, 3), TableDecl(0, None), TableDecl(7, 100)), memories=2),
    ),
    "64-bit indices": ("(module (table i64 10 20 funcref))", ModuleShape(tables=(TableDecl(10, 20),))),
    "typed, with initial values": (
        """(module (type $f (func)) (type $s (struct (field i32)))
             (func $g (type $f))
             (table 4 (ref $f) (ref.func $g))
             (table 5 8 (ref $s) (struct.new $s (i32.add (i32.const 1) (i32.const 2))))
             (table 6 (ref null $s) (ref.null $s)))""",
        ModuleShape(tables=(TableDecl(4, None), TableDecl(5, 8), TableDecl(6, None))),
    ),
    "imports and a custom section first": (
        """(module (@custom "first" (before first) "x")
             (import "wasi_snapshot_preview1" "sched_yield" (func (result i32))) (table 2 funcref))""",
        ModuleShape(tables=(TableDecl(2, None),)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parse_and_read_agree_on_the_declarations(name: str, tmp_path: Path) -> None:
    wat, expected = CASES[name]
    data = bytes(wasmtime.wat2wasm(wat))
    wasmtime.Module.validate(shared_engine().engine, data)  # the walker only ever sees valid modules
    assert shape.parse(data) == expected
    path = tmp_path / "m.wasm"
    path.write_bytes(data)
    assert shape.read(path) == expected


def test_what_is_not_a_core_module_is_refused() -> None:
    with pytest.raises(ShapeError):
        shape.parse(b"(module)")
    with pytest.raises(ShapeError):
        shape.parse(b"\0asm\x01\0\0\0\x04\x05\x01")  # a table section cut short


@pytest.mark.parametrize("artifact", [runtimes.QUICKJS, runtimes.LUA, runtimes.CPYTHON, runtimes.TYPESCRIPT_TRANSFORM])
def test_every_runtime_declares_one_fixed_table_and_gets_its_shape_recorded(artifact: Artifact) -> None:
    backend = WasmBackend()  # the user's cache, where packaging/runtimes/install.py puts runtimes
    artifacts = ArtifactStore(backend.cache_dir)
    missing = artifacts.missing_reason(artifact, artifact.name)
    if missing is not None:
        pytest.skip(missing)
    path = artifacts.verified_path(artifact, artifact.name)
    module = backend.modules.runtime(artifact.sha256, path, label=artifact.name, progress=None)
    recorded = shape.of(module)
    assert recorded == shape.parse(path.read_bytes())
    assert recorded is not None and recorded.memories == 1
    (table,) = recorded.tables
    assert table.maximum == table.minimum > 0
    assert plan(recorded, 128 * MiB).headroom == 0  # fixed tables reserve nothing


def test_a_user_module_gets_its_shape_recorded(backend: WasmBackend) -> None:
    module = backend.modules.user(bytes(wasmtime.wat2wasm("(module (table 9 funcref))")))
    assert shape.of(module) == ModuleShape(tables=(TableDecl(9, None),))


def test_fixed_tables_are_charged_their_size_and_capped_at_it() -> None:
    table_plan = plan(ModuleShape(tables=(TableDecl(10, 10), TableDecl(300, 300))), 64 * MiB)
    assert (table_plan.elements, table_plan.initial, table_plan.headroom) == (300, 310 * ELEMENT_BYTES, 0)


def test_growable_tables_share_a_sixteenth_of_the_limit() -> None:
    limit = 64 * MiB
    tables = (TableDecl(100, None), TableDecl(0, None), TableDecl(5, 5))
    table_plan = plan(ModuleShape(tables=tables), limit)
    assert table_plan.headroom <= limit // GROWTH_SHARE
    assert table_plan.headroom > limit // GROWTH_SHARE - 2 * ELEMENT_BYTES  # as large as one cap allows
    grow = (table_plan.elements - 100) + table_plan.elements
    assert table_plan.headroom == grow * ELEMENT_BYTES


def test_a_declared_maximum_bounds_the_headroom() -> None:
    table_plan = plan(ModuleShape(tables=(TableDecl(0, 1000),)), 64 * MiB)
    assert (table_plan.elements, table_plan.headroom) == (1000, 1000 * ELEMENT_BYTES)


def test_an_unknown_shape_reserves_the_whole_share() -> None:
    table_plan = plan(None, 64 * MiB)
    assert table_plan.tables == MAX_TABLES
    assert table_plan.elements * MAX_TABLES * ELEMENT_BYTES == table_plan.headroom <= 64 * MiB // GROWTH_SHARE
