"""Pure-Python packages from PyPI added to a run (``Spec.packages``): resolved, fetched and checked on the host.

What happens, and where:

1. ``PackageStore.ensure`` runs before the guest does: in
   ``Sandbox.prepare`` (the CLI, the MCP server and the GUI call it before
   a run, with progress) and again in ``Sandbox.run`` before the backend
   starts, where it is a cache hit. A download is therefore never charged
   to a program's time limit.
2. The closure is resolved by pip in a subprocess (``package_pip``): wheels
   only, never a source distribution, so no package code runs on the host;
   ABI ``none`` and platform ``any`` only, so no native code reaches the
   guest; for the guest's Python version. The result is cached for
   ``RESOLUTION_TTL`` (then resolved again; if the index cannot be reached,
   the cached one is used), so a repeated run needs no network.
3. Each wheel is kept at ``<cache>/wheels/<sha256>/<file>.whl``
   (directories 0700, files 0600), pinned by the SHA-256 the index
   reported (pip checks it when downloading, and we check it again). On
   every use the file is checked: its bytes are hashed when first read in
   a process and again whenever its size or modification time changed; a
   file that does not match is deleted and fetched again.
4. The guest gets the unpacked wheels as a read-only tree on ``sys.path``
   (``package_tree``); the guest itself never has network.

A package that cannot be added (it needs native code, has no wheel, or
conflicts) is refused with ``PackageRefused`` (an ``Unsupported``) whose
message names it and says whether another runtime of the language has it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from playground.core import package_pip, package_tree
from playground.core.errors import BackendUnavailable, Unsupported
from playground.core.package_tree import GUEST_SITE, TreeFile

__all__ = [
    "GUEST_SITE", "PackageRefused", "PackageRequest", "PackageSet", "PackageStore", "Wheel", "default_cache_root",
]  # fmt: skip

log = logging.getLogger(__name__)

#: How long a resolution is reused before pip is asked again (a newer release of an unpinned package).
RESOLUTION_TTL: Final = 24 * 3600.0
#: The most wheels one run's closure may have.
MAX_WHEELS: Final = 100
#: Unpacked wheels kept in memory per store, in bytes (least recently used go first).
TREE_CACHE_BYTES: Final = 1 << 30
_SHA = re.compile(r"^[0-9a-f]{64}$")
_WHEEL_FILE = re.compile(r"^[A-Za-z0-9_.+!-]+\.whl$")

Progress = Callable[[str], None]
#: Where a refused package can be had instead (a sentence, or "").
Where = Callable[[str], str]


def default_cache_root() -> Path:
    """The sandbox's cache directory, as the Wasm tier's (``$PLAYGROUND_CACHE_DIR``, XDG, ``~/.cache``)."""
    explicit = os.environ.get("PLAYGROUND_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "sandbox-playground"


class PackageRefused(Unsupported):
    """A requested package (or one it needs) cannot be added to a run; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Wheel:
    """One wheel of a run's packages, pinned by the SHA-256 the index reported."""

    name: str
    version: str
    filename: str
    sha256: str

    def __post_init__(self) -> None:
        if not _SHA.match(self.sha256) or not _WHEEL_FILE.match(self.filename):
            raise ValueError(f"bad wheel entry {self.filename!r} {self.sha256!r}")


@dataclass(frozen=True, slots=True)
class PackageRequest:
    """What to resolve: requirements (checked, see ``requirements``), the guest's Python, what it already has."""

    requirements: tuple[str, ...]
    python_version: str
    #: Distributions the runtime has (normalised name, version): dependencies on them are not fetched.
    provided: tuple[tuple[str, str], ...] = ()

    def key(self) -> str:
        text = json.dumps([sorted(self.requirements), self.python_version, sorted(self.provided)])
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class PackageSet:
    """A run's packages: the wheels, and the tree they unpack to (paths under ``GUEST_SITE``)."""

    wheels: tuple[Wheel, ...]
    files: tuple[TreeFile, ...] = field(repr=False)

    @property
    def size(self) -> int:
        """Bytes of all unpacked files."""
        return sum(len(data) for _, data in self.files)

    def describe(self) -> str:
        return ", ".join(f"{w.name} {w.version}" for w in self.wheels)


