"""Reused worker threads for one-shot runs (``backends/wasm/workers``).

The pool never makes a run wait behind another, keeps no more idle
threads than it may and none after its idle timeout or ``close``, survives
a failing job; and through the real backend, a guest on a reused thread
cannot see how much CPU the thread's earlier runs used.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from backends.wasm.backend import _start_worker
from backends.wasm.workers import IDLE_NAME, WorkerPool
from playground.core import Sandbox, Spec

from .conftest import TEST_LIMITS, WASM_PACK, compile_c


def _settle(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)


def test_sequential_jobs_reuse_one_thread_named_after_its_job_only_while_it_runs_it() -> None:
    pool = WorkerPool(_start_worker)
    seen: list[int] = []
    names: list[str] = []
    for i in range(20):
        done = threading.Event()

        def job(done: threading.Event = done) -> None:
            seen.append(threading.get_ident())
            names.append(threading.current_thread().name)
            done.set()

        pool.submit(job, f"job-{i}")
        assert done.wait(5)
        _settle(lambda: pool.idle == 1)
        assert [t.name for t in threading.enumerate() if t.ident == seen[-1]] == [IDLE_NAME]
    assert len(set(seen)) == 1 and pool.threads == 1
    assert names == [f"job-{i}" for i in range(20)]
    pool.close()
    _settle(lambda: pool.threads == 0)
    assert pool.threads == 0


def test_a_job_never_waits_behind_a_busy_one() -> None:
    pool = WorkerPool(_start_worker, max_idle=1)
    release = threading.Event()
    started = [threading.Event() for _ in range(6)]
    for i, flag in enumerate(started):

        def job(flag: threading.Event = flag) -> None:
            flag.set()
            release.wait(10)

        pool.submit(job, f"blocker-{i}")
    assert all(flag.wait(5) for flag in started)  # all six in flight at once
    assert pool.threads == 6
    release.set()
    _settle(lambda: pool.threads == 1)
    assert pool.threads == 1 and pool.idle == 1  # a burst leaves at most max_idle behind
    pool.close()


def test_idle_workers_end_after_the_timeout() -> None:
    pool = WorkerPool(_start_worker, idle_timeout=0.1)
    done = threading.Event()
    pool.submit(done.set, "once")
    assert done.wait(5)
    _settle(lambda: pool.threads == 0, timeout=3)
    assert pool.threads == 0 and pool.idle == 0
    again = threading.Event()
    pool.submit(again.set, "later")  # a new thread when none is left
    assert again.wait(5)
    pool.close()


def test_close_ends_idle_workers_and_refuses_jobs() -> None:
    pool = WorkerPool(_start_worker, idle_timeout=60)
    events = [threading.Event() for _ in range(3)]
    hold = threading.Event()
    for i, flag in enumerate(events):

        def job(flag: threading.Event = flag) -> None:
            flag.set()
            hold.wait(10)

        pool.submit(job, f"j{i}")
    assert all(flag.wait(5) for flag in events)
    hold.set()
    _settle(lambda: pool.idle == 3)
    started = time.monotonic()
    pool.close()
    _settle(lambda: pool.threads == 0)
    assert pool.threads == 0 and time.monotonic() - started < 1.0  # quitting is never held up
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None, "late")


def test_a_failing_job_leaves_the_worker_serving(caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(_start_worker)

    def boom() -> None:
        raise ValueError("a bug")

    pool.submit(boom, "bad")
    _settle(lambda: pool.idle == 1)
    done = threading.Event()
    pool.submit(done.set, "good")
    assert done.wait(5) and pool.threads == 1
    assert "raised" in caplog.text
    pool.close()


CPU_GUEST = r"""
#include <stdio.h>
#include <stdlib.h>
#include <wasi/api.h>
static long long ns(__wasi_clockid_t id) {
  __wasi_timestamp_t t = 0;
  __wasi_clock_time_get(id, 1, &t);
  return (long long)t;
}
int main(int argc, char **argv) {
  long long start = ns(__WASI_CLOCKID_PROCESS_CPUTIME_ID), thread = ns(__WASI_CLOCKID_THREAD_CPUTIME_ID);
  long long burn = argc > 1 ? atoll(argv[1]) * 1000000LL : 0;
  while (ns(__WASI_CLOCKID_PROCESS_CPUTIME_ID) - start < burn) {}
  printf("%lld %lld %lld\n", start, thread, ns(__WASI_CLOCKID_PROCESS_CPUTIME_ID));
  return 0;
}
"""


async def test_a_reused_worker_shows_the_guest_none_of_its_earlier_cpu_use(
    backend: WasmBackend, tmp_path: Path
) -> None:
    source = tmp_path / "cpu.c"
    source.write_text(CPU_GUEST)
    pytest.importorskip("ziglang")
    module = compile_c(source, tmp_path / "cpu.wasm")
    with Sandbox(backends=[backend], packs=[WASM_PACK], default_limits=TEST_LIMITS) as sb:
        outs = []
        for burn in ("300", "0", "0"):
            result = await sb.run(Spec(lang="wasm", code=module, args=(burn,)))
            assert result.exit_code == 0, result.stderr
            outs.append([int(v) for v in result.stdout.split()])
            await asyncio.sleep(0.05)  # the worker parks before the next run
        assert backend._workers.threads == 1  # every run on the same thread
    assert outs[0][2] - outs[0][0] >= 300e6  # the first run burnt 300 ms of CPU on the worker
    for start, thread, _ in outs[1:]:
        assert 0 <= start < 50e6 and 0 <= thread < 50e6, outs  # not the 300 ms of the run before
