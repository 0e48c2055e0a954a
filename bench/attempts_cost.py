"""What the attempt report (issue #15) costs a clean run: with vs without the in-guest hooks, side by side.

    python bench/attempts_cost.py [-n RUNS]

For Python the hook is a script (``python_watch.CAPTURE_WATCH``), run once,
in the snapshot's capture, after which a run only opens its channel: the
bench builds the same pack without it (a snapshot captured without it, whose
runs send the same source) and runs both in one process, alternating, so the
machine's noise hits both alike. Two programs: hello world and a compute
loop of about a second. Printed: p50 of each and the difference.

Not separable, so not in the table: the host-side watch (one string test
per WASI path call, in ``wasi_path._resolve``), JavaScript's hooks (part of
the node-like layer compiled into qjs.wasm) and Lua's (C functions compiled
into lua.wasm, ``runtime_sources/lua/playground_lua.c``; the Lua chunk they
replaced cost a hello world about 0.1 ms, a tenth of its time).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from playground.core import Limits, Pack, Sandbox, Spec
from playground.packs import python, python_boot, python_snapshot

PROGRAMS = {
    "python": {
        "hello": "print('hello world')\n",
        "loop ~1 s": "s = 0\nfor i in range(1_800_000):\n    s += i * i % 7\nprint(s)\n",
    },
}


def without_watch(pack: Pack) -> Pack:
    """``pack`` as it was before the attempt report: no in-guest hook before the program or the REPL."""
    assert pack.wasm is not None and pack.wasm.snapshot is not None
    boot = python_boot._TEMPLATE.format(path_setup="    sys.path[0] = os.path.dirname(path)")
    kept = ("-B", "-c", boot)
    args = (*kept, "{main}", "{args}")
    capture = python_snapshot.capture_script(python_snapshot.BOOT, python_snapshot.PRELOAD, kept=kept, watch=False)
    snapshot = dataclasses.replace(pack.wasm.snapshot, capture_args=("-B", "-c", capture), kept_args=kept)
    wasm = dataclasses.replace(pack.wasm, args=args, session_prelude="", variants=(), snapshot=snapshot)
    return dataclasses.replace(pack, name=f"{pack.name}-bare", aliases=(), extensions=(), wasm=wasm)


async def measure(runs: int) -> None:
    packs = [python.PACK, without_watch(python.PACK)]
    limits = Limits(wall_time=60.0, cpu_time=60.0)
    with Sandbox(backends=[WasmBackend()], packs=packs) as sandbox:
        print(f"{'language':10} {'program':10} {'with hooks':>12} {'without':>12} {'difference':>12}")
        for lang, programs in PROGRAMS.items():
            for name, code in programs.items():
                times: dict[str, list[float]] = {lang: [], f"{lang}-bare": []}
                for i in range(runs + 1):
                    for which, kept in times.items():
                        started = time.perf_counter()
                        result = await sandbox.run(Spec(lang=which, code=code, limits=limits))
                        elapsed = time.perf_counter() - started
                        assert result.exit_code == 0 and result.attempts == (), (which, result.stderr)
                        if i:  # the first of each warms the caches
                            kept.append(elapsed)
                with_ms = statistics.median(times[lang]) * 1000
                bare_ms = statistics.median(times[f"{lang}-bare"]) * 1000
                print(f"{lang:10} {name:10} {with_ms:10.1f} ms {bare_ms:10.1f} ms {with_ms - bare_ms:+10.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=21)
    args = parser.parse_args()
    asyncio.run(measure(args.runs))


if __name__ == "__main__":
    main()
