"""Names and paths a guest or caller may use in the in-memory filesystem, and how deep a tree may grow.

Why these limits:

* ``MAX_NAME`` (255 bytes) and ``MAX_PATH`` (4096) are the usual POSIX
  ``NAME_MAX`` and Linux ``PATH_MAX``, so whatever fits here fits a host
  filesystem when the CLI writes ``/out`` to disk.
* ``MAX_DEPTH`` (256 components in a node's absolute path, ``/out`` being
  1) is ours. A ``PATH_MAX`` path can spell at most 2048 components, but a
  guest can build a tree deeper than any single path by walking down with
  relative paths, and the host side walks guest-shaped trees (collecting
  ``/out``, sealing ``/in``, the CLI writing ``--out``). Those walks are
  iterative; this limit is the second line that bounds their work per file
  and keeps every collected key far below Python's recursion limit (1000)
  and below 4096 bytes for one-character names. 256 is far above what real
  programs build (deep ``node_modules`` or package trees stay well under
  100 levels). A guest's create, mkdir or rename past it fails with
  ENAMETOOLONG, the errno POSIX gives for a path that is too long; ELOOP
  would claim a symlink loop, and there are no symlinks. A caller's
  ``Spec.files`` key, placed under ``/in``, may have at most
  ``MAX_DEPTH - 1`` components; a deeper one is ``InvalidSpec``.
"""

from __future__ import annotations

import errno
import re
from typing import Final

from playground.core.errors import InvalidSpec
from playground.core.fsnode import VFSError

MAX_NAME: Final = 255
MAX_PATH: Final = 4096
#: Most components in a node's absolute path (``/out/a`` has 2); see the module docstring.
MAX_DEPTH: Final = 256

_WINDOWS_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$", re.I)
_DRIVE = re.compile(r"^[a-zA-Z]:")


def check_name(name: str) -> None:
    """Refuse a single path segment a guest or caller may not create.

    Raises:
        VFSError: EINVAL for ``.``/``..``/empty/NUL/``/``/``\\``/control
            characters, ENAMETOOLONG for names over 255 bytes.
    """
    if name in ("", ".", ".."):
        raise VFSError(errno.EINVAL, f"invalid file name {name!r}")
    if "/" in name or "\\" in name or any(ord(c) < 0x20 or c == "\x7f" for c in name):
        raise VFSError(errno.EINVAL, f"invalid character in file name {name!r}")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME:
        raise VFSError(errno.ENAMETOOLONG, f"file name too long ({len(name)} chars)")


def clean_key(key: str) -> tuple[str, ...]:
    """Validate a caller-given relative key (``Spec.files``) and split it.

    Stricter than a guest path: no ``.`` or ``..`` at all, no absolute path,
    no empty segment, no NUL, no backslash, no Windows drive letter or
    device name, no ``:`` (alternate data streams). What passes is safe to
    use as a file name on any host OS too (``/out`` is written to disk by
    the CLI).

    Raises:
        InvalidSpec: the key is unsafe; the message says why.
    """
    if not isinstance(key, str):
        raise InvalidSpec(f"file key must be a str, got {type(key).__name__}")
    if key == "":
        raise InvalidSpec("empty file key")
    if "\x00" in key:
        raise InvalidSpec(f"file key contains NUL: {key!r}")
    if key.startswith(("/", "\\")):
        raise InvalidSpec(f"file key must be relative, got absolute {key!r}")
    if _DRIVE.match(key):
        raise InvalidSpec(f"file key looks like a Windows drive path: {key!r}")
    if "\\" in key:
        raise InvalidSpec(f"file key contains a backslash: {key!r}")
    if len(key) > MAX_PATH:
        raise InvalidSpec(f"file key longer than {MAX_PATH} characters")
    parts = tuple(key.split("/"))
    if len(parts) > MAX_DEPTH - 1:
        raise InvalidSpec(
            f"file key {key[:40]!r}... is {len(parts)} components deep; at most {MAX_DEPTH - 1} are allowed "
            f"(paths in the sandbox are at most {MAX_DEPTH} deep, /in included)"
        )
    for part in parts:
        if part == "":
            raise InvalidSpec(f"file key has an empty segment: {key!r}")
        if part in (".", ".."):
            raise InvalidSpec(f"file key may not contain {part!r}: {key!r}")
        if ":" in part:
            raise InvalidSpec(f"file key may not contain ':': {key!r}")
        if _WINDOWS_DEVICE.match(part):
            raise InvalidSpec(f"file key uses a reserved device name {part!r}: {key!r}")
        if part.endswith((" ", ".")):
            raise InvalidSpec(f"file key segment ends with a dot or space: {key!r}")
        try:
            check_name(part)
        except VFSError as exc:
            raise InvalidSpec(f"file key {key!r}: {exc.strerror}") from None
    return parts
