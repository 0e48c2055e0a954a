"""Host files and directories a user names on the command line, read for the sandbox (``--work``).

The user names them, so a path given directly is read as the host reads
it. Inside a named directory nothing is followed: symbolic links (to a
file or a directory, anywhere on the host) are skipped and reported, as
are sockets and devices, so copying a project never pulls in something
from outside it. Reading stops with an error past ``MAX_FILES`` files or
``MAX_BYTES`` bytes, before a mistyped ``--work ~`` reads a home
directory into memory (the sandbox's quota is far smaller anyway).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from playground.core import InvalidSpec, clean_key

MAX_FILES: Final = 10_000
MAX_BYTES: Final = 1 << 30


class HostFileError(Exception):
    """A named path cannot be read, or holds more than may be copied; the message says which."""


@dataclass
class Tree:
    """What was read: guest keys -> bytes, and the entries skipped with why."""

    files: dict[str, bytes] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def read_tree(items: list[str], flag: str) -> Tree:
    """Read ``[NAME=]PATH`` items: a file goes to NAME (default: its name), a directory's files under NAME/.

    The default NAME of a directory is its own name (``--work src`` puts
    ``src/a.py`` at ``src/a.py``); ``NAME=`` with an empty NAME puts its
    contents at the top.

    Raises:
        HostFileError: unreadable, an unsafe NAME, a name given twice, or too much.
    """
    tree = Tree()
    total = 0
    for item in items:
        name, sep, path_text = item.partition("=")
        path = Path(path_text if sep else item)
        key = name if sep else path.resolve().name
        try:
            entries = list(_walk(path, key, tree.skipped)) if path.is_dir() else [(key, path.read_bytes())]
        except OSError as exc:
            raise HostFileError(f"{flag} {item}: {exc.strerror or exc}") from None
        for guest_key, data in entries:
            try:
                clean_key(guest_key)
            except InvalidSpec as exc:
                raise HostFileError(f"{flag} {item}: {exc}") from None
            if guest_key in tree.files:
                raise HostFileError(f"{flag} {item}: {guest_key} is given twice")
            tree.files[guest_key] = data
            total += len(data)
            if len(tree.files) > MAX_FILES or total > MAX_BYTES:
                raise HostFileError(f"{flag} {item}: more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB")
    return tree


def _walk(top: Path, key: str, skipped: list[str]) -> Iterator[tuple[str, bytes]]:
    """(guest key, bytes) of every regular file under ``top``, links and special files skipped, iteratively."""
    stack = [(top, key)]
    count = 0
    while stack:
        directory, prefix = stack.pop()
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                guest = f"{prefix}/{entry.name}" if prefix else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    stack.append((Path(entry.path), guest))
                elif stat.S_ISREG(mode):
                    count += 1
                    if count > MAX_FILES:
                        raise OSError(f"more than {MAX_FILES} files")
                    yield guest, _read_regular(entry.path)
                else:
                    skipped.append(f"{entry.path} ({'a symbolic link' if stat.S_ISLNK(mode) else 'not a file'})")


def _read_regular(path: str) -> bytes:
    """The bytes of ``path``, refusing anything that is not still a regular file (no link swapped in)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