class PackageStore:
    """Resolves, fetches, verifies and unpacks a run's wheels under one cache directory. Thread-safe.

    ``python`` is the interpreter whose pip is used (default: this one).
    """

    def __init__(self, root: Path | None = None, *, python: str | None = None, ttl: float = RESOLUTION_TTL) -> None:
        self.root = root if root is not None else default_cache_root()
        self._python = python or sys.executable
        self._ttl = ttl
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._stamps: dict[str, tuple[int, int]] = {}
        self._trees: OrderedDict[str, tuple[TreeFile, ...]] = OrderedDict()

    @property
    def wheels_dir(self) -> Path:
        return self.root / "wheels"

    def wheel_path(self, wheel: Wheel) -> Path:
        """Where ``wheel`` is kept: ``<cache>/wheels/<sha256>/<file>``."""
        return self.wheels_dir / wheel.sha256 / wheel.filename

    def ready(self, request: PackageRequest) -> bool:
        """Whether ``ensure`` would need no network: a fresh resolution with every wheel on disk. Cheap."""
        wheels = self._load_resolution(request, fresh_only=True)
        return wheels is not None and all(self.wheel_path(w).is_file() for w in wheels)

    def ensure(
        self, request: PackageRequest, progress: Progress | None = None, *, elsewhere: Where | None = None
    ) -> PackageSet:
        """The run's packages, resolved and fetched if needed (blocks; network on a cache miss).

        ``elsewhere(name)`` says where a refused package can be had
        instead (e.g. "Python's scientific runtime has it ..."), or "".

        Raises:
            PackageRefused: a package needs native code, has no wheel, or conflicts.
            BackendUnavailable: pip or the index failed, or a download did not match its hash.
            InvalidSpec: a wheel is not a usable zip or unpacks too large.
        """
        say = progress or (lambda line: None)
        with self._key_lock(request.key()):
            wheels = self._load_resolution(request, fresh_only=True)
            if wheels is None:
                wheels = self._resolve(request, say, elsewhere or (lambda name: ""))
            trees = self._materialise(wheels, request, say)
        return PackageSet(wheels, package_tree.merge(trees))

    # -- resolution --------------------------------------------------------------------------

    def _resolution_path(self, request: PackageRequest) -> Path:
        return self.wheels_dir / "resolved" / f"{request.key()}.json"

    def _load_resolution(self, request: PackageRequest, *, fresh_only: bool) -> tuple[Wheel, ...] | None:
        path = self._resolution_path(request)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            created = float(data["created"])
            wheels = tuple(Wheel(w["name"], w["version"], w["filename"], w["sha256"]) for w in data["wheels"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("ignoring a damaged package resolution %s", path)
            return None
        if fresh_only and not 0 <= time.time() - created < self._ttl:
            return None
        return wheels

    def _resolve(self, request: PackageRequest, say: Progress, elsewhere: Where) -> tuple[Wheel, ...]:
        names = ", ".join(request.requirements)
        say(f"resolving {names} for Python {request.python_version} (pure-Python wheels from the package index)")
        with tempfile.TemporaryDirectory(prefix="playground-pip-") as scratch:
            try:
                found = package_pip.resolve(
                    request.requirements, python_version=request.python_version, provided=dict(request.provided),
                    work=Path(scratch), python=self._python,
                )  # fmt: skip
            except package_pip.PipError as exc:
                stale = self._load_resolution(request, fresh_only=False)
                if stale is not None and all(self.wheel_path(w).is_file() for w in stale):
                    say(f"could not check the package index ({exc}); using the packages resolved before")
                    return stale
                raise BackendUnavailable(f"cannot add the packages {names}: {exc}") from None
            if isinstance(found, package_pip.Unresolvable):
                raise PackageRefused(self._refusal(found, Path(scratch), elsewhere)) from None
        if len(found) > MAX_WHEELS:
            raise PackageRefused(f"{names} need {len(found)} packages; at most {MAX_WHEELS} can be added to a run")
        wheels = tuple(Wheel(p.name, p.version, p.filename, p.sha256) for p in found)
        self._save_resolution(request, wheels)
        return wheels

    def _save_resolution(self, request: PackageRequest, wheels: Sequence[Wheel]) -> None:
        data = {
            "created": time.time(), "requirements": list(request.requirements),
            "python_version": request.python_version,
            "wheels": [{"name": w.name, "version": w.version, "filename": w.filename, "sha256": w.sha256}
                       for w in wheels],
        }  # fmt: skip
        path = self._resolution_path(request)
        _private_dirs(path.parent)
        _write_private(path, json.dumps(data, indent=1).encode())

    def _refusal(self, found: package_pip.Unresolvable, scratch: Path, elsewhere: Where) -> str:
        parts = []
        for name, parent in sorted(found.missing.items()):
            needed = f" (needed by {parent})" if parent else ""
            if package_pip.has_platform_wheel(name, work=scratch, python=self._python):
                what = (f"{name}{needed} needs native code: the package index has only platform-specific wheels "
                        "of it, and only pure-Python wheels (py3-none-any) can be added to a run")
            else:
                what = (f"{name}{needed} has no usable wheel on the package index (it does not exist there, has no "
                        "matching version, or comes only as source, which the sandbox never builds)")
            other = elsewhere(name)
            parts.append(f"{what}; {other}" if other else what)
        return "; ".join(parts) or f"the packages cannot be resolved: {found.detail}"

    # -- the wheels on disk ----------------------------------------------------------------

    def _materialise(
        self, wheels: Sequence[Wheel], request: PackageRequest, say: Progress
    ) -> list[tuple[TreeFile, ...]]:
        """Each wheel's unpacked files, fetching the ones missing or damaged on disk."""
        data: dict[str, bytes] = {}
        fetch = []
        for wheel in wheels:
            if self._cached_tree(wheel) is None:
                found = self._read_verified(wheel)
                if found is None:
                    fetch.append(wheel)
                else:
                    data[wheel.sha256] = found
        if fetch:
            self._download(fetch, request, say)
            for wheel in fetch:
                found = self._read_verified(wheel)
                if found is None:
                    raise BackendUnavailable(f"{wheel.filename} does not match its SHA-256 {wheel.sha256} (downloaded)")
                data[wheel.sha256] = found
        trees = []
        for wheel in wheels:
            tree = self._cached_tree(wheel)
            if tree is None:
                tree = package_tree.unpack_wheel(wheel.filename, data[wheel.sha256])
                self._keep_tree(wheel.sha256, tree)
            trees.append(tree)
        return trees

    def _cached_tree(self, wheel: Wheel) -> tuple[TreeFile, ...] | None:
        """The unpacked files, if this store verified the wheel and its file has not changed since."""
        try:
            stat = self.wheel_path(wheel).stat()
        except OSError:
            stat = None
        with self._lock:
            tree = self._trees.get(wheel.sha256)
            if tree is None or stat is None or self._stamps.get(wheel.sha256) != (stat.st_size, stat.st_mtime_ns):
                return None
            self._trees.move_to_end(wheel.sha256)
            return tree

    def _read_verified(self, wheel: Wheel) -> bytes | None:
        """The wheel's bytes if its file matches its SHA-256; a file that does not is deleted (None)."""
        path = self.wheel_path(wheel)
        try:
            stat = path.stat()
            data = path.read_bytes()
        except OSError:
            return None
        actual = hashlib.sha256(data).hexdigest()
        if actual != wheel.sha256:
            log.warning("cached wheel %s is corrupt or was replaced (sha256 %s, expected %s): fetching it again",
                        path, actual, wheel.sha256)
            path.unlink(missing_ok=True)
            return None
        with self._lock:
            self._stamps[wheel.sha256] = (stat.st_size, stat.st_mtime_ns)
        return data

    def _keep_tree(self, sha256: str, tree: tuple[TreeFile, ...]) -> None:
        with self._lock:
            self._trees[sha256] = tree
            total = sum(len(d) for t in self._trees.values() for _, d in t)
            while total > TREE_CACHE_BYTES and len(self._trees) > 1:
                _, dropped = self._trees.popitem(last=False)
                total -= sum(len(d) for _, d in dropped)

    def _download(self, wheels: Sequence[Wheel], request: PackageRequest, say: Progress) -> None:
        say(f"downloading {', '.join(w.filename for w in wheels)}")
        _private_dirs(self.wheels_dir)
        with tempfile.TemporaryDirectory(prefix=".download-", dir=self.wheels_dir) as scratch:
            pins = [package_pip.Pin(w.name, w.version, w.filename, w.sha256, "", False) for w in wheels]
            try:
                package_pip.download(pins, python_version=request.python_version, dest=Path(scratch),
                                     python=self._python)
            except package_pip.PipError as exc:
                raise BackendUnavailable(f"cannot add the packages: {exc}") from None
            for wheel in wheels:
                fetched = Path(scratch) / wheel.filename
                if not fetched.is_file():
                    raise BackendUnavailable(f"pip did not download {wheel.filename}")
                if _sha256_file(fetched) != wheel.sha256:
                    raise BackendUnavailable(f"{wheel.filename} does not match its SHA-256 {wheel.sha256}")
                target = self.wheel_path(wheel)
                _private_dirs(target.parent)
                os.chmod(fetched, 0o600)
                os.replace(fetched, target)

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())


def _private_dirs(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` atomically (a temporary file, then ``os.replace``), mode 0600."""
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
