"""Hundreds of one-shot runs leave no descriptors, threads, memory or run state behind (issue #18 item 3).

The short version of ``bench/oneshot_leaks.py`` (10,000 runs): after a
warm-up, 300 runs (JavaScript and Python from their snapshots, Lua cold,
one a failing run that hits a limit) must not grow the process's open
descriptors (a memory image's memfd, a guest file), its OS threads (a
worker per run), its resident memory (a Store or an instance's pages kept
alive) or the engine's registry of live runs.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from backends.wasm import WasmBackend, workers
from playground.core import Limits, MemoryLimitExceeded, Sandbox, Spec
from playground.core.limits import MiB
from playground.packs import javascript, lua, python
from tests.integration.wasm.conftest import require_runtime

PROGRAMS = [
    ("javascript", 'console.log("hello world")'),
    ("python", 'print("hello world")'),
    ("lua", 'print("hello world")'),
]


def _usage() -> tuple[int, int, float]:
    """(open fds, OS threads, RSS MiB) of this process."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return len(os.listdir("/proc/self/fd")), int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024


async def _round(sb: Sandbox) -> None:
    for lang, code in PROGRAMS:
        result = await sb.run(Spec(lang=lang, code=code))
        assert result.exit_code == 0 and result.stdout == b"hello world\n", result.stderr


async def test_300_runs_grow_nothing() -> None:
    backend = WasmBackend()
    for pack in (javascript.PACK, python.PACK, lua.PACK):
        require_runtime(backend, pack)
    packs = [javascript.PACK, python.PACK, lua.PACK]
    with Sandbox(backends=[backend], packs=packs, default_limits=Limits(wall_time=20.0)) as sb:
        for _ in range(10):
            await _round(sb)  # warm: compiled code, snapshot images, the workers
        fds, threads, rss = _usage()
        py_threads = threading.active_count()
        for i in range(100):
            await _round(sb)
            if i == 50:  # one run that fails on a limit, from the snapshot
                with pytest.raises(MemoryLimitExceeded):
                    await sb.run(Spec(lang="javascript", code="const a = []; for (;;) a.push('x'.repeat(4096));",
                                      limits=Limits(memory=32 * MiB)))  # fmt: skip
        fds_after, threads_after, rss_after = _usage()
        engine, _ = backend._machinery()
        assert engine.runs == {}  # no run left registered with the engine
    assert fds_after <= fds, (fds, fds_after, sorted(os.listdir("/proc/self/fd")))
    # the pool may keep a few more idle workers than at the start, never one per run
    assert threads_after <= threads + workers.MAX_IDLE, (threads, threads_after)
    assert threading.active_count() <= py_threads + workers.MAX_IDLE
    assert rss_after - rss < 24, (rss, rss_after)  # MiB; a Store kept per run would be hundreds
