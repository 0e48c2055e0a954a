"""A guest that attacks /out collection gets nothing onto the host and nothing it should not have."""

from __future__ import annotations

import pytest

from backends.docker.engine import Engine
from playground.core import FSQuotaExceeded, Limits, Sandbox, Spec
from playground.packs import bash

from .conftest import require_image


@pytest.fixture(autouse=True)
def bash_image(engine: Engine) -> None:
    require_image(engine, bash.PACK)


async def test_links_and_fifos_in_out_are_refused(sandbox: Sandbox) -> None:
    code = (
        "ln -s /etc/passwd /out/passwd; ln -s ../../../../etc/shadow /out/shadow; mkdir /out/d; "
        "ln -s / /out/d/root; mkfifo /out/fifo; echo ok > /out/ok.txt; echo x > /out/d/h; ln /out/d/h /out/d/h2"
    )
    result = await sandbox.run(Spec(lang="bash", code=code))
    assert result.exit_code == 0, result.stderr
    files = dict(result.files)
    assert files.pop("ok.txt") == b"ok\n"
    # the two names of one inode: tar stores one as the file, the other as a hard link (refused)
    assert [files.pop(name) for name in ("d/h", "d/h2") if name in files] == [b"x\n"]
    assert files == {}  # no symlink, no fifo, no hard link, no content of the host's /etc/passwd
    assert all(b"root:" not in data for data in result.files.values())


async def test_huge_file_in_out_is_over_quota(sandbox: Sandbox) -> None:
    code = "head -c 3000000 /dev/urandom > /out/big 2>/dev/null; echo done"
    with pytest.raises(FSQuotaExceeded):
        await sandbox.run(Spec(lang="bash", code=code, limits=Limits(fs_quota=1 << 20)))


async def test_sparse_file_cannot_inflate_out(sandbox: Sandbox) -> None:
    """A hole takes no tmpfs space but is full size in the tar: collection stops at the cap."""
    code = "truncate -s 4600K /out/sparse && echo made"
    with pytest.raises(FSQuotaExceeded) as info:
        await sandbox.run(Spec(lang="bash", code=code, limits=Limits(fs_quota=4 << 20)))
    assert info.value.result is not None
    assert info.value.result.stdout == b"made\n"
    assert "sparse" not in info.value.result.files


async def test_file_size_limit_stops_a_giant_hole(sandbox: Sandbox) -> None:
    result = await sandbox.run(Spec(lang="bash", code="truncate -s 1G /out/sparse", limits=Limits(fs_quota=4 << 20)))
    assert result.exit_code != 0  # SIGXFSZ: RLIMIT_FSIZE is just above the quota
    assert dict(result.files) in ({}, {"sparse": b""})


async def test_too_many_files_in_out(sandbox: Sandbox) -> None:
    code = "for i in $(seq 1 60); do : > /out/f$i; done 2>/dev/null; echo done"
    with pytest.raises(FSQuotaExceeded):
        await sandbox.run(Spec(lang="bash", code=code, limits=Limits(max_files=30)))


async def test_forged_trailer_only_hurts_the_guest(sandbox: Sandbox) -> None:
    """A guest that prints a fake marker cannot break the host side (it cannot know the real one)."""
    code = "printf '\\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\\n'; head -c 2000 /dev/urandom; echo tail"
    result = await sandbox.run(Spec(lang="bash", code=code))
    assert result.stdout.endswith(b"tail\n")
    assert result.files == {}


async def test_shared_memory_is_capped_and_not_executable(sandbox: Sandbox) -> None:
    """``/dev/shm`` (for multiprocessing's semaphores) is scratch like ``/tmp``: its size is ``fs_quota``, a
    program copied there cannot be run, and nothing of it is collected."""
    code = (
        "head -c 3000000 /dev/zero > /dev/shm/fill 2>/dev/null; echo \"fill $? $(stat -c %s /dev/shm/fill)\"\n"
        "rm /dev/shm/fill\n"
        "cp /bin/true /dev/shm/t && chmod +x /dev/shm/t && { /dev/shm/t 2>/dev/null; echo \"exec $?\"; }\n"
    )
    result = await sandbox.run(Spec(lang="bash", code=code, limits=Limits(fs_quota=1 << 20)))
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "fill 1 1048576", result.stdout  # ENOSPC at the quota, not 3 MB
    assert lines[1] == "exec 126", result.stdout  # noexec: permission denied
    assert result.files == {}
