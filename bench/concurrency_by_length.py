"""Concurrency 2 against one at a time, by how long a run is (issue #18 item 3: "concurrency 2 close to 2x").

    python bench/concurrency_by_length.py [--langs javascript lua python] [--seconds 6] [--lengths 0 1 3 10]

Each program spins for about the given milliseconds of guest work (a loop
calibrated once per language) and prints a line; ``0`` is the hello world
of ``bench/oneshot_speed.py``. For each, through one ``Sandbox`` with the
Wasm tier's two worker processes: runs/s one at a time (a run alone runs in
this process) and two at a time (each goes to a worker), in alternating
blocks (``oneshot_speed.paired_rates``: the ratio is the median over the
pairs), and the CPU per run of this process at concurrency 2 (what handing
a run over costs it) and of all processes.

Why by length: every run handed over costs this process a fixed share of
CPU (the core's run, the pipes, the event loop's wake), taken from the two
cores the workers run on. Against a run of about a millisecond that share
shows in the ratio; against longer runs it fades, and the ratio is what
the two cores give.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import oneshot_speed

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Spec
from playground.packs import ALL_PACKS

#: A program doing ``{n}`` rounds of a small loop, then printing (the loop's result, so it is not dropped).
SPIN = {
    "javascript": "let s = 0;\nfor (let i = 0; i < {n}; i++) s = (s + i * 7) % 1000003;\nconsole.log('hello world', s)",
    "lua": "local s = 0\nfor i = 1, {n} do s = (s + i * 7) % 1000003 end\nprint('hello world', s)",
    "python": "s = 0\nfor i in range({n}):\n    s = (s + i * 7) % 1000003\nprint('hello world', s)",
}


def spec(lang: str, rounds: int) -> Spec:
    return Spec(lang=lang, code=SPIN[lang].format(n=rounds))


async def per_run(sb: Sandbox, s: Spec, runs: int = 20) -> float:
    """Median seconds of one run alone."""
    return statistics.median([(await oneshot_speed.timed_run(sb, s))[0] for _ in range(runs)])


async def calibrate(sb: Sandbox, lang: str, ms: float) -> int:
    """Loop rounds that add about ``ms`` milliseconds to a hello world run alone."""
    if ms <= 0:
        return 0
    base = await per_run(sb, spec(lang, 0))
    rounds = 10_000
    for _ in range(6):
        extra = await per_run(sb, spec(lang, rounds), 10) - base
        if extra > 0:
            rounds = max(1, round(rounds * ms / 1e3 / extra))
    return rounds


async def main_async(args: argparse.Namespace) -> None:
    backend = WasmBackend(packs=ALL_PACKS, processes=2)
    with Sandbox(backends=[backend], packs=ALL_PACKS, default_limits=Limits(wall_time=30.0)) as sb:
        assert backend._pool is not None
        backend._pool.warm()
        await asyncio.sleep(3.0)
        print(f"concurrency 2 / one at a time, by run length; {args.seconds:g} s per side in "
              f"{oneshot_speed.PAIRS} pairs of alternating blocks; 2 worker processes, {len(backend._pool.pids())} up")
        print("  lang        run alone   seq runs/s   conc2 runs/s   ratio [range]       CPU/run at c2: main / all")
        for lang in args.langs:
            for ms in args.lengths:
                s = spec(lang, await calibrate(sb, lang, ms))
                await oneshot_speed.warm_workers(sb, s)
                alone = await per_run(sb, s)
                got = await oneshot_speed.paired_rates(sb, s, args.seconds, backend._pool.pids())
                print(
                    f"  {lang:<11} {alone * 1e3:6.2f} ms   {got.seq:9.1f}   {got.conc2:11.1f}     "
                    f"{got.ratio:4.2f}x [{min(got.ratios):4.2f}-{max(got.ratios):4.2f}]   "
                    f"{got.conc2_cpu * 1e3:6.0f} us / {(got.conc2_cpu_all or 0) * 1e3:6.0f} us",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--langs", nargs="+", default=["javascript", "lua", "python"], choices=sorted(SPIN))
    parser.add_argument("--lengths", nargs="+", type=float, default=[0.0, 1.0, 3.0, 10.0], help="ms of guest work")
    parser.add_argument("--seconds", type=float, default=6.0, help="per side (sequential, concurrency 2) and length")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
