"""Reading the guest's ``/out`` tar stream as hostile input.

The archive is produced inside the container by a tar the guest may have
tampered with (or forged outright), so it is parsed in memory with strict
checks and nothing is ever written to the host filesystem:

* only regular files and directories are taken; symlinks, hard links,
  character/block devices, FIFOs and anything else are refused (recorded
  in ``OutArchive.refused``, never followed, never created);
* names must be relative: an absolute name, a ``..`` segment, an empty
  segment, NUL or a backslash is refused;
* the total of file bytes is checked against ``max_bytes`` *before* a
  member's data is read, and the number of entries against
  ``max_entries``; crossing either raises ``OutQuotaExceeded`` and stops
  reading at once;
* a corrupt or truncated stream keeps what was read before the damage and
  records why in ``refused``.
"""

from __future__ import annotations

import io
import logging
import tarfile
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


class OutQuotaExceeded(Exception):
    """``/out`` holds more bytes or entries than the run's quota allows."""


@dataclass(slots=True)
class OutArchive:
    """What was accepted from ``/out``: directories, files (in archive order) and refusals."""

    dirs: list[str] = field(default_factory=list)
    files: list[tuple[str, bytes]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(len(data) for _, data in self.files)


def clean_member_name(name: str) -> str | None:
    """The relative path of a member, ``""`` for the archive root, or None if unsafe."""
    if "\x00" in name or "\\" in name or name.startswith("/"):
        return None
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    if name in ("", "."):
        return ""
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    return name


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "symbolic link"
    if member.islnk():
        return "hard link"
    if member.ischr():
        return "character device"
    if member.isblk():
        return "block device"
    if member.isfifo():
        return "FIFO"
    return f"unsupported entry type {member.type!r}"


def read_out_archive(data: bytes, *, max_bytes: int | None, max_entries: int | None) -> OutArchive:
    """Parse a tar of ``/out`` with the checks in the module docstring.

    ``None`` for a limit means that limit is lifted. Empty ``data`` is an
    empty ``/out``.

    Raises:
        OutQuotaExceeded: more file bytes than ``max_bytes`` or more entries
            (files plus directories) than ``max_entries``.
    """
    result = OutArchive()
    if not data:
        return result
    total = 0
    entries = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|") as archive:
            for member in archive:
                name = clean_member_name(member.name)
                if name is None:
                    result.refused.append((member.name, "unsafe name"))
                    continue
                if name == "":
                    continue
                if not (member.isreg() or member.isdir()):
                    result.refused.append((name, _kind(member)))
                    continue
                entries += 1
                if max_entries is not None and entries > max_entries:
                    raise OutQuotaExceeded(f"/out holds more than {max_entries} entries")
                if member.isdir():
                    result.dirs.append(name)
                    continue
                if max_bytes is not None and total + member.size > max_bytes:
                    raise OutQuotaExceeded(
                        f"/out holds more than {max_bytes} bytes ({name!r} alone is {member.size} bytes)"
                    )
                reader = archive.extractfile(member)
                content = reader.read() if reader is not None else b""
                if len(content) != member.size:
                    result.refused.append((name, "truncated"))
                    break
                total += len(content)
                result.files.append((name, content))
    except tarfile.TarError as exc:
        log.warning("the /out archive is damaged after %d entries: %s", entries, exc)
        result.refused.append(("", f"damaged archive: {exc}"))
    return result
