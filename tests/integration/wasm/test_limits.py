"""Every limit trips with its own error and keeps the partial result."""

from __future__ import annotations

import time

import pytest

from playground.core import (
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Sandbox,
    Spec,
    TimeLimitExceeded,
)
from playground.core.limits import MiB


@pytest.mark.parametrize("mode", ["loop", "hostloop"])
async def test_infinite_loop_is_time_limit_with_partial_stdout(sandbox: Sandbox, probe_wasm: bytes, mode: str) -> None:
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=[mode], limits=Limits(wall_time=0.3)))
    elapsed = time.monotonic() - started
    print(f"{mode}: stopped after {elapsed * 1000:.0f} ms (limit 300 ms)")
    assert info.value.result is not None
    assert info.value.result.stdout == b"started\n"
    assert elapsed < 2.0


async def test_long_sleep_is_time_limit_promptly(sandbox: Sandbox, probe_wasm: bytes) -> None:
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["sleep", "1000000"], limits=Limits(wall_time=0.3)))
    elapsed = time.monotonic() - started
    print(f"sleep: stopped after {elapsed * 1000:.0f} ms (limit 300 ms)")
    assert info.value.result is not None and info.value.result.stdout == b"sleeping\n"
    assert elapsed < 2.0


async def test_cpu_time_limit(sandbox: Sandbox, probe_wasm: bytes) -> None:
    with pytest.raises(TimeLimitExceeded) as info:
        await sandbox.run(
            Spec(lang="wasm", code=probe_wasm, args=["loop"], limits=Limits(cpu_time=0.2, wall_time=10.0))
        )
    assert info.value.limit == "cpu_time"
    assert "CPU" in str(info.value)


async def test_sleeping_uses_no_cpu_time(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(
        Spec(lang="wasm", code=probe_wasm, args=["nanosleep", "400"], limits=Limits(cpu_time=0.2, wall_time=5.0))
    )
    assert result.stdout == b"slept\n"


async def test_growing_allocation_is_memory_limit(sandbox: Sandbox, probe_wasm: bytes) -> None:
    with pytest.raises(MemoryLimitExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["alloc"], limits=Limits(memory=64 * MiB)))
    result = info.value.result
    assert result is not None
    assert b"out of memory after" in result.stderr


async def test_one_huge_allocation_is_memory_limit(sandbox: Sandbox, probe_wasm: bytes) -> None:
    # memory.grow is refused by our memory creator, which records it: an exact MemoryLimitExceeded
    # even though the guest's memory stayed far below the limit.
    with pytest.raises(MemoryLimitExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["bigalloc"], limits=Limits(memory=64 * MiB)))
    result = info.value.result
    assert result is not None
    assert result.exit_code == 1
    assert result.stderr == b"malloc(1 GiB) failed\n"
    assert result.usage.peak_memory <= 64 * MiB
    assert "asked for" in str(info.value)


async def test_initial_memory_above_limit_is_memory_limit(sandbox: Sandbox) -> None:
    wat = '(module (memory (export "memory") 2048) (func (export "_start")))'  # 128 MiB
    with pytest.raises(MemoryLimitExceeded):
        await sandbox.run(Spec(lang="wasm", code=wat, limits=Limits(memory=64 * MiB)))


async def test_output_flood_keeps_exactly_max_output(sandbox: Sandbox, probe_wasm: bytes) -> None:
    limit = 100_000
    with pytest.raises(OutputLimitExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["flood"], limits=Limits(max_output=limit)))
    result = info.value.result
    assert result is not None
    assert result.truncated
    assert len(result.stdout) + len(result.stderr) == limit
    assert result.stdout.startswith(b"0123456789abcdef")
