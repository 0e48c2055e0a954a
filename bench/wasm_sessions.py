"""Wasm REPL sessions per language: start-up and eval latency, warm module cache.

    python bench/wasm_sessions.py [-n EVALS] [-s SESSIONS]

For each language: p50/p95 of ``Sandbox.new_session`` until the driver's
first prompt (instantiate + interpreter start + driver start), p50/p95 of
``Session.eval`` of a one-liner that echoes a value (the full path: frame
on stdin, wake the worker thread, evaluate, flush, status on the control
channel, the worker blocking on stdin again, result back to the event
loop), and of an eval that does a little work (a 1,000-step loop).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from playground.core import Sandbox
from playground.packs import javascript, lua, python

CASES = {
    "javascript": ("1 + 1", "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"),
    "lua": ("1 + 1", "local s = 0 for i = 1, 1000 do s = s + i end return s"),
    "python": ("1 + 1", "sum(i for i in range(1000))"),
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(evals: int, sessions: int) -> None:
    sb = Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK, python.PACK])
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="evals per language")
    parser.add_argument("-s", type=int, default=20, help="sessions started per language")
    args = parser.parse_args()
    asyncio.run(main(args.n, args.s))
