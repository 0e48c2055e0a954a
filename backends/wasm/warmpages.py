"""Pages of a snapshot image that every run writes, copied in one call before the guest starts.

Why: a run maps its snapshot image copy-on-write (``memlimit.MemoryImage``).
A page the guest reads first is mapped read-only from the image; its first
write then replaces that present page-table entry, and the kernel must
flush it from every other CPU running a thread of this process: a TLB
shootdown, an inter-processor interrupt (a VM exit in a virtual machine).
With two runs at once on two cores, each run interrupted the other about
100-180 times (``perf``: 95 % of the process's TLB flushes came from
``do_wp_page``), and two concurrent HumanEval checks cost 25 % more CPU
each than one alone. A page written before it was ever mapped needs no
flush.

So the pages an interpreter writes in any run (its start-up state: the
run's own source, refcounts of common objects, the boot script's frames)
are learned once per image and process, from host-chosen calibration runs
(``written``: pages present in the image's range and no longer the
image's, read from ``/proc/self/pagemap``), and a later run that starts
while another run of the process is running has them copied in write mode
with ``madvise(MADV_POPULATE_WRITE)`` before its guest starts
(``WarmPages.prefault``; ``runner``). A run alone is not prefaulted: its
faults interrupt nobody, and copying pages it may never write made
``print(1)`` 1.5 ms slower. The pages copied are what the run would have
copied anyway, from the same image: only page numbers are learned, never
content, and never from a user's run, so nothing of one run can reach
another (not even as timing).

Where the kernel lacks either interface, nothing is learned and runs
fault as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

log = logging.getLogger(__name__)

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_madvise = _libc.madvise
_madvise.restype = ctypes.c_int
_madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)

MADV_POPULATE_WRITE: Final = 23
PAGE: Final = os.sysconf("SC_PAGE_SIZE")
#: Written pages closer than this many pages are copied as one range (fewer calls; a few extra copies).
MERGE_GAP: Final = 2
#: The top byte of a pagemap entry: bit 63 present, bit 61 a file page (here: still the image's).
_PRESENT: Final = 0x80
_FILE: Final = 0x20
#: Top byte -> 1 when the page is present and no longer the image's (the run wrote it), else 0.
_WRITTEN: Final = bytes(1 if value & (_PRESENT | _FILE) == _PRESENT else 0 for value in range(256))
_RUN: Final = re.compile(b"\x01+")


@dataclass(frozen=True, slots=True)
class WarmPages:
    """Page ranges of an image, ``(first page, page count)``, that runs have copied before they start."""

    ranges: tuple[tuple[int, int], ...] = ()

    @property
    def pages(self) -> int:
        return sum(count for _, count in self.ranges)

    @classmethod
    def common(cls, runs: Sequence[bytes]) -> WarmPages:
        """The pages written in every one of ``runs`` (per-page 0/1 flags, ``written``), in merged ranges."""
        if not runs or any(len(flags) != len(runs[0]) for flags in runs):
            return cls()
        every = int.from_bytes(runs[0], "little")
        for flags in runs[1:]:
            every &= int.from_bytes(flags, "little")
        return cls(tuple(_merge(_runs(every.to_bytes(len(runs[0]), "little")))))

    def prefault(self, base: int) -> bool:
        """Copy the pages into the memory at ``base`` (mapped from the image, writable). False: not done."""
        return all(populate_write(base + first * PAGE, count * PAGE) for first, count in self.ranges)


def populate_write(address: int, length: int) -> bool:
    """``madvise(MADV_POPULATE_WRITE)``: fault the range in for writing now. False: the kernel refused."""
    return bool(_madvise(address, length, MADV_POPULATE_WRITE) == 0)


def written(base: int, length: int) -> bytes | None:
    """One byte per page of the ``length`` bytes at ``base``: 1 where this process wrote its own copy.

    None when ``/proc/self/pagemap`` cannot be read.
    """
    pages = length // PAGE
    try:
        fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = os.pread(fd, pages * 8, base // PAGE * 8)
        finally:
            os.close(fd)
    except OSError as exc:
        log.info("cannot read the page map (%s): runs are not prefaulted", exc)
        return None
    if len(data) != pages * 8:
        return None
    return data[7::8].translate(_WRITTEN)


def _runs(flags: bytes) -> Iterable[tuple[int, int]]:
    for match in _RUN.finditer(flags):
        yield match.start(), match.end() - match.start()


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for first, count in ranges:
        if merged and first - (merged[-1][0] + merged[-1][1]) <= MERGE_GAP:
            start = merged[-1][0]
            merged[-1] = (start, first + count - start)
        else:
            merged.append((first, count))
    return merged
