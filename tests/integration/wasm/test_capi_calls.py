"""``capi.call_i32`` and ``capi.set_i32_global``: a run's entry called without wasmtime-py's type reading.

What must hold is what ``Func.__call__`` and ``Global.set_value`` gave:
the result, wasmtime's own type check (a wrong value count, result count
or type is an error and the function never runs), a trap as ``Trap``.
"""

from __future__ import annotations

import pytest
import wasmtime

from backends.wasm import capi

WAT = """
(module
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (global $wide (export "wide") (mut i64) (i64.const 0))
  (global $fixed (export "fixed") i32 (i32.const 7))
  (func (export "sub") (param i32 i32) (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.sub (local.get 0) (local.get 1)))
  (func (export "nothing") (global.set $calls (i32.add (global.get $calls) (i32.const 1))))
  (func (export "wide_result") (result i64) (i64.const 1))
  (func (export "boom") unreachable))
"""


@pytest.fixture
def module() -> tuple[wasmtime.Store, wasmtime.Instance]:
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    return store, wasmtime.Instance(store, wasmtime.Module(engine, WAT), [])


def _export(store: wasmtime.Store, instance: wasmtime.Instance, name: str) -> object:
    return instance.exports(store)[name]


def _calls(store: wasmtime.Store, instance: wasmtime.Instance) -> int:
    calls = _export(store, instance, "calls")
    assert isinstance(calls, wasmtime.Global)
    value = calls.value(store)
    assert isinstance(value, int)
    return value


def test_a_call_gives_the_functions_result_signed_as_func_call_does(
    module: tuple[wasmtime.Store, wasmtime.Instance],
) -> None:
    store, instance = module
    sub, nothing = _export(store, instance, "sub"), _export(store, instance, "nothing")
    assert isinstance(sub, wasmtime.Func) and isinstance(nothing, wasmtime.Func)
    assert capi.call_i32(store, sub, 10, 3, results=1) == 7 == sub(store, 10, 3)
    assert capi.call_i32(store, sub, 3, 10, results=1) == -7 == sub(store, 3, 10)
    assert capi.call_i32(store, nothing, results=0) is None
    assert _calls(store, instance) == 5  # each call ran once


@pytest.mark.parametrize(
    ("name", "args", "results"),
    [("sub", (1,), 1), ("sub", (1, 2, 3), 1), ("sub", (1, 2), 0), ("nothing", (), 1), ("wide_result", (), 1)],
)
def test_a_call_that_does_not_fit_the_type_is_an_error_and_runs_nothing(
    module: tuple[wasmtime.Store, wasmtime.Instance], name: str, args: tuple[int, ...], results: int
) -> None:
    store, instance = module
    func = _export(store, instance, name)
    assert isinstance(func, wasmtime.Func)
    with pytest.raises(wasmtime.WasmtimeError):
        capi.call_i32(store, func, *args, results=results)
    if name != "wide_result":  # that one ran (its result kind is checked after): it counts nothing
        assert _calls(store, instance) == 0


def test_a_trap_is_raised_as_a_trap(module: tuple[wasmtime.Store, wasmtime.Instance]) -> None:
    store, instance = module
    boom = _export(store, instance, "boom")
    assert isinstance(boom, wasmtime.Func)
    with pytest.raises(wasmtime.Trap) as info:
        capi.call_i32(store, boom, results=0)
    assert info.value.trap_code == wasmtime.TrapCode.UNREACHABLE


def test_an_i32_global_is_set_and_others_are_refused(module: tuple[wasmtime.Store, wasmtime.Instance]) -> None:
    store, instance = module
    calls, wide, fixed = (_export(store, instance, name) for name in ("calls", "wide", "fixed"))
    assert isinstance(calls, wasmtime.Global) and isinstance(wide, wasmtime.Global)
    assert isinstance(fixed, wasmtime.Global)
    capi.set_i32_global(store, calls, -5)
    assert calls.value(store) == -5
    for refused in (wide, fixed):  # an i64 global, an immutable one
        with pytest.raises(wasmtime.WasmtimeError):
            capi.set_i32_global(store, refused, 1)
    assert wide.value(store) == 0 and fixed.value(store) == 7
