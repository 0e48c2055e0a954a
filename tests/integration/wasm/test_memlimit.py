"""The host memory creator: exact limits, recorded refusals, guard pages, no leaks."""

from __future__ import annotations

import threading
from collections.abc import Callable

import wasmtime

from backends.wasm.memlimit import MemoryBudget, MemoryCreator, budget_scope

WAT = """(module (memory (export "memory") 2)
 (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
 (func (export "poke") (param i32 i32) (i32.store8 (local.get 0) (local.get 1)))
 (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0))))"""
PAGE = 65536


def on_thread(fn: Callable[[], None]) -> None:
    errors: list[BaseException] = []

    def body() -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def engine_with(creator: MemoryCreator) -> wasmtime.Engine:
    config = wasmtime.Config()
    config.memory_may_move = False
    creator.install(config)
    return wasmtime.Engine(config)


def test_refusal_is_recorded_and_memory_works_below_the_limit() -> None:
    creator = MemoryCreator()
    engine = engine_with(creator)
    module = wasmtime.Module(engine, WAT)
    budget = MemoryBudget(10 << 20)

    def run() -> None:
        with budget_scope(budget):
            store = wasmtime.Store(engine)
            exports = wasmtime.Instance(store, module, []).exports(store)
            assert exports["grow"](store, 16384) == -1  # 1 GiB at once
            assert budget.refused and budget.requested > 1 << 30
            assert exports["grow"](store, 10) == 2
            exports["poke"](store, 12 * PAGE - 1, 77)
            assert exports["peek"](store, 12 * PAGE - 1) == 77
            try:
                exports["poke"](store, 12 * PAGE, 1)
            except wasmtime.Trap as trap:
                assert trap.trap_code is wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS
            else:
                raise AssertionError("a store past the accessible size must trap")
            store.close()

    on_thread(run)
    assert budget.peak == 12 * PAGE
    assert creator.live == 0


def test_initial_memory_above_the_budget_fails_instantiation() -> None:
    creator = MemoryCreator()
    engine = engine_with(creator)
    module = wasmtime.Module(engine, WAT)
    budget = MemoryBudget(PAGE)

    def run() -> None:
        with budget_scope(budget):
            store = wasmtime.Store(engine)
            try:
                wasmtime.Instance(store, module, [])
            except wasmtime.WasmtimeError:
                pass
            else:
                raise AssertionError("instantiation must fail")
            store.close()

    on_thread(run)
    assert budget.refused


def test_no_budget_means_no_limit_and_memories_are_released() -> None:
    creator = MemoryCreator()
    engine = engine_with(creator)
    module = wasmtime.Module(engine, WAT)

    def run() -> None:
        for _ in range(50):
            store = wasmtime.Store(engine)
            exports = wasmtime.Instance(store, module, []).exports(store)
            assert exports["grow"](store, 100) == 2
            store.close()

    on_thread(run)
    assert creator.live == 0
