"""Wheels as the guest sees them: one read-only directory tree at ``GUEST_SITE``, on ``sys.path``.

Why a tree and not the ``.whl`` files on ``sys.path`` (zipimport): many
pure-Python packages read their data files by path next to their modules
(``os.path.dirname(__file__)``), which only a directory serves; and the
``*.dist-info`` folders make ``importlib.metadata.version("x")`` work.

How it is shown, per tier:

* Wasm: ``place`` hangs the tree into the run's VFS as host-made nodes:
  read-only (the guest cannot write, remove or rename anything there) and
  charged to no quota (``owner`` None), like a runtime's standard library.
  Each file's bytes are one immutable object shared by every run, read
  from a verified wheel once per process, so a run pays a few dictionary
  entries for it.
* Docker: the backend puts the same files into the run's input archive,
  under a tmpfs of their own (see ``backends.docker.packages``).

``guest_env`` adds ``GUEST_SITE`` to the guest's ``PYTHONPATH``, after
the caller's own entries (which keep precedence, as in CPython).

Wheels are only unzipped: a member must have a plain relative name, the
wheel must declare itself pure (``Root-Is-Purelib: true``, every tag with
ABI ``none`` and platform ``any``), and ``*.data/purelib`` and
``*.data/platlib`` members land at the top as an installer puts them
(other ``*.data`` parts, scripts and headers, are left out).
"""

from __future__ import annotations

import io
import itertools
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Final

from playground.core.errors import InvalidSpec, Unsupported
from playground.core.fsnames import check_name
from playground.core.vfs import VFS, Dir, File, Layout, VFSError

#: Where a run's packages are, in the guest.
GUEST_SITE: Final = "/opt/playground/site-packages"
#: Bounds on what one run's packages may unpack to (host memory is what they cost).
MAX_TREE_BYTES: Final = 512 << 20
MAX_TREE_FILES: Final = 100_000

#: Host-made nodes get numbers far above any run's own (a VFS counts from 1) and apart from other mounts'.
_inos = itertools.count(3 << 46)

#: One file of the tree: its path parts under ``GUEST_SITE`` and its bytes.
TreeFile = tuple[tuple[str, ...], bytes]


class SharedFile(File):
    """A read-only file whose bytes are one immutable object shared by every run."""

    __slots__ = ()

    def __init__(self, data: bytes) -> None:
        super().__init__(next(_inos), True)
        self._data = data  # type: ignore[assignment]  # read-only: no VFS ever resizes an unowned node


def unpack_wheel(filename: str, data: bytes) -> tuple[TreeFile, ...]:
    """The files a pure-Python wheel installs, relative to site-packages.

    Raises:
        Unsupported: the wheel is not pure Python (its tags or ``WHEEL`` say so).
        InvalidSpec: it is not a usable zip, or a member has an unsafe name.
    """
    _check_filename_tags(filename)
    files: list[TreeFile] = []
    total = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _check_wheel_metadata(filename, archive)
            for info in archive.infolist():
                if info.is_dir():
                    continue
                parts = _install_parts(filename, info.filename)
                if parts is None:
                    continue
                total += info.file_size
                if total > MAX_TREE_BYTES or len(files) >= MAX_TREE_FILES:
                    raise InvalidSpec(f"{filename} unpacks to more than {MAX_TREE_BYTES >> 20} MiB or too many files")
                files.append((parts, archive.read(info)))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise InvalidSpec(f"{filename} is not a usable wheel: {exc}") from None
    return tuple(files)


def _check_filename_tags(filename: str) -> None:
    parts = filename[: -len(".whl")].split("-") if filename.endswith(".whl") else []
    if len(parts) not in (5, 6):
        raise InvalidSpec(f"{filename!r} is not a wheel file name")
    abis, platforms = parts[-2].split("."), parts[-1].split(".")
    if any(a != "none" for a in abis) or any(p != "any" for p in platforms):
        raise Unsupported(f"{filename} is built for a platform ({parts[-2]}-{parts[-1]}): it has native code")


