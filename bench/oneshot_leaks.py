"""Resource use over many one-shot runs: descriptors, threads and memory must not grow (issue #18 item 3).

    python bench/oneshot_leaks.py [-n RUNS] [--every K] [--langs javascript python lua] [--concurrency C]
                                  [--processes N]

Runs a hello world ``RUNS`` times per language through one ``Sandbox``
(the default path: snapshots, reused workers) and prints, every ``K``
runs, the process's open descriptors, its OS threads (``/proc/self/status``,
wasmtime's and Python's alike), Python's threads, its resident memory
(VmRSS) and the runs/s since the last line. A leak shows as a column that
climbs; warm-up (compiled code, snapshot images, the worker pool's threads)
happens before the first line. ``--processes N``: through the Wasm tier's N
worker processes (``procpool``; with ``--concurrency`` 2 or more the runs go
to them): the columns are still this process's (its pipes to the workers,
the watches its event loop keeps on them), and a last line gives each
worker's resident memory. ``tests/integration/wasm/test_oneshot_leaks.py``
is the short version that fails on growth.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Spec
from playground.packs import ALL_PACKS

HELLO = {
    "javascript": 'console.log("hello world")',
    "lua": 'print("hello world")',
    "python": 'print("hello world")',
}


def _status(pid: int | str = "self") -> dict[str, str]:
    """The fields of ``/proc/PID/status``."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _rss_mib(fields: dict[str, str]) -> float:
    return int(fields["VmRSS"].split()[0]) / 1024


def usage() -> tuple[int, int, int, float]:
    """(open fds, OS threads, Python threads, RSS MiB) of this process."""
    fields = _status()
    return len(os.listdir("/proc/self/fd")), int(fields["Threads"]), threading.active_count(), _rss_mib(fields)


async def track(sb: Sandbox, lang: str, runs: int, every: int, concurrency: int) -> None:
    spec = Spec(lang=lang, code=HELLO[lang])
    for _ in range(20):
        await sb.run(spec)
    # The reused-worker pool (``backends/wasm/workers``) makes a second thread when a run starts before the last
    # one's thread is idle again, and keeps it (at most ``MAX_IDLE``): runs that overlap make it before the first
    # line, which otherwise showed it as one thread of growth appearing within the first thousand runs.
    await asyncio.gather(*(sb.run(spec) for _ in range(concurrency + 1)))
    backend = sb.backends["wasm"]
    pool = backend._pool if isinstance(backend, WasmBackend) else None
    deadline = time.perf_counter() + 60
    while pool is not None and (pool.ready() < pool.size or pool.loads_pending()) and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)  # the workers have started and loaded this start (no poller thread after)
    first = usage()
    print(f"{lang}: {runs} runs, concurrency {concurrency}")
    print(f"  {'runs':>6} {'fds':>5} {'threads(os)':>11} {'threads(py)':>11} {'RSS MiB':>8} {'runs/s':>7}")
    print(f"  {0:>6} {first[0]:>5} {first[1]:>11} {first[2]:>11} {first[3]:>8.1f} {'':>7}", flush=True)
    done = 0
    mark, mark_done = time.perf_counter(), 0

    async def worker() -> None:
        nonlocal done, mark, mark_done
        while done < runs:
            done += 1
            mine = done  # this run's number (another worker moves ``done`` while this one runs)
            result = await sb.run(spec)
            assert result.exit_code == 0 and b"hello world" in result.stdout, result.stderr
            if mine % every == 0:
                fds, os_threads, py_threads, rss = usage()
                now = time.perf_counter()
                per_s = (mine - mark_done) / (now - mark)
                mark, mark_done = now, mine
                print(f"  {mine:>6} {fds:>5} {os_threads:>11} {py_threads:>11} {rss:>8.1f} {per_s:>7.0f}", flush=True)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    last = usage()
    print(
        f"  growth over {runs} runs: fds {last[0] - first[0]:+d}, OS threads {last[1] - first[1]:+d}, "
        f"Python threads {last[2] - first[2]:+d}, RSS {last[3] - first[3]:+.1f} MiB",
        flush=True,
    )


async def main_async(args: argparse.Namespace) -> None:
    backend = WasmBackend(packs=ALL_PACKS, processes=args.processes)
    if backend._pool is not None:
        backend._pool.warm()  # as the first runs that overlap would
    with Sandbox(backends=[backend], packs=ALL_PACKS, default_limits=Limits(wall_time=30.0)) as sb:
        for lang in args.langs:
            await track(sb, lang, args.runs, args.every, args.concurrency)
        if backend._pool is not None:
            print(f"  worker processes: {backend._pool.dispatched} runs handed over; resident memory "
                  + ", ".join(f"{_rss_mib(_status(pid)):.1f} MiB" for pid in backend._pool.pids()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--runs", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--langs", nargs="+", default=["javascript", "python"], choices=HELLO)
    parser.add_argument("--processes", type=int, default=0, help="Wasm worker processes (0: none)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
