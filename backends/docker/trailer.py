"""Splitting guest stdout from the wrapper's trailer, and reading the trailer.

The wrapper (see ``wrapper``) ends its stdout with ``marker_line``
(``\\x1e MARK \\n``), usage reports and a tar of ``/out``.
``MarkerSplitter`` finds the first marker in a stream of chunks and passes
every guest byte on at once, except a tail that could be the start of the
marker: the marker begins with the ASCII record separator, which output
almost never ends with, followed by the secret, so in practice nothing is
held back and output streams as it is written, in order with stderr. (It
used to begin with a newline: every line the guest printed then waited in
the splitter, up to the whole run, for the bytes that would tell it was not
the marker; issue #17.) ``parse_trailer`` reads the
sections; every field is optional because the trailer may be cut short (the
container was killed at a limit while writing it). The guest cannot forge
it: the marker lives only in the root wrapper, which the guest cannot read,
and no guest process is left alive when the trailer is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

_SECTIONS: Final = 4


#: The first byte of the marker line: ASCII RS, which guest output almost never ends with (see the docstring).
MARKER_LEAD: Final = b"\x1e"


def marker_line(mark: str) -> bytes:
    """The line that ends guest stdout and starts the trailer (the wrapper prints it with ``printf``)."""
    return MARKER_LEAD + mark.encode() + b"\n"


class MarkerSplitter:
    """Feed stdout chunks; get back guest bytes (before the marker) and trailer bytes (after).

    Holds back only a tail that is a proper prefix of the marker line (it
    starts with ``MARKER_LEAD``); everything else is returned at once.
    """

    def __init__(self, mark: str) -> None:
        self._needle = marker_line(mark)
        self._pending = bytearray()
        self.found = False

    def feed(self, data: bytes) -> tuple[bytes, bytes]:
        """Return ``(guest_bytes, trailer_bytes)`` that are certain so far."""
        if self.found:
            return b"", data
        self._pending += data
        index = self._pending.find(self._needle)
        if index >= 0:
            guest = bytes(self._pending[:index])
            trailer = bytes(self._pending[index + len(self._needle) :])
            self._pending.clear()
            self.found = True
            return guest, trailer
        # Only an occurrence of the lead byte in the last len(needle) - 1 bytes can start the marker,
        # and only the last one (the secret after the lead byte never contains it).
        window = max(0, len(self._pending) - (len(self._needle) - 1))
        start = self._pending.rfind(MARKER_LEAD, window)
        if start < 0 or not self._needle.startswith(self._pending[start:]):
            start = len(self._pending)
        guest = bytes(self._pending[:start])
        del self._pending[:start]
        return guest, b""

    def flush(self) -> bytes:
        """Guest bytes still held back (the stream ended without a marker)."""
        rest = bytes(self._pending)
        self._pending.clear()
        return rest


@dataclass(frozen=True, slots=True, kw_only=True)
class MountUsage:
    """One mount as ``df -P`` reported it (bytes, or inodes for the ``-i`` report)."""

    total: int
    used: int
    available: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Trailer:
    """What the wrapper reported after the program ended."""

    space: dict[str, MountUsage] = field(default_factory=dict)
    inodes: dict[str, MountUsage] = field(default_factory=dict)
    peak_memory: int = 0
    #: Processes the kernel's OOM killer killed in the run's cgroup; None when the cgroup did not say.
    oom_kills: int | None = None
    #: Forks the pids limit refused (``pids.events`` ``max``); None when the cgroup did not say.
    forks_refused: int | None = None
    #: What the guest wrote to its report channel (``wrapper.REPORT_FD``): the guest's word, never more.
    report: bytes = b""
    out_tar: bytes = b""
    complete: bool = False


def parse_df(text: str, *, scale: int) -> dict[str, MountUsage]:
    """Parse ``df -P`` output (header line, then one line per mount) into a map by mount point."""
    usage: dict[str, MountUsage] = {}
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 6:
            continue
        try:
            total, used, available = (int(fields[1]), int(fields[2]), int(fields[3]))
        except ValueError:
            continue
        usage[fields[-1]] = MountUsage(total=total * scale, used=used * scale, available=available * scale)
    return usage


def parse_counters(text: str) -> dict[str, int]:
    """The memory section: the peak in bytes on its first line, then ``name value`` lines (``wrapper._COUNTERS``).

    The peak is under ``"peak"``; a line that does not parse is skipped, a
    negative value is dropped.
    """
    counters: dict[str, int] = {}
    for number, line in enumerate(text.splitlines()):
        words = line.split()
        if number == 0 and len(words) == 1:
            words = ["peak", words[0]]
        if len(words) != 2:
            continue
        try:
            value = int(words[1])
        except ValueError:
            continue
        if value >= 0:
            counters.setdefault(words[0], value)
    return counters


def report_line(mark: str) -> bytes:
    """The line that ends the memory section and starts the in-guest report (the wrapper prints it)."""
    return mark.encode() + b":report\n"


def parse_trailer(data: bytes, mark: str) -> Trailer:
    """Split ``data`` (everything after the first marker) into its sections.

    The third section holds the memory counters and, after ``report_line``,
    the guest's report: split there first, so that nothing the guest wrote
    can be read as a counter.
    """
    parts = data.split(mark.encode() + b"\n", _SECTIONS - 1)
    while len(parts) < _SECTIONS:
        parts.append(b"")
    space_text, inode_text, memory_part, out_tar = parts
    memory_text, _, report = memory_part.partition(report_line(mark))
    counters = parse_counters(memory_text.decode("utf-8", "replace"))
    return Trailer(
        space=parse_df(space_text.decode("utf-8", "replace"), scale=1024),
        inodes=parse_df(inode_text.decode("utf-8", "replace"), scale=1),
        peak_memory=counters.get("peak", 0),
        oom_kills=counters.get("oom_kill"),
        forks_refused=counters.get("forks_refused"),
        report=report,
        out_tar=out_tar,
        complete=data.count(mark.encode() + b"\n") >= _SECTIONS - 1,
    )
