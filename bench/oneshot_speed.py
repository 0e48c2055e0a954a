"""One-shot speed per Wasm language, before and after, beside the native processes (issue #18 items 2-3).

    python bench/oneshot_speed.py [-n RUNS] [--seconds S] [--langs javascript lua python numpy] [--processes N]

Everything runs interleaved in one process (blocks of ``BLOCK`` runs per
column), so machine load hits every column alike:

* **start**: p50/p95 of a hello-world ``Sandbox.run`` (warm caches) on
  - *before*: the pack without its snapshot, on a new thread per run
    (how one-shot runs went before the JavaScript snapshot and the reused
    workers; Python's snapshot is left out too, so its column is the cold start);
  - *after*: the default path (snapshot where the pack has one, reused workers);
  - *native*: ``node -e``, ``lua5.4 -e``, ``python3 -c`` as processes, when installed;
  plus the CPU time per run in the sandbox's process (all its threads).
* **throughput**: runs/s of *after* one at a time for ``--seconds``, and with
  two runs in flight at once (concurrency 2; on 2 cores close to 2x unless
  something serialises runs), in ``PAIRS`` pairs of alternating blocks: the
  ratio is the median over the pairs (``paired_rates``); with
  ``--processes N``, also *workers*: the same with the Wasm tier's N worker
  processes (``procpool``), and the CPU per run of all processes (the main
  one hands the runs over, the workers run them): twice the sequential CPU
  per run over that is the most concurrency 2 can give on 2 cores.

Targets (issue #18): JavaScript p50 <= 3 ms, Lua <= 1 ms; sequential
JavaScript >= 250 runs/s, Python >= 60 runs/s; concurrency 2 close to 2x.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from backends.wasm.backend import _start_worker
from playground.core import Limits, Pack, Sandbox, Spec
from playground.packs import ALL_PACKS

HELLO = {
    "javascript": 'console.log("hello world")',
    "lua": 'print("hello world")',
    "python": 'print("hello world")',
    "typescript": 'const greeting: string = "hello world";\nconsole.log(greeting)',
    "numpy": "import numpy as np\nprint(\"hello world\", np.random.rand() < 1)",  # the scientific runtime
}
#: The language of an entry of ``HELLO`` that is not named after its language.
LANG_OF = {"numpy": "python"}


def _spec(name: str) -> Spec:
    return Spec(lang=LANG_OF.get(name, name), code=HELLO[name])


#: Runs of one column in a row before the next column's (the first of a block pays for the switch).
BLOCK = 10
#: Pairs of sequential and concurrency-2 blocks per throughput figure (``paired_rates``).
PAIRS = 6


def _native(*candidates: str) -> str | None:
    for name in candidates:
        path = shutil.which(name) if "/" not in name else (name if Path(name).is_file() else None)
        if path and "/shims/" not in path:  # a pyenv shim would time a shell script too
            return path
    return None


def _command(path: str | None, flag: str, lang: str) -> list[str] | None:
    return [path, flag, HELLO[lang]] if path else None


NATIVE: dict[str, list[str] | None] = {
    "javascript": _command(_native("node", "nodejs"), "-e", "javascript"),
    "lua": _command(_native("lua5.4", "lua"), "-e", "lua"),
    "python": _command(_native("/usr/bin/python3", "/usr/local/bin/python3", "python3"), "-c", "python"),
    "typescript": None,
}


class ThreadPerRun:
    """The worker hand-off as it was before ``workers.WorkerPool``: a new thread for every run."""

    def submit(self, job: Callable[[], None], name: str) -> None:
        _start_worker(job, name)

    def close(self) -> None:
        pass


def without_snapshot(pack: Pack) -> Pack:
    if pack.wasm is None or pack.wasm.snapshot is None:
        return pack
    return dataclasses.replace(pack, wasm=dataclasses.replace(pack.wasm, snapshot=None, import_snapshots=()))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def timed_run(sb: Sandbox, spec: Spec) -> tuple[float, float]:
    """(wall, process CPU) seconds of one run."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = await sb.run(spec)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert result.exit_code == 0 and b"hello world" in result.stdout, result.stderr
    return wall, cpu


