"""Checking what a run used against its limits, and bringing ``/out`` into the VFS.

Sizes on the container side are in tmpfs pages (``PAGE``): that is what a
tmpfs charges, so a quota of N bytes holds fewer than N one-byte files.
"""

from __future__ import annotations

import errno
import logging
from typing import Final

from backends.docker.outtar import OutQuotaExceeded, read_out_archive
from backends.docker.trailer import Trailer
from backends.docker.wrapper import REPORTED_MOUNTS
from playground.core import VFS, FSQuotaExceeded, Request, ResolvedLimits, VFSError
from playground.core.vfs import Dir

log = logging.getLogger(__name__)

#: The mounts whose total is held to ``fs_quota`` (``/tmp`` is scratch with its own cap).
VFS_MOUNTS: Final = ("/in", "/work", "/out")
#: The tmpfs allocation unit.
PAGE: Final = 4096
#: Free space (bytes) below which a tmpfs counts as full.
FULL_BELOW: Final = 4096


def collect_out(trailer: Trailer, vfs: VFS, limits: ResolvedLimits) -> None:
    """Copy the accepted ``/out`` entries into the VFS, which enforces the run's quota.

    Raises:
        FSQuotaExceeded: too many bytes or entries (entries read before that stay).
    """
    try:
        archive = read_out_archive(trailer.out_tar, max_bytes=limits.fs_quota_cap, max_entries=limits.max_files_cap)
    except OutQuotaExceeded as exc:
        raise FSQuotaExceeded(str(exc)) from None
    for name, why in archive.refused:
        log.warning("refused /out entry %r: %s", name, why)
    out = vfs.root.children["out"]
    assert isinstance(out, Dir)
    try:
        for name in archive.dirs:
            current = out
            for part in name.split("/"):
                child = current.children.get(part)
                if child is None:
                    child = vfs.mkdir(current, part)
                if not isinstance(child, Dir):
                    log.warning("refused /out directory %r: a file is in the way", name)
                    break
                current = child
        for name, data in archive.files:
            try:
                vfs.write_file(f"/out/{name}", data)
            except VFSError as exc:
                if exc.errno == errno.EDQUOT:
                    raise
                log.warning("refused /out file %r: %s", name, exc.strerror)
    except VFSError as exc:
        if exc.errno == errno.EDQUOT:
            raise FSQuotaExceeded(f"/out does not fit the filesystem quota: {exc.strerror}") from None
        log.warning("refused part of /out: %s", exc.strerror)


def kernel_oom_kill(trailer: Trailer | None, oom_killed: bool) -> bool:
    """True when the kernel says its OOM killer killed a process of the run, never from a guess.

    Two witnesses, both the kernel's: the engine's ``OOMKilled`` state, and
    the cgroup's ``oom_kill`` counter the wrapper reports (Podman 4.3 does
    not set ``OOMKilled``; the counter also covers a killed child while the
    main program lived on). A peak near the limit is not one: the cgroup's
    usage counts page cache (a compiler reading its libraries, tmpfs files),
    which the kernel reclaims instead of killing, so ``peak >= limit`` held
    for runs that merely failed to compile (issue #17).
    """
    return oom_killed or (trailer is not None and bool(trailer.oom_kills))


def limits_reached(trailer: Trailer | None) -> tuple[str, ...]:
    """The limits the guest ran into without being stopped (``Result.limits_reached``), as the kernel counted."""
    if trailer is not None and trailer.forks_refused:
        return ("max_procs",)
    return ()


def _pages(size: int) -> int:
    return -(-size // PAGE) * PAGE


def check_inputs_fit(request: Request) -> None:
    """Refuse up front what could not be unpacked into the tmpfs mounts (sizes in tmpfs pages).

    Raises:
        FSQuotaExceeded: ``/in``, or the program, its stdin and the caller's work files in ``/work``,
            exceed ``fs_quota``.
    """
    quota = request.limits.fs_quota_cap
    if quota is None:
        return
    inputs = sum(_pages(len(f.data)) for _, f in request.vfs.iter_files(_base(request.vfs, "in")))
    work = sum(_pages(len(f.data)) for _, f in request.vfs.iter_files(_base(request.vfs, "work")))
    if inputs > quota:
        raise FSQuotaExceeded(f"the /in files need {inputs} bytes of tmpfs pages; the quota is {quota}")
    staged = work + _pages(len(request.spec.code_bytes)) + _pages(len(request.stdin)) + 2 * PAGE
    if staged > quota:
        raise FSQuotaExceeded(
            f"the program, its stdin and the work files need {staged} bytes in /work; the quota is {quota}"
        )


def _base(vfs: VFS, name: str) -> Dir:
    node = vfs.root.children[name]
    assert isinstance(node, Dir)
    return node


def quota_hit(trailer: Trailer, limits: ResolvedLimits) -> str:
    """Why the guest ran into its filesystem quota, or "" if it did not."""
    quota = limits.fs_quota_cap
    max_files = limits.max_files_cap
    for mount in REPORTED_MOUNTS:
        if mount == "/in":
            continue
        usage = trailer.space.get(mount)
        if quota is not None and usage is not None and usage.total and usage.available < FULL_BELOW:
            return f"{mount} is full (filesystem quota of {quota} bytes)"
        inodes = trailer.inodes.get(mount)
        if max_files is not None and inodes is not None and inodes.total and inodes.available <= 0:
            return f"{mount} ran out of files (limit of {max_files})"
    if quota is not None:
        used = sum(u.used for m, u in trailer.space.items() if m in VFS_MOUNTS)
        if used > quota:
            return f"the guest used {used} bytes in /in, /work and /out (in tmpfs pages); the quota is {quota}"
    return ""
