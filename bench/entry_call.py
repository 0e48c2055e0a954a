"""What calling a run's entry costs: wasmtime-py's ``Func.__call__`` / ``Global.set_value`` vs ``capi.call_i32``.

    python bench/entry_call.py [--rounds R] [--block B] [--langs javascript lua python]

Two tables, both sides in one process:

* **call**: µs per call on a small module: an entry of two i32s with an
  i32 result (a snapshot run's), ``_start`` (no values), setting an i32
  global (the stack pointer of a snapshot run);
* **run**: p50 and CPU per hello-world ``Sandbox.run`` with the runner's
  calls made each way, in alternating blocks of ``B`` runs (``R`` rounds),
  and in how many block pairs ``capi`` used less CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import wasmtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend, capi
from playground.core import Limits, Sandbox, Spec
from playground.packs import ALL_PACKS

WAT = """(module
  (global (export "sp") (mut i32) (i32.const 0))
  (func (export "entry") (param i32 i32) (result i32) i32.const 0)
  (func (export "_start")))"""
HELLO = {"javascript": 'console.log("hello world")', "lua": 'print("hello world")', "python": 'print("hello world")'}
CALLS = 20_000


def _per_call(work: Callable[[], object]) -> float:
    work()
    start = time.perf_counter()
    for _ in range(CALLS):
        work()
    return (time.perf_counter() - start) / CALLS * 1e6


def call_table() -> None:
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    exports = wasmtime.Instance(store, wasmtime.Module(engine, WAT), []).exports(store)
    entry, start, sp = exports["entry"], exports["_start"], exports["sp"]
    assert isinstance(entry, wasmtime.Func) and isinstance(start, wasmtime.Func) and isinstance(sp, wasmtime.Global)
    rows = [
        ("entry (i32, i32) -> i32", lambda: entry(store, 64, 0), lambda: capi.call_i32(store, entry, 64, 0, results=1)),
        ("_start () -> ()", lambda: start(store), lambda: capi.call_i32(store, start, results=0)),
        ("set an i32 global", lambda: sp.set_value(store, 4096), lambda: capi.set_i32_global(store, sp, 4096)),
    ]  # fmt: skip
    print(f"call: µs per call, {CALLS} calls each")
    for name, slow, fast in rows:
        before, after = _per_call(slow), _per_call(fast)
        print(f"  {name:24s} wasmtime-py {before:6.2f} | capi {after:5.2f} | {before / after:4.1f}x")


class _Toggle:
    """The runner's calls through capi (``on``) or through wasmtime-py, switched between blocks."""

    def __init__(self) -> None:
        self.on = True
        self._call, self._set = capi.call_i32, capi.set_i32_global
        capi.call_i32 = self.call_i32
        capi.set_i32_global = self.set_i32_global

    def call_i32(self, store: wasmtime.Store, func: wasmtime.Func, *args: int, results: int) -> Any:
        return self._call(store, func, *args, results=results) if self.on else func(store, *args)

    def set_i32_global(self, store: wasmtime.Store, global_: wasmtime.Global, value: int) -> None:
        if self.on:
            self._set(store, global_, value)
        else:
            global_.set_value(store, value)


async def run_table(langs: list[str], rounds: int, block: int) -> None:
    toggle = _Toggle()
    with Sandbox(backends=[WasmBackend(packs=ALL_PACKS)], packs=ALL_PACKS, default_limits=Limits(wall_time=30)) as sb:
        print(f"run: hello world, {rounds} rounds of {block} runs each way, alternating (ms)")
        for lang in langs:
            spec = Spec(lang=lang, code=HELLO[lang])
            for _ in range(30):
                await sb.run(spec)
            times: dict[bool, list[float]] = {True: [], False: []}
            cpu: dict[bool, list[float]] = {True: [], False: []}
            for index in range(rounds):
                for on in (True, False) if index % 2 else (False, True):
                    toggle.on = on
                    began = time.process_time()
                    for _ in range(block):
                        start = time.perf_counter()
                        result = await sb.run(spec)
                        times[on].append(time.perf_counter() - start)
                        assert result.exit_code == 0, result.stderr
                    cpu[on].append((time.process_time() - began) / block)
            fewer = sum(1 for fast, slow in zip(cpu[True], cpu[False], strict=True) if fast < slow)
            slow, fast = statistics.median(times[False]) * 1e3, statistics.median(times[True]) * 1e3
            slow_cpu, fast_cpu = statistics.median(cpu[False]) * 1e3, statistics.median(cpu[True]) * 1e3
            print(
                f"  {lang:10s} wasmtime-py p50 {slow:.3f} (CPU {slow_cpu:.3f}) | capi p50 {fast:.3f} "
                f"(CPU {fast_cpu:.3f}) | capi used less CPU in {fewer}/{rounds} pairs"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=40)
    parser.add_argument("--langs", nargs="+", default=list(HELLO), choices=list(HELLO))
    args = parser.parse_args()
    call_table()
    asyncio.run(run_table(args.langs, args.rounds, args.block))


if __name__ == "__main__":
    main()