def _check_wheel_metadata(filename: str, archive: zipfile.ZipFile) -> None:
    wheel_files = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/WHEEL")]
    if len(wheel_files) != 1:
        raise InvalidSpec(f"{filename} has no single *.dist-info/WHEEL")
    text = archive.read(wheel_files[0]).decode("utf-8", "replace")
    fields = [line.partition(":") for line in text.splitlines()]
    purelib = [v.strip().lower() for k, _, v in fields if k.strip() == "Root-Is-Purelib"]
    tags = [v.strip() for k, _, v in fields if k.strip() == "Tag"]
    if purelib != ["true"] or any(not t.endswith("-none-any") for t in tags):
        raise Unsupported(f"{filename} is not pure Python (its WHEEL says {', '.join(tags) or 'no tag'})")


def _install_parts(filename: str, member: str) -> tuple[str, ...] | None:
    """Where a wheel member goes under site-packages (None: not installed there)."""
    if member.startswith("/") or "\\" in member:
        raise InvalidSpec(f"{filename}: unsafe member name {member!r}")
    parts = PurePosixPath(member).parts
    if not parts or any(p in (".", "..") for p in parts):
        raise InvalidSpec(f"{filename}: unsafe member name {member!r}")
    if parts[0].endswith(".data"):
        if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
            return None
        parts = parts[2:]
    for name in parts:
        try:
            check_name(name)
        except VFSError:
            raise InvalidSpec(f"{filename}: member name {member!r} cannot be shown to the guest") from None
    return tuple(parts)


def merge(trees: Iterable[Sequence[TreeFile]]) -> tuple[TreeFile, ...]:
    """Several wheels' files as one site-packages (a later wheel's file replaces an earlier one's, as pip does).

    Raises:
        InvalidSpec: one wheel has a file where another has a directory, or the total is too large.
    """
    merged: dict[tuple[str, ...], bytes] = {}
    for tree in trees:
        for parts, data in tree:
            merged[parts] = data
    dirs = {parts[:i] for parts in merged for i in range(1, len(parts))}
    clash = sorted(dirs & merged.keys())
    if clash:
        raise InvalidSpec(f"two packages disagree about {'/'.join(clash[0])}: a file in one, a directory in another")
    if sum(len(d) for d in merged.values()) > MAX_TREE_BYTES or len(merged) > MAX_TREE_FILES:
        raise InvalidSpec(f"the packages unpack to more than {MAX_TREE_BYTES >> 20} MiB or too many files")
    return tuple(sorted(merged.items()))


def host_dir(parent: Dir, name: str, inos: Iterator[int]) -> Dir | None:
    """``parent``'s read-only, host-made directory ``name`` (made when missing); None when a file is there.

    Shared by every tree the host hangs into a guest's VFS (packages here, runtime mounts in the Wasm
    backend); each caller has its own inode range (``inos``) and its own words for the refusal.
    """
    node = parent.children.get(name)
    if isinstance(node, Dir):
        return node
    if node is not None:
        return None
    made = Dir(next(inos), True, parent)
    made.links = 1
    parent.children[name] = made
    return made


def _host_dir(parent: Dir, name: str) -> Dir:
    made = host_dir(parent, name, _inos)
    if made is None:
        raise InvalidSpec(f"cannot show the packages: the guest tree has a file at {name!r}")
    return made


def place(vfs: VFS, files: Sequence[TreeFile]) -> None:
    """Hang ``files`` into ``vfs`` at ``GUEST_SITE``: read-only, host-made, charged to no quota.

    Raises:
        Unsupported: ``vfs`` is a caller's root (a writable ``/`` could move the
            host-made tree into ``/out`` and export it).
        InvalidSpec: something is already at ``GUEST_SITE``.
    """
    if vfs.layout is not Layout.STANDARD:
        raise Unsupported("packages need the standard layout (not Spec.root_files)")
    top = vfs.root
    for name in PurePosixPath(GUEST_SITE).parts[1:]:
        top = _host_dir(top, name)
    if top.children:
        raise InvalidSpec(f"{GUEST_SITE} is already in use")
    for parts, data in files:
        directory = top
        for name in parts[:-1]:
            directory = _host_dir(directory, name)
        node = SharedFile(data)
        node.links = 1
        directory.children[parts[-1]] = node


def guest_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with ``GUEST_SITE`` on ``PYTHONPATH``, after the caller's own entries (theirs win, as in CPython)."""
    found = dict(env)
    mine = found.get("PYTHONPATH", "")
    found["PYTHONPATH"] = f"{mine}:{GUEST_SITE}" if mine else GUEST_SITE
    return found
