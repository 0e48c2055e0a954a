"""Wasm REPL sessions per language: start-up and eval latency, warm module cache.

    python bench/wasm_sessions.py [-n EVALS] [-s SESSIONS]

For each language: p50/p95 of ``Sandbox.new_session`` until the driver's
first prompt (instantiate + interpreter start + driver start), p50/p95 of
``Session.eval`` of a one-liner that echoes a value (the full path: frame
on stdin, wake the worker thread, evaluate, flush, status on the control
channel, the worker blocking on stdin again, result back to the event
loop), and of an eval that does a little work (a 1,000-step loop).

Then Python side by side, interleaved in one run (issue #18): a session's
open and ``Session.reset()`` (after an eval, so the reset throws real state
away) from the session snapshot (the default) and cold (a copy of the pack
without ``session_snapshot``: what every session did before), beside a
one-shot ``Sandbox.run`` of ``print(1)`` and the native ``python3 -c
'print(1)'`` as a process. Targets: open p50 <= 20 ms, reset p50 no slower
than a one-shot start.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from playground.core import Pack, Sandbox, Spec
from playground.packs import javascript, lua, python

#: The system's interpreter (a pyenv shim on PATH would time a shell script too).
NATIVE = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if Path(p).is_file()), None) or (
    shutil.which("python3") or sys.executable
)


def cold_pack() -> Pack:
    """The Python pack as it was before session snapshots: every session starts the interpreter cold."""
    assert python.PACK.wasm is not None
    return dataclasses.replace(python.PACK, wasm=dataclasses.replace(python.PACK.wasm, session_snapshot=None))

CASES = {
    "javascript": ("1 + 1", "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"),
    "lua": ("1 + 1", "local s = 0 for i = 1, 1000 do s = s + i end return s"),
    "python": ("1 + 1", "sum(i for i in range(1000))"),
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def python_side_by_side(backend: WasmBackend, rounds: int) -> None:
    snap = Sandbox(backends=[backend], packs=[python.PACK])
    cold = Sandbox(backends=[backend], packs=[cold_pack()])
    times: dict[str, list[float]] = {
        name: [] for name in ("open, snapshot", "open, cold", "reset, snapshot", "reset, cold")
    }
    times["one-shot Sandbox.run print(1)"] = []
    times["native python3 -c 'print(1)'"] = []
    for sb in (snap, cold):  # warm-up: compile, load or capture everything once
        (await sb.new_session("python")).close()
        await sb.run(Spec(lang="python", code="print(1)"))
    for _ in range(rounds):
        for label, sb in (("snapshot", snap), ("cold", cold)):
            started = time.perf_counter()
            s = await sb.new_session("python")
            times[f"open, {label}"].append(time.perf_counter() - started)
            await s.eval("import typing\nx = 1\ntyping.List = None")
            started = time.perf_counter()
            await s.reset()
            times[f"reset, {label}"].append(time.perf_counter() - started)
            s.close()
        started = time.perf_counter()
        result = await snap.run(Spec(lang="python", code="print(1)"))
        times["one-shot Sandbox.run print(1)"].append(time.perf_counter() - started)
        assert result.stdout == b"1\n", result.stderr
        started = time.perf_counter()
        subprocess.run([NATIVE, "-c", "print(1)"], check=True, capture_output=True)
        times["native python3 -c 'print(1)'"].append(time.perf_counter() - started)
    native = statistics.median(times["native python3 -c 'print(1)'"])
    print(f"\npython, {rounds} rounds interleaved (python3 = {NATIVE}); ms")
    print(f"  {'':32s} {'p50':>7s} {'p95':>7s} {'min':>7s}")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"  {name:32s} {1e3 * p50:7.1f} {1e3 * pct(values, 0.95):7.1f} {1e3 * min(values):7.1f}"
              f"   {p50 / native:5.2f}x native")  # fmt: skip


async def main(evals: int, sessions: int) -> None:
    backend = WasmBackend()
    sb = Sandbox(backends=[backend], packs=[javascript.PACK, lua.PACK, python.PACK])
    print(f"{'language':<11} {'start p50':>10} {'start p95':>10} {'echo p50':>9} {'echo p95':>9} {'loop p50':>9}")
    for lang, (echo, loop) in CASES.items():
        warm = await sb.new_session(lang)  # compile/deserialize once
        await warm.eval(echo)
        warm.close()
        starts: list[float] = []
        for _ in range(sessions):
            t = time.perf_counter()
            s = await sb.new_session(lang)
            starts.append(time.perf_counter() - t)
            s.close()
        s = await sb.new_session(lang)
        echoes: list[float] = []
        loops: list[float] = []
        for _ in range(evals):
            t = time.perf_counter()
            await s.eval(echo)
            echoes.append(time.perf_counter() - t)
            t = time.perf_counter()
            await s.eval(loop)
            loops.append(time.perf_counter() - t)
        s.close()
        ms = 1000
        print(
            f"{lang:<11} {statistics.median(starts) * ms:>8.1f}ms {pct(starts, 0.95) * ms:>8.1f}ms "
            f"{statistics.median(echoes) * ms:>7.2f}ms {pct(echoes, 0.95) * ms:>7.2f}ms "
            f"{statistics.median(loops) * ms:>7.2f}ms"
        )
    await python_side_by_side(backend, sessions)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="evals per language")
    parser.add_argument("-s", type=int, default=20, help="sessions started per language")
    args = parser.parse_args()
    asyncio.run(main(args.n, args.s))
