"""Cancellation, isolation between concurrent runs, and no leaks over many runs."""

from __future__ import annotations

import asyncio
import os
import resource
import time

import pytest

from playground.core import Limits, Sandbox, Spec, TimeLimitExceeded


async def _cancel_after_first_output(sandbox: Sandbox, probe: bytes, args: list[str]) -> float:
    """Start a run, cancel its task once the guest printed, return how long the cancel took."""
    loop = asyncio.get_running_loop()
    started = asyncio.Event()
    task = asyncio.create_task(
        sandbox.run(
            Spec(lang="wasm", code=probe, args=args), on_output=lambda *_: loop.call_soon_threadsafe(started.set)
        )
    )
    await asyncio.wait_for(started.wait(), 10)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - cancelled_at


@pytest.mark.parametrize("args", [["loop"], ["hostloop"], ["sleep", "1000000"]], ids=["loop", "hostloop", "sleep"])
async def test_cancel_stops_the_guest_promptly(sandbox: Sandbox, probe_wasm: bytes, args: list[str]) -> None:
    latency = await _cancel_after_first_output(sandbox, probe_wasm, args)
    print(f"cancel latency ({args[0]}): {latency * 1000:.1f} ms")
    assert latency < 1.0


async def test_cancelling_one_run_leaves_another_running(sandbox: Sandbox, probe_wasm: bytes) -> None:
    slow = asyncio.create_task(sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["nanosleep", "300"])))
    doomed = asyncio.create_task(sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["loop"])))
    timed_out = asyncio.create_task(
        sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["loop"], limits=Limits(wall_time=0.1)))
    )
    await asyncio.sleep(0.1)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    with pytest.raises(TimeLimitExceeded):
        await timed_out
    result = await slow
    assert result.stdout == b"slept\n" and result.exit_code == 0


async def test_twenty_concurrent_runs(sandbox: Sandbox, probe_wasm: bytes) -> None:
    specs = [Spec(lang="wasm", code=probe_wasm, args=["args", str(i)], stdin=str(i)) for i in range(20)]
    results = await asyncio.gather(*(sandbox.run(spec) for spec in specs))
    for i, result in enumerate(results):
        assert result.stdout == f"wasm\nargs\n{i}\n".encode()


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
async def test_two_hundred_runs_leak_nothing(sandbox: Sandbox, probe_wasm: bytes) -> None:
    spec = Spec(lang="wasm", code=probe_wasm, args=["write", "/out/x", "data"])
    for _ in range(20):  # warm up caches and allocator pools
        await sandbox.run(spec)
    fds, rss = _open_fds(), _rss_kib()
    started = time.monotonic()
    for _ in range(200):
        result = await sandbox.run(spec)
        assert result.files["x"] == b"data"
    per_run = (time.monotonic() - started) / 200
    grown_fds, grown_rss = _open_fds() - fds, _rss_kib() - rss
    print(f"200 runs: {per_run * 1000:.2f} ms/run, fds {grown_fds:+d}, RSS {grown_rss:+d} KiB")
    assert grown_fds <= 2
    assert grown_rss < 64 * 1024
