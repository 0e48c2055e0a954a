"""Write a run's ``/out`` files into a host directory without being tricked.

The names come from the guest, so they are hostile until proven otherwise:
each is re-checked with the same rules as caller keys (no ``..``, no
absolute path, no drive letter or device name), and every directory is
opened relative to its parent with ``O_NOFOLLOW``, so a symlink already
sitting in the target directory cannot redirect a write elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from playground.core import InvalidSpec, clean_key

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_out_files(target: Path, files: Mapping[str, bytes]) -> tuple[list[str], list[str]]:
    """Write ``files`` under ``target``; return (written, refused-with-reason).

    Raises:
        OSError: the target directory itself cannot be created or opened.
    """
    target.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    refused: list[str] = []
    root_fd = os.open(target, _DIR_FLAGS)
    try:
        for key, data in sorted(files.items()):
            try:
                parts = clean_key(key)
            except InvalidSpec as exc:
                refused.append(f"{key!r}: {exc}")
                continue
            try:
                _write_one(root_fd, parts, data)
            except OSError as exc:
                refused.append(f"{key!r}: {exc.strerror or exc}")
                continue
            written.append(key)
    finally:
        os.close(root_fd)
    return written, refused


def _write_one(root_fd: int, parts: tuple[str, ...], data: bytes) -> None:
    """Create ``parts`` under ``root_fd`` one directory at a time, holding one directory fd at most.

    Iterative and with a constant number of open descriptors, however deep
    the guest made the tree.
    """
    parent = root_fd
    try:
        for part in parts[:-1]:
            try:
                os.mkdir(part, 0o755, dir_fd=parent)
            except FileExistsError:
                pass
            child = os.open(part, _DIR_FLAGS, dir_fd=parent)
            if parent != root_fd:
                os.close(parent)
            parent = child
        fd = os.open(parts[-1], _FILE_FLAGS, 0o644, dir_fd=parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    finally:
        if parent != root_fd:
            os.close(parent)
