"""Artifacts shown read-only inside the guest: a runtime's standard-library zip and data trees.

A ``Mount`` (``WasmSpec.mounts``) puts a pinned artifact, or one member of
it, into the run's tree. Why it looks like this:

* The content is shared, never copied per run: it is read (and its
  SHA-256 checked, through the ``ArtifactStore``) once per process and
  each run gets nodes whose bytes are that one immutable ``bytes`` object.
  A 54 MB library zip then costs a run a few dictionary entries.
* The nodes are host-made: read-only and charged to no quota (``owner``
  None, as the session's ``/.session`` directory), because they are the
  runtime's, not the program's. The guest cannot write, remove or rename
  anything inside them (every directory on the way is read-only too).
* A ``tree`` mount (a zip archive shown as a directory) whose path lies
  *inside* a mounted file (matplotlib's data "in" the library zip) cannot
  hang in the tree: it becomes a preopen of its own, which wasi-libc
  picks for every path under its name (longest prefix wins). Its top
  directory is the descriptor's floor, so ``..`` cannot leave it.

Only the standard layout gets mounts (a caller's writable root could move
a host-made directory into ``/out`` and export it).
"""

from __future__ import annotations

import io
import itertools
import threading
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

from backends.wasm.artifacts import ArtifactStore
from playground.core.errors import BackendUnavailable
from playground.core.pack import Mount
from playground.core.package_tree import host_dir
from playground.core.vfs import VFS, Dir, File, Layout

#: Host-made nodes get numbers far above any run's own (a VFS counts from 1).
_INO_BASE: Final = 1 << 48
_inos = itertools.count(_INO_BASE)
#: A tree mount may hold at most this many files (a sanity bound on a pinned archive).
MAX_TREE_FILES: Final = 10_000


class SharedFile(File):
    """A read-only file whose bytes are one immutable object shared by every run."""

    __slots__ = ()

    def __init__(self, data: bytes) -> None:
        super().__init__(next(_inos), True)
        self._data = data  # type: ignore[assignment]  # read-only: no VFS ever resizes an unowned node


@dataclass(frozen=True, slots=True)
class _Tree:
    files: tuple[tuple[tuple[str, ...], bytes], ...]


_lock = threading.Lock()
_content: dict[tuple[str, str, bool], bytes | _Tree] = {}


def _load(store: ArtifactStore, mount: Mount, runtime: str) -> bytes | _Tree:
    """The mount's content, read and verified once per process. Thread-safe."""
    key = (mount.artifact.sha256, mount.member, mount.tree)
    with _lock:
        found = _content.get(key)
        if found is not None:
            return found
        whole = _content.get((mount.artifact.sha256, "", False))
        if not isinstance(whole, bytes):
            whole = store.verified_path(mount.artifact, runtime).read_bytes()
            _content[(mount.artifact.sha256, "", False)] = whole
        data = whole
        if mount.member:
            try:
                with zipfile.ZipFile(io.BytesIO(whole)) as archive:
                    data = archive.read(mount.member)
            except (KeyError, zipfile.BadZipFile) as exc:
                raise BackendUnavailable(f"{mount.artifact.name} has no usable {mount.member}: {exc}") from None
        result: bytes | _Tree = _unpack(data, mount) if mount.tree else data
        _content[key] = result
        return result


def _unpack(data: bytes, mount: Mount) -> _Tree:
    files: list[tuple[tuple[str, ...], bytes]] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                parts = PurePosixPath(info.filename).parts
                if not parts or info.filename.startswith("/") or any(p in ("", ".", "..") for p in parts):
                    raise BackendUnavailable(f"{mount.artifact.name}: unexpected member {info.filename!r}")
                files.append((parts, archive.read(info)))
                if len(files) > MAX_TREE_FILES:
                    raise BackendUnavailable(f"{mount.artifact.name}: {mount.member} has too many files")
    except zipfile.BadZipFile as exc:
        raise BackendUnavailable(f"{mount.artifact.name}: {mount.member or 'it'} is not a zip archive: {exc}") from None
    return _Tree(tuple(files))


def _child_dir(parent: Dir, name: str) -> Dir:
    made = host_dir(parent, name, _inos)
    if made is None:
        raise BackendUnavailable(f"cannot mount under {name!r}: the guest tree has a file there")
    return made


def _inside_file(vfs: VFS, parts: Sequence[str]) -> bool:
    node: Dir = vfs.root
    for name in parts:
        child = node.children.get(name)
        if child is None:
            return False
        if not isinstance(child, Dir):
            return True
        node = child
    return False


def place(vfs: VFS, mounts: Sequence[Mount], store: ArtifactStore, runtime: str) -> list[tuple[str, Dir]]:
    """Put ``mounts`` into ``vfs``; return the extra preopens (guest path, directory) they need.

    Raises:
        BackendUnavailable: an artifact is missing or corrupt, a member is
            missing, a mount collides with the caller's files, or the
            layout is a caller's root.
    """
    if not mounts:
        return []
    if vfs.layout is not Layout.STANDARD:
        raise BackendUnavailable(f"the {runtime} runtime needs the standard layout (not Spec.root_files)")
    preopens: list[tuple[str, Dir]] = []
    for mount in mounts:
        content = _load(store, mount, runtime)
        parts = PurePosixPath(mount.guest_path).parts[1:]
        if isinstance(content, _Tree):
            top = _build_tree(content)
            if _inside_file(vfs, parts[:-1]):
                preopens.append((mount.guest_path, top))
                continue
            parent = vfs.root
            for name in parts[:-1]:
                parent = _child_dir(parent, name)
            if parts[-1] in parent.children:
                raise BackendUnavailable(f"cannot mount at {mount.guest_path}: something is there")
            top.parent = parent
            top.links = 1
            parent.children[parts[-1]] = top
            continue
        parent = vfs.root
        for name in parts[:-1]:
            parent = _child_dir(parent, name)
        if parts[-1] in parent.children:
            raise BackendUnavailable(f"cannot mount at {mount.guest_path}: something is there")
        node = SharedFile(content)
        node.links = 1
        parent.children[parts[-1]] = node
    return preopens


def _build_tree(tree: _Tree) -> Dir:
    top = Dir(next(_inos), True, None)
    for parts, data in tree.files:
        directory = top
        for name in parts[:-1]:
            directory = _child_dir(directory, name)
        node = SharedFile(data)
        node.links = 1
        directory.children[parts[-1]] = node
    return top


def preload(store: ArtifactStore, mounts: Sequence[Mount], runtime: str) -> None:
    """Read and verify the mounts' content now (so the first run does not pay for it)."""
    for mount in mounts:
        _load(store, mount, runtime)