def native_run(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


async def start_table(before: Sandbox, after: Sandbox, langs: list[str], runs: int) -> None:
    print(f"start: p50 / p95 ms of a hello world, {runs} runs each, interleaved in blocks of {BLOCK} (CPU ms per run)")
    for lang in langs:
        spec = _spec(lang)
        for sb in (before, after):
            for _ in range(3):
                await timed_run(sb, spec)  # warm: compiled code, snapshot, workers
        cols: dict[str, list[float]] = {"before": [], "after": [], "native": []}
        cpus: dict[str, list[float]] = {"before": [], "after": []}
        cmd = NATIVE.get(lang)
        for _ in range(max(1, runs // BLOCK)):  # blocks of BLOCK runs: warm caches, as a user's repeated runs
            for name, sb in (("before", before), ("after", after)):
                for _ in range(BLOCK):
                    wall, cpu = await timed_run(sb, spec)
                    cols[name].append(wall)
                    cpus[name].append(cpu)
            if cmd is not None:
                cols["native"] += [native_run(cmd) for _ in range(max(1, BLOCK // 5))]
        text = f"  {lang:<11}"
        for name in ("before", "after"):
            text += (
                f" | {name} {statistics.median(cols[name]) * 1e3:6.2f} / {pct(cols[name], 0.95) * 1e3:6.2f}"
                f" (CPU {statistics.median(cpus[name]) * 1e3:5.2f})"
            )
        if cols["native"]:
            name = Path(cmd[0]).name if cmd else ""
            native = statistics.median(cols["native"])
            text += f" | native {name} {native * 1e3:6.2f} / {pct(cols['native'], 0.95) * 1e3:6.2f}"
            text += f" | after/native {statistics.median(cols['after']) / native:4.2f}"
        text += f" | before/after {statistics.median(cols['before']) / statistics.median(cols['after']):4.1f}x"
        print(text, flush=True)


async def rate(sb: Sandbox, spec: Spec, seconds: float, concurrency: int) -> tuple[float, float]:
    """(runs per second, process CPU ms per run) with ``concurrency`` runs in flight."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def loop() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            result = await sb.run(spec)
            assert result.exit_code == 0, result.stderr
            done += 1

    cpu, started = time.process_time(), time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return done / elapsed, cpu / max(done, 1) * 1e3


@dataclasses.dataclass
class Paired:
    """Sequential and concurrency-2 figures taken in alternating blocks (``paired_rates``)."""

    seq: float  # runs/s over all sequential blocks
    seq_cpu: float  # ms of CPU per run, this process
    conc2: float
    conc2_cpu: float
    ratios: list[float]  # conc2 / seq per pair of neighbouring blocks
    conc2_cpu_all: float | None = None  # ms of CPU per run, this process and its worker processes

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)


def _children_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) so far of the processes ``pids`` (Linux ``/proc``)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def paired_rates(sb: Sandbox, spec: Spec, seconds: float, workers: list[int] | None = None) -> Paired:
    """Sequential and concurrency-2 rates in ``PAIRS`` pairs of alternating blocks, ``seconds`` in all per side.

    This machine's speed drifts by up to 1.5x within minutes, so one block
    of each side taken one after the other gave ratios from 1.1x to 2.1x
    for the same code; each pair's ratio is of two neighbouring blocks
    (their order alternates) and the figure is the median of the pairs.
    ``workers``: pids whose CPU is added to the main process's for the
    concurrency-2 blocks (the worker processes: where the runs went).
    """
    block = seconds / PAIRS
    totals = {1: [0.0, 0.0, 0.0], 2: [0.0, 0.0, 0.0]}  # runs, seconds, CPU ms
    extra = 0.0
    ratios: list[float] = []
    for pair in range(PAIRS):
        got: dict[int, float] = {}
        for concurrency in (1, 2) if pair % 2 == 0 else (2, 1):
            before = _children_cpu(workers) if workers and concurrency == 2 else 0.0
            runs_per_s, cpu = await rate(sb, spec, block, concurrency)
            if workers and concurrency == 2:
                extra += _children_cpu(workers) - before
            got[concurrency] = runs_per_s
            runs = runs_per_s * block
            totals[concurrency][0] += runs
            totals[concurrency][1] += block
            totals[concurrency][2] += cpu * runs
        ratios.append(got[2] / got[1])
    (n1, t1, c1), (n2, t2, c2) = totals[1], totals[2]
    cpu_all = (c2 + extra * 1e3) / n2 if workers else None
    return Paired(n1 / t1, c1 / n1, n2 / t2, c2 / n2, ratios, cpu_all)


async def warm_workers(sb: Sandbox, spec: Spec) -> None:
    """Runs of ``spec`` here and two at a time until every worker process has loaded its start.

    A worker takes runs of a start (runtime and snapshot) only once it has
    loaded it, in the background, so the first overlapping runs stay in
    this process; the figures are of the steady state after that.
    """
    backend = sb.backends["wasm"]
    assert isinstance(backend, WasmBackend)
    pool = backend._pool
    await sb.run(spec)
    deadline = time.perf_counter() + 60
    while pool is not None and time.perf_counter() < deadline:
        before = pool.dispatched
        await asyncio.gather(sb.run(spec), sb.run(spec))
        while pool.loads_pending() and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        if pool.dispatched > before:
            break


def two_processes(lang: str, seconds: float) -> float:
    """Runs/s of two processes side by side, each running *after* one at a time (what threads could reach)."""
    start_at = time.time() + 4.0  # both warm up first, then measure over the same window
    cmd = [sys.executable, __file__, "--child", lang, str(seconds), str(start_at)]
    children = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    return sum(float(child.communicate()[0].split()[-1]) for child in children)


async def child(lang: str, seconds: float, start_at: float) -> None:
    """``--child``: one process's sequential rate, measured from ``start_at`` (wall clock)."""
    with Sandbox(backends=[WasmBackend(packs=ALL_PACKS)], packs=ALL_PACKS, default_limits=Limits(wall_time=30.0)) as sb:
        spec = _spec(lang)
        while time.time() < start_at:
            await sb.run(spec)
        print((await rate(sb, spec, seconds, 1))[0])


async def throughput_table(
    before: Sandbox, after: Sandbox, langs: list[str], seconds: float, pooled: Sandbox | None = None
) -> None:
    print(f"throughput: runs/s over {seconds:g} s each (CPU ms per run in the process); concurrency 2 in one")
    print("  process (threads) and, for reference, two processes side by side; the ratio is the median (and")
    print(f"  range) over {PAIRS} pairs of neighbouring sequential and concurrency-2 blocks")
    if pooled is not None:
        print("  workers: after, with the Wasm tier's worker processes (--processes): CPU is the main process's")
    for lang in langs:
        spec = _spec(lang)
        parts = []
        columns = [("before", before), ("after", after)] + ([("workers", pooled)] if pooled is not None else [])
        after_seq = 1.0
        for name, sb in columns:
            workers = None
            if name == "workers":
                await warm_workers(sb, spec)
                backend = sb.backends["wasm"]
                assert isinstance(backend, WasmBackend) and backend._pool is not None
                workers = backend._pool.pids()
            got = await paired_rates(sb, spec, seconds, workers)
            text = (
                f"{name} seq {got.seq:6.1f}/s (CPU {got.seq_cpu:5.2f}) conc2 {got.conc2:6.1f}/s"
                f" (CPU {got.conc2_cpu:5.2f}"
            )
            if got.conc2_cpu_all is not None:
                text += f", all processes {got.conc2_cpu_all:5.2f}"
            parts.append(text + f") = {got.ratio:4.2f}x [{min(got.ratios):4.2f}-{max(got.ratios):4.2f}]")
            if name == "after":
                after_seq = got.seq
        # Last: the two child processes' start and end would load the machine during the next column.
        procs = await asyncio.to_thread(two_processes, lang, seconds)
        parts.append(f"2 processes {procs:6.1f}/s = {procs / after_seq:4.2f}x of after seq")
        print(f"  {lang:<11} | " + " | ".join(parts), flush=True)


async def main_async(args: argparse.Namespace) -> None:
    limits = Limits(wall_time=30.0)
    old = WasmBackend(packs=ALL_PACKS)
    old._workers = ThreadPerRun()  # type: ignore[assignment]
    before = Sandbox(backends=[old], packs=[without_snapshot(p) for p in ALL_PACKS], default_limits=limits)
    after = Sandbox(backends=[WasmBackend(packs=ALL_PACKS)], packs=ALL_PACKS, default_limits=limits)
    pooled = None
    if args.processes:
        workers = WasmBackend(packs=ALL_PACKS, processes=args.processes)
        pooled = Sandbox(backends=[workers], packs=ALL_PACKS, default_limits=limits)
        assert workers._pool is not None
        workers._pool.warm()  # as the first two runs that overlap would
        await asyncio.sleep(3.0)  # each is ready about a second later
    with before, after:
        await start_table(before, after, args.langs, args.runs)
        if args.seconds > 0:
            langs = [lang for lang in args.langs if lang != "typescript"]
            await throughput_table(before, after, langs, args.seconds, pooled)
    if pooled is not None:
        pooled.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--runs", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=3.0, help="per throughput figure (0: skip)")
    parser.add_argument("--langs", nargs="+", default=["javascript", "lua", "python", "typescript"], choices=HELLO)
    parser.add_argument("--processes", type=int, default=0, help="also a column with N Wasm worker processes")
    parser.add_argument("--child", nargs=3, metavar=("LANG", "SECONDS", "START_AT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(args.child[0], float(args.child[1]), float(args.child[2])))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
