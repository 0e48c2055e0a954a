"""Every limit on a real daemon, reported with the core's errors; cancellation kills promptly."""

from __future__ import annotations

import asyncio
import time

import pytest

from backends.docker import EngineKind
from backends.docker.detect import DaemonProbe
from backends.docker.engine import Engine
from playground.core import (
    FSQuotaExceeded,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Sandbox,
    Spec,
    TimeLimitExceeded,
)
from playground.packs import bash, node

from .conftest import require_image


@pytest.fixture(autouse=True)
def bash_image(engine: Engine) -> None:
    require_image(engine, bash.PACK)


async def test_infinite_loop_times_out_with_partial_output(sandbox: Sandbox) -> None:
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as info:
        await sandbox.run(Spec(lang="bash", code="echo started; while :; do :; done", limits=Limits(wall_time=1.5)))
    assert time.monotonic() - started < 10
    assert info.value.result is not None
    assert info.value.result.stdout == b"started\n"


async def test_cpu_time_limit(sandbox: Sandbox) -> None:
    with pytest.raises(TimeLimitExceeded, match="cpu-time"):
        await sandbox.run(Spec(lang="bash", code="while :; do :; done", limits=Limits(cpu_time=1.0, wall_time=20.0)))


async def test_output_flood_keeps_exactly_max_output(sandbox: Sandbox) -> None:
    with pytest.raises(OutputLimitExceeded) as info:
        await sandbox.run(Spec(lang="bash", code="yes 0123456789", limits=Limits(max_output=100_000)))
    result = info.value.result
    assert result is not None and result.truncated
    assert len(result.stdout) + len(result.stderr) == 100_000
    assert result.stdout.startswith(b"0123456789\n")


async def test_output_flood_on_stderr(sandbox: Sandbox) -> None:
    with pytest.raises(OutputLimitExceeded) as info:
        await sandbox.run(Spec(lang="bash", code="yes >&2", limits=Limits(max_output=5000)))
    assert info.value.result is not None
    assert len(info.value.result.stderr) + len(info.value.result.stdout) == 5000


async def test_memory_hog(sandbox: Sandbox) -> None:
    code = 'x=$(head -c 400000000 /dev/zero | tr "\\0" a); echo ${#x}'
    with pytest.raises(MemoryLimitExceeded):
        await sandbox.run(Spec(lang="bash", code=code, limits=Limits(memory=64 << 20)))


async def test_node_memory_hog(sandbox: Sandbox, engine: Engine) -> None:
    require_image(engine, node.PACK)
    code = "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));"
    with pytest.raises(MemoryLimitExceeded):
        await sandbox.run(Spec(lang="node", code=code, limits=Limits(memory=96 << 20)))


async def test_fork_bomb_is_contained(sandbox: Sandbox) -> None:
    started = time.monotonic()
    code = ":(){ :|:& };: 2>/dev/null; sleep 1; echo survived"
    try:
        result = await sandbox.run(
            Spec(lang="bash", code=code, limits=Limits(max_procs=16, wall_time=5.0, max_output=64 << 10))
        )
    except (TimeLimitExceeded, OutputLimitExceeded) as exc:
        assert exc.result is not None
    else:
        assert result.stdout.endswith(b"survived\n")
    assert time.monotonic() - started < 20
    # the daemon and host are fine: the next run works normally
    again = await sandbox.run(Spec(lang="bash", code="echo fine"))
    assert again.stdout == b"fine\n"


async def test_pids_limit_is_max_procs_plus_init_and_wrapper(sandbox: Sandbox) -> None:
    code = "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"
    result = await sandbox.run(Spec(lang="bash", code=code, limits=Limits(max_procs=10)))
    assert result.stdout == b"12\n"


async def test_tmpfs_full_is_enospc_and_fs_quota_exceeded(sandbox: Sandbox) -> None:
    code = "head -c 8000000 /dev/zero > /work/big; echo rc=$?"
    with pytest.raises(FSQuotaExceeded) as info:
        await sandbox.run(Spec(lang="bash", code=code, limits=Limits(fs_quota=2 << 20)))
    result = info.value.result
    assert result is not None
    assert b"No space left on device" in result.stderr
    assert result.stdout.startswith(b"rc=1")


async def test_file_count_limit(sandbox: Sandbox) -> None:
    probe = DaemonProbe().get()
    if probe.info is not None and probe.info.kind is EngineKind.PODMAN:
        pytest.skip("Podman 4.3 rejects tmpfs nr_inodes; max_files is checked only when /out is collected")
    code = "for i in $(seq 1 100); do : > /work/f$i || break; done 2>/dev/null; ls /work | wc -l"
    with pytest.raises(FSQuotaExceeded, match="ran out of files"):
        await sandbox.run(Spec(lang="bash", code=code, limits=Limits(max_files=20)))


async def test_cancellation_kills_the_container(sandbox: Sandbox, engine: Engine) -> None:
    before = set(engine.containers())
    task = asyncio.create_task(sandbox.run(Spec(lang="bash", code="echo up; sleep 60")))
    deadline = time.monotonic() + 20
    while not set(engine.containers()) - before:
        assert time.monotonic() < deadline, "the container never appeared"
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 5
    assert set(engine.containers()) == before


async def test_stdin_larger_than_the_quota(sandbox: Sandbox) -> None:
    with pytest.raises(FSQuotaExceeded, match="stdin"):
        await sandbox.run(Spec(lang="bash", code="wc -c", stdin=b"x" * (3 << 20), limits=Limits(fs_quota=1 << 20)))
