"""One-shot runs in the Wasm backend's worker processes (``WasmBackend(processes=N)``, ``procpool``).

A run goes to a worker when it starts while another is in flight here; the
tests hold one slow run in this process (``_overlapping``) so the run under
test goes to a worker (``ProcessPool.dispatched`` proves it), then check
that everything a run has is the same there: isolation, arguments and
files, output streamed as it comes, limits, attempts, cancellation; a
worker that dies fails only its run and is replaced; closing kills them.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from backends.wasm import WasmBackend, procpool, procwire, procworker
from backends.wasm.artifacts import cache_root
from backends.wasm.procpool import ProcessPool
from backends.wasm.runner import HostFailure
from playground.core import (
    FSQuotaExceeded,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Result,
    Sandbox,
    Spec,
    TimeLimitExceeded,
)
from playground.core.limits import DEFAULT_LIMITS, UNLIMITED, MiB, ResolvedLimits
from playground.core.output import Stream
from playground.core.vfs import VFS, TreeReport
from playground.packs import javascript, python
from tests.integration.wasm.conftest import require_runtime
from tests.integration.wasm.test_snapshot import ISOLATION, ISOLATION_PLAIN

T = TypeVar("T")
SLOW = Spec(lang="python", code="import time\ntime.sleep(3)")


@pytest.fixture
async def pooled() -> AsyncIterator[tuple[Sandbox, ProcessPool]]:
    backend = WasmBackend(processes=2)
    require_runtime(backend, python.PACK)
    with Sandbox(backends=[backend], packs=[python.PACK, javascript.PACK], default_limits=Limits(wall_time=20)) as sb:
        pool = backend._pool  # the pool under test
        assert pool is not None
        pool.warm()  # as the first two runs that overlap would
        await sb.run(Spec(lang="python", code="pass"))  # they load both runtimes before they take runs of them
        await sb.run(Spec(lang="python", code="import json"))  # and Python's stdlib snapshot
        await sb.run(Spec(lang="javascript", code=""))
        deadline = time.monotonic() + 60
        while pool.ready() < 2 or pool.loads_pending():
            assert time.monotonic() < deadline, "the worker processes never got ready"
            await asyncio.sleep(0.05)
        yield sb, pool


async def _overlapping(sb: Sandbox, pool: ProcessPool, work: Awaitable[T]) -> T:
    """``work`` started while a slow run is in flight here, so a worker takes it."""
    slow = asyncio.create_task(sb.run(SLOW))
    await asyncio.sleep(0.2)
    before = pool.dispatched
    try:
        return await work
    finally:
        assert pool.dispatched > before, "the run did not go to a worker process"
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)


async def test_workers_start_only_when_runs_first_overlap() -> None:
    backend = WasmBackend(processes=2)
    require_runtime(backend, python.PACK)
    pool = backend._pool
    assert pool is not None
    with Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=20)) as sb:
        for _ in range(3):
            assert (await sb.run(Spec(lang="python", code="print(1)"))).stdout == b"1\n"
        assert pool.pids() == [], "runs one at a time started worker processes"
        short = Spec(lang="python", code="import time\ntime.sleep(0.5)")
        results = await asyncio.gather(sb.run(short), sb.run(Spec(lang="python", code="print(2)")))
        assert [r.exit_code for r in results] == [0, 0]
        assert results[1].stdout == b"2\n"  # it ran here: the workers were only just starting
        assert len(pool.pids()) == 2


async def test_workers_import_this_code_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m`` puts the working directory first on the module path: a caller working in a folder that
    holds a ``backends`` or ``playground`` of its own (a project of that name) got workers that imported
    those in place of ours, and every one died before it was ready (its runs stayed in the main process)."""
    for package in ("backends", "playground"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("raise SystemExit('imported from the working directory')\n")
    monkeypatch.chdir(tmp_path)
    backend = WasmBackend(processes=1)
    require_runtime(backend, javascript.PACK)
    packs = [python.PACK, javascript.PACK]  # python: the slow run that ``_overlapping`` holds here
    with Sandbox(backends=[backend], packs=packs, default_limits=Limits(wall_time=20)) as sb:
        pool = backend._pool
        assert pool is not None
        pool.warm()
        await sb.run(Spec(lang="javascript", code=""))  # the worker loads its runtime before it takes runs
        deadline = time.monotonic() + 60
        while pool.ready() < 1 or pool.loads_pending():
            assert time.monotonic() < deadline, "the worker process never got ready"
            await asyncio.sleep(0.05)
        result = await _overlapping(sb, pool, sb.run(Spec(lang="javascript", code="console.log(6 * 7)")))
        assert result.stdout == b"42\n"


@pytest.mark.parametrize("program", [ISOLATION, ISOLATION_PLAIN], ids=["stdlib", "plain"])
async def test_runs_in_workers_share_nothing(pooled: tuple[Sandbox, ProcessPool], program: str) -> None:
    sb, pool = pooled
    clean = b"seen False None None None False False None False False False\n"
    for _ in range(3):
        result = await _overlapping(sb, pool, sb.run(Spec(lang="python", code=program)))
        assert (result.exit_code, result.stdout, result.stderr) == (0, clean, b"")
    results = await asyncio.gather(*(sb.run(Spec(lang="python", code=program)) for _ in range(6)))
    assert [r.stdout for r in results] == [clean] * 6
    assert pool.dispatched >= 4


async def test_a_run_in_a_worker_is_the_same_run(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled
    code = (
        "import os, sys\nprint(sys.argv[1:], os.environ['X'], input(), open('/in/data.txt').read())\n"
        "open('/out/made.txt', 'w').write('from the guest')\nos.makedirs('/out/sub')\n"
        "open('/out/sub/deep.bin', 'wb').write(bytes(range(5)))\n"
        "print('to stderr', file=sys.stderr)\nraise SystemExit(3)\n"
    )
    spec = Spec(lang="python", code=code, args=("a b",), env={"X": "1"}, stdin=b"typed\n", files={"data.txt": b"in"})
    here = await sb.run(spec)
    there = await _overlapping(sb, pool, sb.run(spec))
    for result in (here, there):
        assert result.exit_code == 3
        assert result.stdout == b"['a b'] 1 typed in\n" and result.stderr == b"to stderr\n"
        assert result.files == {"made.txt": b"from the guest", "sub/deep.bin": bytes(range(5))}
    assert there.usage.fs_files == here.usage.fs_files and there.usage.fs_bytes == here.usage.fs_bytes
    js = await _overlapping(sb, pool, sb.run(Spec(lang="javascript", code="console.log(6 * 7)")))
    assert js.stdout == b"42\n"


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
async def test_workers_run_as_batch_work_and_this_process_does_not(pooled: tuple[Sandbox, ProcessPool]) -> None:
    """A worker woken by its next job must not preempt the process that hands runs over (``_run_as_batch``)."""
    sb, pool = pooled
    await _overlapping(sb, pool, sb.run(Spec(lang="javascript", code="console.log(1)")))  # its threads have started
    pids = pool.pids()
    assert len(pids) == 2
    for pid in pids:
        threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        assert len(threads) >= 2  # the main thread, the cancel watcher (and the epoch ticker once it ran a guest)
        assert {os.sched_getscheduler(tid) for tid in threads} == {os.SCHED_BATCH}
    assert os.sched_getscheduler(0) == os.SCHED_OTHER


async def test_a_tree_as_deep_as_the_vfs_allows_comes_back_from_a_worker(pooled: tuple[Sandbox, ProcessPool]) -> None:
    """The worker sends what the run left in /out back by pickle; the tree's own pickled form recursed per
    level, so a guest that dug to the VFS's depth limit made the worker die with its result (``HostFailure``)."""
    sb, pool = pooled
    code = (
        "import os\npath = '/out'\nfor depth in range(1, 1000):\n    try:\n        os.mkdir(path + '/d')\n"
        "    except OSError:\n        break\n    path += '/d'\nopen(path + '/../leaf', 'w').write('x')\nprint(depth)\n"
    )
    spec = Spec(lang="python", code=code, limits=Limits(max_files=2000))
    result = await _overlapping(sb, pool, sb.run(spec))
    assert (result.exit_code, result.stderr) == (0, b"")
    depth = int(result.stdout)
    assert depth > 200  # deeper than pickle's recursion allowed
    assert list(result.files) == ["d/" * (depth - 2) + "leaf"]
    again = await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('same worker pool')")))
    assert again.stdout == b"same worker pool\n"



async def test_an_empty_tree_goes_to_a_worker_as_a_marker_and_the_run_is_the_same(
    pooled: tuple[Sandbox, ProcessPool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's tree that is the empty layout goes as ``EMPTY_TREE`` (``VFS.is_empty_for``) and the worker
    makes its own; the result is the same run's either way: its output, what it left in /out, its usage."""
    sb, pool = pooled
    sent: list[object] = []
    send = procwire.Writer.send

    def spy(writer: procwire.Writer, message: tuple[Any, ...]) -> None:
        if message[0] == "run":
            sent.append(message[-1])
        send(writer, message)

    monkeypatch.setattr(procwire.Writer, "send", spy)
    listing = "import os\nprint(sorted(os.listdir('/')), os.listdir('/in'), os.listdir('/tmp'), os.listdir('/out'))\n"
    cases = [  # (spec, what its tree goes as)
        (Spec(lang="python", code=listing + "open('/out/made.txt', 'w').write('out')"), "empty"),
        (Spec(lang="python", code=listing + "raise SystemExit(4)", limits=Limits(max_files=9)), "empty"),
        (Spec(lang="python", code=listing + "os.remove('seed.txt')", work_files={"seed.txt": b"s"}), "tree"),
        (Spec(lang="python", code=listing + "print(open('/in/i').read())", files={"i": b"given"}), "tree"),
        (Spec(lang="javascript", code="console.log(require('fs').readdirSync('/work'))"), "empty"),
    ]
    for spec, went in cases:
        here = await sb.run(spec)
        sent.clear()
        there = await _overlapping(sb, pool, sb.run(spec))
        kinds = ["empty" if tree == procwire.EMPTY_TREE else "tree" if isinstance(tree, VFS) else tree for tree in sent]
        assert kinds == [went], spec.code
        assert (there.exit_code, there.stdout, there.stderr) == (here.exit_code, here.stdout, here.stderr)
        assert there.files == here.files
        assert (there.usage.fs_files, there.usage.fs_bytes) == (here.usage.fs_files, here.usage.fs_bytes)
    made = await _overlapping(sb, pool, sb.run(cases[0][0]))
    assert made.files == {"made.txt": b"out"}
    assert made.stdout.startswith(b"['dev', 'in', 'out', 'tmp', 'work'] [] [] []")


async def test_a_run_in_a_worker_has_dev_and_only_its_trees_report_comes_back(
    pooled: tuple[Sandbox, ProcessPool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/dev`` is the worker's own (host-made, as a runtime's mounts); what comes back is the report of the
    tree (``VFS.report``: ``/out`` and the charge), the same as the run's in this process."""
    sb, pool = pooled
    reports: list[TreeReport] = []
    adopt_report = VFS.adopt_report

    def spy(vfs: VFS, report: TreeReport) -> None:
        reports.append(report)
        adopt_report(vfs, report)

    monkeypatch.setattr(VFS, "adopt_report", spy)
    code = "import os\nopen('/out/dev.txt', 'w').write(' '.join(sorted(os.listdir('/dev'))))\n"
    code += "open(os.devnull, 'w').write('x')"
    for spec in (Spec(lang="python", code=code), Spec(lang="python", code=code, files={"i": b"given"})):
        here = await sb.run(spec)
        result = await _overlapping(sb, pool, sb.run(spec))
        assert result.exit_code == 0 and result.files == {"dev.txt": b"null random urandom zero"}, result.stderr
        assert (result.usage.fs_files, result.usage.fs_bytes) == (here.usage.fs_files, here.usage.fs_bytes)
        assert reports.pop() == (result.files, result.usage.fs_bytes, result.usage.fs_files, False)
    assert reports == []


def _rollup_pss(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        return next(int(line.split()[1]) * 1024 for line in rollup if line.startswith("Pss:"))


async def test_a_workers_memory_counts_the_snapshot_images_it_holds(pooled: tuple[Sandbox, ProcessPool]) -> None:
    """``idle_memory``: a worker's images are memfds of its own, which its PSS leaves out unless a run maps
    them; the fixture had both workers load Python's two snapshots (about 12 and 16 MB) and JavaScript's."""
    _, pool = pooled
    sizes, pids = pool.idle_memory(), pool.pids()
    assert len(sizes) == len(pids) == 2
    for size, pid in zip(sizes, pids, strict=True):
        images = procpool._memfd_bytes(pid)
        assert images > 20 * MiB
        assert size >= images and size > _rollup_pss(pid) + 20 * MiB

async def test_no_run_waits_for_a_workers_first_load(pooled: tuple[Sandbox, ProcessPool]) -> None:
    """A start no run used yet (here Python's cold start: ``PYTHON*`` set) is loaded by the workers in the
    background; overlapping runs of it stay here until then, and go to the workers after."""
    sb, pool = pooled
    cold = Spec(lang="python", code="import os\nprint(os.environ['PYTHONHASHSEED'])", env={"PYTHONHASHSEED": "7"})
    slow = asyncio.create_task(sb.run(SLOW))
    await asyncio.sleep(0.2)
    before = pool.dispatched
    first = await sb.run(cold)
    assert first.stdout == b"7\n" and pool.dispatched == before  # ran here: no worker had loaded it
    deadline = time.monotonic() + 60
    while pool.loads_pending():
        assert time.monotonic() < deadline, "the workers never loaded the new start"
        await asyncio.sleep(0.05)
    later = await sb.run(cold)
    assert later.stdout == b"7\n" and pool.dispatched == before + 1  # a worker that has loaded it took it
    slow.cancel()
    await asyncio.gather(slow, return_exceptions=True)


async def test_output_streams_from_a_worker_as_it_comes(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled
    seen: list[tuple[float, bytes]] = []
    code = "import time\nprint('first', flush=True)\ntime.sleep(0.5)\nprint('second')"
    run = sb.run(Spec(lang="python", code=code), on_output=lambda _s, data: seen.append((time.monotonic(), data)))
    result = await _overlapping(sb, pool, run)
    assert result.stdout == b"first\nsecond\n"
    assert [data for _, data in seen] == [b"first\n", b"second\n"]
    assert seen[1][0] - seen[0][0] > 0.3  # the first line came before the sleep, not with the rest


async def test_output_batched_in_a_worker_goes_out_while_the_guest_sleeps(pooled: tuple[Sandbox, ProcessPool]) -> None:
    """Lines written in quick succession wait for the next tick, not for the next write or the run's end."""
    sb, pool = pooled
    seen: list[tuple[float, bytes]] = []
    lines = "".join(f"print({n}, flush=True)\n" for n in range(5))
    code = f"import time\ntime.sleep(0.05)\n{lines}time.sleep(0.6)\nprint('last')"
    run = sb.run(Spec(lang="python", code=code), on_output=lambda _s, data: seen.append((time.monotonic(), data)))
    result = await _overlapping(sb, pool, run)
    assert result.stdout == b"0\n1\n2\n3\n4\nlast\n"
    assert b"".join(data for _, data in seen) == result.stdout
    before_sleep = [at for at, data in seen if b"4" in data]
    last = [at for at, data in seen if b"last" in data]
    assert len(before_sleep) == 1 and len(last) == 1
    assert last[0] - before_sleep[0] > 0.4  # the batch went on a tick during the sleep
    assert len(seen) < 6  # and the quick lines went together, not one message each


async def test_limits_hold_in_a_worker(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled
    with pytest.raises(TimeLimitExceeded):
        await _overlapping(sb, pool, sb.run(Spec(lang="python", code="while True: pass", limits=Limits(wall_time=0.5))))
    with pytest.raises(MemoryLimitExceeded) as memory:
        await _overlapping(sb, pool, sb.run(Spec(lang="python", code="x = bytearray(300 << 20)",
                                                 limits=Limits(memory=64 * MiB))))  # fmt: skip
    assert memory.value.result is not None
    with pytest.raises(OutputLimitExceeded) as flood:
        await _overlapping(sb, pool, sb.run(Spec(lang="python", code="while True: print('x' * 1000)",
                                                 limits=Limits(max_output=10_000))))  # fmt: skip
    assert flood.value.result is not None and len(flood.value.result.stdout) == 10_000
    with pytest.raises(FSQuotaExceeded):
        await _overlapping(sb, pool, sb.run(Spec(lang="python", code="open('big', 'wb').write(b'x' * (4 << 20))",
                                                 limits=Limits(fs_quota=1 * MiB))))  # fmt: skip


async def test_attempts_in_a_worker_are_reported(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled
    code = "try:\n    open('/etc/passwd')\nexcept OSError:\n    print('refused')\n"
    result: Result = await _overlapping(sb, pool, sb.run(Spec(lang="python", code=code)))
    assert result.stdout == b"refused\n"
    assert any(a.target == "/etc/passwd" for a in result.attempts), result.attempts


async def test_cancelling_a_run_in_a_worker_stops_it(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled

    async def cancelled() -> float:
        task = asyncio.create_task(sb.run(Spec(lang="python", code="while True: pass")))
        await asyncio.sleep(0.5)
        at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - at

    assert await _overlapping(sb, pool, cancelled()) < 1.0
    again = await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('next')")))
    assert again.stdout == b"next\n"


async def test_a_loop_keeps_watching_a_workers_pipe_only_between_its_own_runs(
    pooled: tuple[Sandbox, ProcessPool],
) -> None:
    """After a job the loop keeps its watch on the worker's pipe for the next one (no add_reader per run),
    and lets go of it ``_LINGER`` later: an idle pool holds no loop's selector."""
    sb, pool = pooled
    loop = asyncio.get_running_loop()
    await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print(1)")))
    watching = [p for p in pool._procs if loop in p.holders]
    assert watching and all(p.loop is loop for p in watching)
    await asyncio.sleep(procpool._LINGER * 3)
    assert all(not p.holders and p.loop is None for p in pool._procs)
    assert all(not loop.remove_reader(p.out) for p in watching)  # nothing left in the selector


async def test_a_watch_outlasts_its_timer_while_jobs_keep_coming_and_goes_after_the_last(
    pooled: tuple[Sandbox, ProcessPool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jobs a quarter of ``_LINGER`` apart, for several ``_LINGER`` periods, keep the one watch (its timer,
    firing meanwhile, waits out the rest instead of letting go: no ``add_reader`` again), and it goes
    ``_LINGER`` after the last."""
    sb, pool = pooled
    loop = asyncio.get_running_loop()
    added: list[int] = []
    add_reader = loop.add_reader

    def counted(fd: int, *args: Any) -> None:
        added.append(fd)
        add_reader(fd, *args)

    slow = asyncio.create_task(sb.run(SLOW))  # keeps one run in flight, so every run below overlaps it
    await asyncio.sleep(0.2)
    before = pool.dispatched
    try:
        assert (await sb.run(Spec(lang="python", code="print(1)"))).stdout == b"1\n"
        watching = [p for p in pool._procs if loop in p.holders]
        assert watching
        monkeypatch.setattr(loop, "add_reader", counted)
        until = time.monotonic() + procpool._LINGER * 4
        while time.monotonic() < until:
            assert (await sb.run(Spec(lang="python", code="print(2)"))).stdout == b"2\n"
            assert all(loop in p.holders for p in watching)
            await asyncio.sleep(procpool._LINGER / 4)  # idle when the timer fires, but for less than _LINGER
    finally:
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)
    assert pool.dispatched > before
    assert not [fd for fd in added if fd in {p.out for p in watching}], "a watch was let go and taken again"
    await asyncio.sleep(procpool._LINGER * 3)
    assert all(not p.holders and p.loop is None for p in pool._procs)


async def test_runs_from_two_event_loops_share_the_workers(pooled: tuple[Sandbox, ProcessPool]) -> None:
    """A loop in another thread takes over a worker this loop still watches: this loop lets go on its own
    thread, and both loops' runs come back whole, back and forth."""
    sb, pool = pooled
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()

    async def both(tag: str) -> list[bytes]:  # two runs at once, so one goes to a worker
        got = await asyncio.gather(*(sb.run(Spec(lang="python", code=f"print('{tag}', {n})")) for n in range(2)))
        return [r.stdout for r in got]

    try:
        for round_ in range(3):
            before = pool.dispatched
            assert await both(f"here{round_}") == [f"here{round_} {n}\n".encode() for n in range(2)]
            there = asyncio.run_coroutine_threadsafe(both(f"there{round_}"), other).result(timeout=30)
            assert there == [f"there{round_} {n}\n".encode() for n in range(2)]
            assert pool.dispatched >= before + 2
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join(timeout=5)
        other.close()
    assert (await sb.run(Spec(lang="python", code="print('after')"))).stdout == b"after\n"


async def test_a_worker_that_dies_while_its_pipe_is_watched_idle_is_replaced(
    pooled: tuple[Sandbox, ProcessPool],
) -> None:
    """Killed right after a job, while the loop still watches its pipe: the loop reads the end, lets go and
    closes the pipe, and later runs go to a new worker (a stale watch would make them all stay here)."""
    sb, pool = pooled
    loop = asyncio.get_running_loop()
    await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print(1)")))
    victims = [p for p in pool._procs if loop in p.holders]
    assert victims
    for proc in victims:
        os.kill(proc.proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not all(p.dead and p.out < 0 and not p.holders for p in victims):
        assert time.monotonic() < deadline, "the dead worker's pipe was never let go and closed"
        await asyncio.sleep(0.02)
    deadline = time.monotonic() + 60
    while pool.ready() < 2 or pool.loads_pending():  # overlapping runs start a replacement, which loads
        assert (await _alongside_a_slow_run(sb, Spec(lang="python", code="print('again')"))).stdout == b"again\n"
        assert time.monotonic() < deadline, "no replacement worker got ready"
    assert (await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('again')")))).stdout == b"again\n"


async def _alongside_a_slow_run(sb: Sandbox, spec: Spec) -> Result:
    """``spec`` run while a slow run is in flight here (in a worker if one is ready, else here)."""
    slow = asyncio.create_task(sb.run(SLOW))
    await asyncio.sleep(0.2)
    try:
        return await sb.run(spec)
    finally:
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)


async def test_a_worker_that_dies_fails_only_its_run_and_is_replaced(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled
    victims = pool.pids()

    async def killed() -> None:
        task = asyncio.create_task(sb.run(Spec(lang="python", code="while True: pass")))
        await asyncio.sleep(0.5)
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(HostFailure, match="worker process"):
            await task

    await _overlapping(sb, pool, killed())
    deadline = time.monotonic() + 30
    while pool.ready() < 2:
        await asyncio.gather(*(sb.run(Spec(lang="python", code="pass")) for _ in range(2)))  # an overlap starts them
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    assert not set(victims) & set(pool.pids())
    result = await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('alive')")))
    assert result.stdout == b"alive\n"


async def test_closing_kills_the_workers_at_once() -> None:
    backend = WasmBackend(processes=2)
    require_runtime(backend, python.PACK)
    with Sandbox(backends=[backend], packs=[python.PACK]) as sb:
        await asyncio.gather(*(sb.run(Spec(lang="python", code="pass")) for _ in range(2)))  # starts them
        pool = backend._pool
        assert pool is not None
        deadline = time.monotonic() + 30
        while pool.ready() < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        pids = pool.pids()
        assert len(pids) == 2 and all(size > 0 for size in pool.idle_memory())
        (line,) = [d for d in backend.diagnostics() if d.name == "wasm worker processes"]
        assert line.detail.startswith("2 for one-shot runs that overlap (2 started; memory "), line
        started = time.monotonic()
    assert time.monotonic() - started < 1.0
    await asyncio.sleep(0.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_pool_size_is_bounded() -> None:
    with pytest.raises(ValueError, match="between 1 and"):
        WasmBackend(processes=99)


async def test_a_run_that_cannot_be_sent_runs_here(
    pooled: tuple[Sandbox, ProcessPool], monkeypatch: pytest.MonkeyPatch
) -> None:
    sb, pool = pooled
    send = procwire.Writer.send

    def refusing(self: procwire.Writer, message: tuple[object, ...]) -> None:
        if message[0] == "run":
            raise pickle.PicklingError("a spec that does not pickle")
        send(self, message)

    monkeypatch.setattr(procwire.Writer, "send", refusing)
    result = await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('here')")))
    assert result.stdout == b"here\n"
    monkeypatch.undo()
    assert pool.ready() == 2  # the worker was freed, not lost
    again = await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('there')")))
    assert again.stdout == b"there\n"


async def test_a_failing_output_listener_does_not_lose_the_worker(pooled: tuple[Sandbox, ProcessPool]) -> None:
    sb, pool = pooled
    pids = pool.pids()

    def broken(_stream: object, _data: bytes) -> None:
        raise RuntimeError("the caller's listener")

    result = await _overlapping(sb, pool, sb.run(Spec(lang="python", code="print('x')"), on_output=broken))
    assert result.stdout == b"x\n" and pool.pids() == pids


async def test_workers_that_cannot_start_stop_being_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/bin/false")  # a broken install: every worker exits at once
    backend = WasmBackend(processes=2)
    require_runtime(backend, python.PACK)
    with Sandbox(backends=[backend], packs=[python.PACK]) as sb:
        pool = backend._pool
        assert pool is not None
        for _ in range(8):
            results = await asyncio.gather(*(sb.run(Spec(lang="python", code="print(1)")) for _ in range(2)))
            assert [r.stdout for r in results] == [b"1\n"] * 2  # in this process
            await asyncio.sleep(0.1)
        assert pool.dispatched == 0 and pool.pids() == []
        failed = pool._failed_starts
        assert failed >= procpool.MAX_FAILED_STARTS
        await asyncio.gather(*(sb.run(Spec(lang="python", code="pass")) for _ in range(2)))
        assert pool._failed_starts == failed and pool.pids() == []  # no more were started


def _bare_worker() -> tuple[subprocess.Popen[bytes], int]:
    """A worker process started as the pool starts one, and our end of its cancel pipe."""
    cancel_read, cancel_write = os.pipe()
    worker = subprocess.Popen(
        [sys.executable, "-m", "backends.wasm.procworker", str(cache_root()), str(cancel_read)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(cancel_read,),
    )  # fmt: skip
    os.close(cancel_read)
    assert worker.stdin is not None and worker.stdout is not None
    assert procwire.receive(worker.stdout) == ("ready",)
    return worker, cancel_write


def _no_time_limit() -> ResolvedLimits:
    return DEFAULT_LIMITS.validate().merged(Limits(wall_time=UNLIMITED, cpu_time=UNLIMITED))


def _send_forever(worker: subprocess.Popen[bytes], job: int) -> None:
    """Send a run with no time limit that prints ``up`` and spins; wait for its ``up``."""
    assert worker.stdin is not None and worker.stdout is not None
    writer = procwire.Writer(worker.stdin.fileno())
    limits = _no_time_limit()
    writer.send(("pack", "k", python.PACK))
    forever = Spec(lang="python", code="print('up', flush=True)\nwhile True: pass")
    writer.send(("run", job, "k", forever, limits, b"", VFS.for_limits(limits)))
    assert procwire.receive(worker.stdout) == ("output", job, Stream.STDOUT, b"up\n")


def test_a_worker_whose_parent_is_gone_stops_its_run_and_ends() -> None:
    """The parent's ends close (its stdin, its cancel pipe): the job in flight (here one with no time
    limit) is stopped and the worker exits, so no orphan burns a core."""
    worker, cancels = _bare_worker()
    try:
        _send_forever(worker, 1)
        assert worker.stdin is not None
        worker.stdin.close()
        os.close(cancels)
        assert worker.wait(timeout=10) == 0
    finally:
        worker.kill()


def test_a_cancel_stops_only_the_job_it_names_even_before_the_job_starts() -> None:
    """A cancel of another job leaves the run going; one sent before its run was read stops it as it starts."""
    worker, cancels = _bare_worker()
    assert worker.stdout is not None
    try:
        _send_forever(worker, 5)
        os.write(cancels, procwire.CANCEL.pack(4))  # an earlier job's late cancel: nothing to stop
        os.write(cancels, procwire.CANCEL.pack(5))
        answer = procwire.receive(worker.stdout)
        assert answer is not None and answer[:3] == ("failed", 5, "RunCancelled"), answer
        os.write(cancels, procwire.CANCEL.pack(6))  # before job 6 is sent
        time.sleep(0.2)  # the cancel thread has it before the run is read
        assert worker.stdin is not None
        writer = procwire.Writer(worker.stdin.fileno())
        limits = _no_time_limit()
        writer.send(("run", 6, "k", Spec(lang="python", code="while True: pass"), limits, b"", VFS.for_limits(limits)))
        answer = procwire.receive(worker.stdout)
        assert answer is not None and answer[:3] == ("failed", 6, "RunCancelled"), answer
        writer.send(("run", 7, "k", Spec(lang="python", code="print(7)"), limits, b"", VFS.for_limits(limits)))
        answer = procwire.receive(worker.stdout)  # a short run's output comes in its answer
        assert answer is not None and answer[:2] == ("done", 7) and answer[-1] == ((Stream.STDOUT, b"7\n"),), answer
    finally:
        worker.kill()
        os.close(cancels)


def test_an_answer_that_cannot_be_sent_fails_its_job_not_the_worker() -> None:
    """Whatever a run's answer holds, the worker stays in step and alive: the job fails with HostFailure,
    its output as it came, and the parent keeps its own tree (``vfs`` None)."""
    with tempfile.TemporaryFile() as sent:
        worker = procworker._Worker(cache_root(), procwire.Writer(sent.fileno()))
        output = ((Stream.STDOUT, b"partial\n"),)
        worker._answer(("done", 9, lambda: None, VFS.for_limits(_no_time_limit()).report(), (), 0, output))
        sent.seek(0)
        failed = procwire.receive(sent)
        assert failed is not None and failed[:3] == ("failed", 9, "HostFailure")
        assert failed[4:] == (None, None, (), 0, output)  # the output still comes
        assert "could not send the run's result back" in failed[3]
        assert procwire.receive(sent) is None  # nothing half-written after it
