"""A run's added Python packages in its container: one more tmpfs, filled from the input archive.

The core shows a run's packages (``Spec.packages``) as a read-only tree
at ``GUEST_SITE`` in the run's VFS and puts that directory on the guest's
``PYTHONPATH`` (``core.package_tree``). Here the same tree reaches the
container the way every input does, without a bind mount or a network:

* ``for_run`` finds the tree in the VFS; ``members`` turns it into tar
  members (no end-of-archive blocks) that go in front of the run's input
  archive, so the wrapper's one ``tar -x`` (run as the guest) unpacks them
  with everything else. Files are 0444 and every directory is listed a
  second time after them, 0555, so the tree is read-only by permission,
  as ``/in`` is; the guest owns it, as it owns ``/in``, and the container
  and everything in it are gone after the run.
* ``with_mount`` adds a tmpfs at ``GUEST_SITE`` sized to the tree (its
  pages and inodes), ``noexec``, outside the four mounts the filesystem
  quota covers: the packages are the run's runtime, not the program's
  files. Their tmpfs pages count against the container's memory cgroup,
  so the memory limit grows by exactly that much and the program keeps
  the memory it was given.
* The container still runs with ``network_mode=none``: the host fetched
  and checked the wheels before the run (``core.packages``).
"""

from __future__ import annotations

import io
import tarfile
import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

from playground.core.package_tree import GUEST_SITE
from playground.core.vfs import VFS, Dir

#: tmpfs pages are this big; a file takes whole pages.
PAGE: Final = 4096
#: Room above the tree's own pages and inodes (tar's bookkeeping, rounding).
SLACK_BYTES: Final = 1 << 20
SLACK_INODES: Final = 64
_GUEST_ID: Final = 65534


@dataclass(frozen=True, slots=True)
class RunPackages:
    """The tree to ship: its files (path under ``GUEST_SITE``, bytes) and what it takes in a tmpfs."""

    files: tuple[tuple[str, bytes], ...]
    dirs: tuple[str, ...]

    @property
    def pages(self) -> int:
        return sum(-(-len(data) // PAGE) * PAGE for _, data in self.files) + SLACK_BYTES

    @property
    def inodes(self) -> int:
        return len(self.files) + len(self.dirs) + SLACK_INODES


def for_run(vfs: VFS) -> RunPackages | None:
    """The packages tree the core placed in ``vfs``, or None when the run has none."""
    node: Dir | None = vfs.root
    for name in PurePosixPath(GUEST_SITE).parts[1:]:
        child = node.children.get(name) if node is not None else None
        node = child if isinstance(child, Dir) else None
    if node is None or not node.children:
        return None
    files = tuple((path, f.data) for path, f in vfs.iter_files(node))
    dirs = sorted({str(PurePosixPath(path).parent) for path, _ in files} - {"."})
    every = sorted({str(p) for d in dirs for p in (PurePosixPath(d), *PurePosixPath(d).parents)} - {"."})
    return RunPackages(files, tuple(every))


def members(packages: RunPackages) -> bytes:
    """Tar members (PAX headers, no end-of-archive) of the tree under ``GUEST_SITE``, read-only by mode."""
    top = GUEST_SITE.lstrip("/")
    now = int(time.time())
    out = io.BytesIO()

    def add(name: str, data: bytes | None, mode: int) -> None:
        info = tarfile.TarInfo(name)
        info.mtime, info.mode, info.uid, info.gid = now, mode, _GUEST_ID, _GUEST_ID
        if data is None:
            info.type = tarfile.DIRTYPE
        else:
            info.size = len(data)
        out.write(info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
        if data:
            out.write(data)
            out.write(bytes(-len(data) % tarfile.BLOCKSIZE))

    for directory in packages.dirs:
        add(f"{top}/{directory}", None, 0o755)
    for path, data in packages.files:
        add(f"{top}/{path}", data, 0o444)
    # Then each directory again, read-only, deepest first and the mount's own last: a directory made
    # read-only before its members are in would refuse them (tar applies the mode of an existing one at once).
    for directory in sorted(packages.dirs, key=lambda d: -d.count("/")):
        add(f"{top}/{directory}", None, 0o555)
    add(top, None, 0o555)
    return out.getvalue()


def with_mount(profile: dict[str, object], packages: RunPackages) -> dict[str, object]:
    """A copy of a run's create-kwargs with the packages' tmpfs, and the memory limit raised by its pages."""
    host = profile["host_config"]
    assert isinstance(host, dict)
    tmpfs = dict(host["tmpfs"])
    like = [o for o in str(tmpfs["/in"]).split(",") if not o.startswith(("size=", "nr_inodes="))]
    options = [*like, f"size={packages.pages}"]
    if any(o.startswith("nr_inodes=") for o in str(tmpfs["/in"]).split(",")):
        options.append(f"nr_inodes={packages.inodes}")
    tmpfs[GUEST_SITE] = ",".join(options)
    host = {**host, "tmpfs": tmpfs}
    for key in ("mem_limit", "memswap_limit"):
        if isinstance(host.get(key), int):
            host[key] = int(host[key]) + packages.pages
    return {**profile, "host_config": host}
