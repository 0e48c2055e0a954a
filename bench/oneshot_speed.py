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
  something serialises runs); with ``--processes N``, also *workers*: the
  same with the Wasm tier's N worker processes (``procpool``).

Targets (issue #18): JavaScript p50 <= 3 ms, Lua <= 1 ms; sequential
JavaScript >= 250 runs/s, Python >= 60 runs/s; concurrency 2 close to 2x.
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
    print("  process (threads) and, for reference, two processes side by side")
    if pooled is not None:
        print("  workers: after, with the Wasm tier's worker processes (--processes): CPU is the main process's")
    for lang in langs:
        spec = _spec(lang)
        parts = []
        columns = [("before", before), ("after", after)] + ([("workers", pooled)] if pooled is not None else [])
        after_seq = 1.0
        for name, sb in columns:
            if name == "workers":
                await warm_workers(sb, spec)
            one, cpu1 = await rate(sb, spec, seconds, 1)
            two, cpu2 = await rate(sb, spec, seconds, 2)
            parts.append(
                f"{name} seq {one:6.1f}/s (CPU {cpu1:5.2f}) conc2 {two:6.1f}/s (CPU {cpu2:5.2f}) = {two / one:4.2f}x"
            )
            if name == "after":
                after_seq = one
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
