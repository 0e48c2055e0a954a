"""Compiled-module cache: on disk for runtimes, in memory for user modules.

Runtime modules (a pack's artifact) are compiled once per machine and
stored as ``<cache>/modules/<key>.cwasm``, where ``key`` is
sha256(artifact sha256 + the engine description, which includes the
wasmtime version and config). Directory mode 0700, file mode 0600, written
atomically (temp file + ``os.replace``). The file is wasmtime's own
serialization, so it is mapped, not read (``Module.deserialize_file``):
loading the 240 MB scientific CPython took 1.0 s and 236 MB of private
memory in every process, now the hash check (0.25 s) and pages shared
through the page cache by the process and its workers. Beside it,
``<key>.cwasm.sha256`` holds the SHA-256 of its content; an entry that
fails that check or that wasmtime refuses to deserialize (corrupt,
truncated, foreign) is deleted and rebuilt, never trusted. An entry in the
earlier format (a ``SPCWASM1`` header with the hash, then the payload) is
checked the same way and rewritten in this one. Loaded modules also stay
in an in-process dict, so later runs cost nothing.

User modules (the ``wasm`` pack) are compiled per content hash and kept
only in a bounded in-memory LRU; they never touch the disk.

Every module handed out has its ``shape`` recorded (its tables and memory
count, read from the wasm bytes), which the runner charges to the run's
memory budget before instantiating (``tablelimit``).

Thread-safe: one lock per key ensures a module is compiled once even when
many runs ask for it at the same time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Final

import wasmtime

from backends.wasm import shape
from backends.wasm.engine import WasmEngine
from playground.core.backend import ProgressCallback
from playground.core.errors import InvalidSpec

log = logging.getLogger(__name__)

_MAGIC: Final = b"SPCWASM1"
_HEADER: Final = len(_MAGIC) + 32
#: User modules kept compiled in memory.
USER_MODULE_CAPACITY: Final = 16


def _report(progress: ProgressCallback | None, message: str, fraction: float) -> None:
    if progress is None:
        return
    try:
        progress(message, fraction)
    except Exception:
        log.exception("progress callback failed")


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _write_atomically(directory: Path, path: Path, data: bytes | bytearray | memoryview) -> None:
    """``data`` at ``path`` (mode 0600) by a synced temp file renamed over it: never half written."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class ModuleCache:
    """Compiled modules for one engine. Thread-safe."""

    def __init__(self, engine: WasmEngine, directory: Path) -> None:
        self._engine = engine
        self._dir = directory
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._loaded: dict[str, wasmtime.Module] = {}
        self._user: OrderedDict[str, wasmtime.Module] = OrderedDict()

    @property
    def directory(self) -> Path:
        return self._dir

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def key(self, sha256: str) -> str:
        return hashlib.sha256(f"{sha256}\n{self._engine.description}".encode()).hexdigest()

    def entry_path(self, sha256: str) -> Path:
        return self._dir / f"{self.key(sha256)}.cwasm"

    # -- runtimes ------------------------------------------------------------------------

    def has(self, sha256: str) -> bool:
        """Whether the runtime with this artifact hash is compiled (loaded here, or on disk). Cheap: a stat."""
        key = self.key(sha256)
        with self._lock:
            if key in self._loaded:
                return True
        return (self._dir / f"{key}.cwasm").is_file()

    def runtime(self, sha256: str, source: Path, *, label: str, progress: ProgressCallback | None) -> wasmtime.Module:
        """The compiled module for a verified artifact file.

        Raises:
            wasmtime.WasmtimeError: the artifact is not a valid module for this engine.
        """
        return self.derived(sha256, source.read_bytes, source, label=label, progress=progress)

    def derived(
        self,
        name: str,
        build: Callable[[], bytes],
        shape_source: Path,
        *,
        label: str,
        progress: ProgressCallback | None,
    ) -> wasmtime.Module:
        """The compiled module named ``name`` (a hash of everything it is made from), built by ``build``.

        ``build`` runs only when the module is compiled (not on disk yet);
        ``shape_source`` is a module file with the same tables and memories
        (the runtime it was derived from), read for ``shape``.

        Raises:
            wasmtime.WasmtimeError: the bytes are not a valid module for this engine.
        """
        key = self.key(name)
        with self._key_lock(key):
            module = self._loaded.get(key)
            if module is not None:
                return module
            path = self._dir / f"{key}.cwasm"
            module = self._load(path)
            if module is None:
                _report(progress, f"compiling {label} (first run only)", -1.0)
                module = wasmtime.Module(self._engine.engine, build())
                self._store(path, module)
                _report(progress, f"compiled {label}", 1.0)
            _remember_shape(module, lambda: shape.read(shape_source), label)
            self._loaded[key] = module
            return module

    def _load(self, path: Path) -> wasmtime.Module | None:
        """The module stored at ``path`` if its content matches its recorded hash, else None (and it is gone)."""
        digest_path = _digest_path(path)
        expected: str | None
        try:
            expected = digest_path.read_text().strip()
        except FileNotFoundError:
            expected = self._migrate(path)
            if expected is None:
                return None
        except OSError as exc:
            log.warning("cannot read module cache entry %s: %s", digest_path, exc)
            return None
        try:
            actual = _file_sha256(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cannot read module cache entry %s: %s", path, exc)
            return None
        if actual != expected:
            log.warning("module cache entry %s is corrupt; rebuilding", path)
            self._discard_entry(path)
            return None
        try:
            return wasmtime.Module.deserialize_file(self._engine.engine, str(path))
        except Exception as exc:
            log.warning("module cache entry %s was refused (%s); rebuilding", path, exc)
            self._discard_entry(path)
            return None

    def _migrate(self, path: Path) -> str | None:
        """An entry of the earlier format at ``path``, checked and rewritten as it is stored now: its hash.

        None: there is no entry, or it is not a sound one (then it is gone).
        """
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cannot read module cache entry %s: %s", path, exc)
            return None
        payload = memoryview(blob)[_HEADER:]
        digest = hashlib.sha256(payload)
        if blob[: len(_MAGIC)] != _MAGIC or digest.digest() != blob[len(_MAGIC) : _HEADER]:
            log.warning("module cache entry %s is corrupt; rebuilding", path)
            self._discard_entry(path)
            return None
        try:
            self._write(path, payload, digest.hexdigest())
        except OSError as exc:
            log.warning("cannot rewrite module cache entry %s: %s", path, exc)
            return None
        return digest.hexdigest()

    def _store(self, path: Path, module: wasmtime.Module) -> None:
        try:
            payload = module.serialize()
            self._write(path, payload, hashlib.sha256(payload).hexdigest())
        except OSError as exc:
            log.warning("cannot write module cache entry %s: %s", path, exc)

    def _write(self, path: Path, payload: bytes | bytearray | memoryview, sha256: str) -> None:
        """Write ``payload`` at ``path``, then its hash ``sha256`` beside it, each atomically (the hash last)."""
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self._dir, 0o700)
        _write_atomically(self._dir, path, payload)
        _write_atomically(self._dir, _digest_path(path), sha256.encode())

    def _discard_entry(self, path: Path) -> None:
        self._discard(path)
        self._discard(_digest_path(path))

    @staticmethod
    def _discard(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass

    # -- user modules ----------------------------------------------------------------------

    def user(self, wasm: bytes) -> wasmtime.Module:
        """Compile (or reuse) a user-supplied module; kept in memory only.

        Raises:
            InvalidSpec: the bytes are not a valid module for this engine.
        """
        key = hashlib.sha256(wasm).hexdigest()
        with self._key_lock("user:" + key):
            with self._lock:
                module = self._user.get(key)
                if module is not None:
                    self._user.move_to_end(key)
                    return module
            try:
                module = wasmtime.Module(self._engine.engine, wasm)
            except wasmtime.WasmtimeError as exc:
                raise InvalidSpec(f"not a valid WebAssembly module: {str(exc).splitlines()[0]}") from None
            _remember_shape(module, lambda: shape.parse(wasm), "a user module")
            with self._lock:
                self._user[key] = module
                while len(self._user) > USER_MODULE_CAPACITY:
                    self._user.popitem(last=False)
        with self._lock:
            self._key_locks.pop("user:" + key, None)
        return module


def _remember_shape(module: wasmtime.Module, read: Callable[[], shape.ModuleShape], label: str) -> None:
    """Record the module's shape; if it cannot be read, the run's tables get conservative limits."""
    try:
        shape.remember(module, read())
    except (shape.ShapeError, OSError) as exc:
        log.warning("cannot read the tables of %s (%s); using conservative table limits", label, exc)
