"""Snapshots of a started interpreter: captured once, mapped into a fresh instance for every one-shot run.

Our own snapshotter (Wizer refuses modules that use the exceptions
proposal). A pack describes its snapshot as data (``WasmSnapshot``); this
module does the rest:

1. **Code module.** From the pinned runtime: the same code, table,
   elements and memory declaration, no data segments and no custom sections,
   exporting the stack pointer (the module's one mutable global) and the
   pack's entry function (checked: its type is (i32, i32) -> i32 and it
   refers to the pack's marker string). It depends only on the artifact and
   ``CODE_VERSION``, so it is compiled once per machine, through the module
   cache, and serves the capture and every run.
2. **Capture.** The code module runs ``_start`` with the pack's
   ``capture_args`` through our own WASI, with the same descriptors,
   preopens and environment as a run, over a memory mapped from the
   runtime's own data segments. The guest's ``clock_res_get`` on the
   realtime clock is the snapshot point (``RunState.snapshot_point``):
   the host stops the guest there and copies its linear memory and stack
   pointer. Every live frame is above that stack pointer, so it is in the
   image; a run calls the entry as a nested call inside that never resumed
   call.
3. **Storage.** ``<cache>/snapshots/<key>.snap`` (directory 0700, file 0600,
   written atomically): a header with the SHA-256 of the rest, the capture's
   metadata (JSON) and the memory. ``key`` = sha256(artifact SHA-256, the
   snapshot description (capture arguments, run source, preload, entry),
   ``RECIPE_VERSION``, the engine description with the wasmtime version).
   A file is verified before its first use in the process; a corrupt or
   unreadable one is deleted and captured again. Loading marks it used; a
   capture deletes files unused for 30 days (other versions). The verified memory is
   kept in a sealed memfd (``memlimit.MemoryImage``) for the process's life.
4. **Runs** (``runner.ImageStart``): a fresh Store and instance of the code
   module; the memory creator maps the image copy-on-write over the memory
   and the runner grows it to the image's size, charged to the run's memory
   budget; the run's source (``WasmSnapshot.run_source`` with its argv and
   environment) is written below the captured stack pointer and the entry
   called. The guest's monotonic clock goes on from the capture's (its epoch
   is arbitrary): the C library took its start-up reading then, and
   ``times()``, behind ``time.process_time``, counts from it. Nothing of
   one run reaches another: each has its own instance, memory pages,
   descriptors and VFS.

A run uses the snapshot when the pack has one, the run is one-shot, its
environment needs no cold start (``WasmSnapshot.needs_cold_start``), it
has no caller root tree, and its source fits (``MAX_PAYLOAD``). Otherwise,
or when a capture fails (logged once per process), it starts cold as
before. A capture takes about 0.4 s once the code module is compiled; it
is done by ``playground setup`` (``WasmBackend.provision``) or by the
first run that needs it (with a progress line).

Thread-safe: one lock per key; a built snapshot is shared by every run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import wasmtime

from backends.wasm import runner, wasmbin
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.engine import WasmEngine
from backends.wasm.memlimit import MemoryImage
from backends.wasm.modcache import ModuleCache
from backends.wasm.state import RunControl
from playground.core.attempts import AttemptLog
from playground.core.backend import ProgressCallback
from playground.core.limits import DEFAULT_LIMITS
from playground.core.output import OutputCapture
from playground.core.pack import Pack, WasmSnapshot, WasmSpec
from playground.core.vfs import VFS

log = logging.getLogger(__name__)

#: Bump when the capture or the snapshot file changes in a way the key does not see.
RECIPE_VERSION: Final = 3
#: Bump when ``code_module`` changes (the code module is compiled once per machine under a name that has it).
CODE_VERSION: Final = 1
#: The exports the code module adds.
ENTRY_EXPORT: Final = "__playground_snapshot_entry"
STACK_EXPORT: Final = "__playground_stack_pointer"
#: A run's source goes on the guest's stack; a larger one (huge arguments) starts cold.
MAX_PAYLOAD: Final = 64 << 10
_MAGIC: Final = b"SPSNAP01"
_HEADER: Final = struct.Struct("<8s32sI")  # magic, sha256 of the rest, metadata length
_PAGE: Final = 65536
#: A snapshot file not used for this long (an older runtime or product version) is deleted at the next capture.
STALE_AFTER: Final = 30 * 86400
#: A capture may take this long (CPython starts and imports the preload in about 0.2 s).
_CAPTURE_WALL: Final = 60.0


class SnapshotError(Exception):
    """The snapshot cannot be built for this runtime (the run starts cold)."""


@dataclass(frozen=True, slots=True)
class Image:
    """A verified snapshot, ready for runs."""

    memory: MemoryImage
    stack_pointer: int
    #: The code module's declared memory minimum in bytes.
    minimum: int
    #: The host's monotonic clock at the capture (ns): each run's guest clock goes on from it, so the C
    #: library's start-up reading (``times()``, behind ``time.process_time``) stays near it.
    monotonic: int
    key: str

    def start(self, label: str, payload: bytes) -> runner.ImageStart:
        return runner.ImageStart(
            image=self.memory, label=label, minimum=self.minimum, stack_pointer=self.stack_pointer,
            monotonic=self.monotonic, payload=payload, entry=ENTRY_EXPORT, stack_export=STACK_EXPORT,
        )  # fmt: skip


def payload(snap: WasmSnapshot, argv: list[str], env: dict[str, str]) -> bytes:
    """The run's source for the entry: NUL-terminated UTF-8 (``{argv}`` and ``{env}`` as JSON)."""
    source = snap.run_source.replace("{argv}", json.dumps(argv)).replace("{env}", json.dumps(env))
    return source.encode("utf-8", "surrogatepass") + b"\0"


def code_module(wasm: bytes, snap: WasmSnapshot) -> tuple[bytes, int]:
    """The code module of ``wasm`` (see the module docstring) and its initial stack pointer.

    Raises:
        SnapshotError: the entry function does not look like the pinned one, or the module has a shape
            the snapshotter does not handle (passive data, more than one mutable global).
    """
    try:
        parts = wasmbin.sections(wasm)
        params, results = wasmbin.function_type(parts, snap.entry_function)
        if (params, results) != (b"\x7f\x7f", b"\x7f"):
            raise SnapshotError(f"function {snap.entry_function} is not (i32, i32) -> i32")
        if not wasmbin.references_string(parts, snap.entry_function, snap.entry_marker.encode()):
            raise SnapshotError(f"function {snap.entry_function} does not refer to {snap.entry_marker!r}")
        by_id = dict(parts)
        globs = wasmbin.read_globals(by_id[wasmbin.GLOBAL])
        mutable = [i for i, g in enumerate(globs) if g.mutable]
        if len(mutable) != 1 or globs[mutable[0]].valtype != wasmbin.I32:
            raise SnapshotError("the runtime must have exactly one mutable global (its stack pointer)")
        stack_global = mutable[0] + wasmbin.import_counts(by_id.get(wasmbin.IMPORT, b"\0"))[3]
        stack_pointer = wasmbin.const_value(globs[mutable[0]])
        wasmbin.read_data(by_id.get(wasmbin.DATA, b"\0"))  # only active segments (checked)
        wasmbin.read_memory(by_id[wasmbin.MEMORY])
        out: list[tuple[int, bytes]] = []
        for sid, body in parts:
            if sid in (0, wasmbin.START):
                continue
            if sid == wasmbin.EXPORT:
                exports = wasmbin.read_exports(body)
                if any(e.name in (ENTRY_EXPORT, STACK_EXPORT) for e in exports):
                    raise SnapshotError("the runtime already exports the snapshot's names")
                exports += [
                    wasmbin.Export(ENTRY_EXPORT, wasmbin.KIND_FUNC, snap.entry_function),
                    wasmbin.Export(STACK_EXPORT, wasmbin.KIND_GLOBAL, stack_global),
                ]
                out.append((sid, wasmbin.write_exports(exports)))
            elif sid in (wasmbin.DATA, wasmbin.DATA_COUNT):
                out.append((sid, wasmbin.enc_uleb(0)))
            else:
                out.append((sid, body))
        return wasmbin.build(out), stack_pointer
    except (wasmbin.WasmFormatError, KeyError, IndexError) as exc:
        raise SnapshotError(f"cannot read the runtime: {exc or type(exc).__name__}") from None


def initial_memory(wasm: bytes) -> bytes:
    """The runtime's memory as instantiation leaves it: its minimum, with the data segments in place."""
    by_id = dict(wasmbin.sections(wasm))
    minimum, _ = wasmbin.read_memory(by_id[wasmbin.MEMORY])
    memory = bytearray(minimum * _PAGE)
    for offset, blob in wasmbin.read_data(by_id.get(wasmbin.DATA, b"\0")):
        if offset + len(blob) > len(memory):
            raise SnapshotError("a data segment lies past the memory's minimum")
        memory[offset : offset + len(blob)] = blob
    return bytes(memory)


class Snapshots:
    """The snapshots of one backend's cache. Thread-safe."""

    def __init__(self, root: Path, artifacts: ArtifactStore, engine: Callable[[], tuple[WasmEngine, ModuleCache]]):
        self._dir = root / "snapshots"
        self._artifacts = artifacts
        self._machinery = engine
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._images: dict[str, Image] = {}
        self._failed: dict[str, str] = {}
        #: id(spec) -> (spec, key): the spec is held, so its id cannot be reused while cached.
        self._keys: dict[int, tuple[WasmSpec, str]] = {}

    @property
    def directory(self) -> Path:
        return self._dir

    # -- naming ----------------------------------------------------------------------------

    def key(self, spec: WasmSpec) -> str:
        cached = self._keys.get(id(spec))  # asked at every run; hashing Python's capture script took ~0.1 ms
        if cached is not None and cached[0] is spec:
            return cached[1]
        key = self._key(spec)
        if len(self._keys) >= 64:  # specs are pack data (a handful); never let made-up ones pile up
            self._keys.clear()
        self._keys[id(spec)] = (spec, key)
        return key

    def _key(self, spec: WasmSpec) -> str:
        snap = spec.snapshot
        assert snap is not None
        engine, _ = self._machinery()
        parts = [
            f"recipe={RECIPE_VERSION}", f"artifact={snap.artifact_sha256}", f"entry={snap.entry_function}",
            f"marker={snap.entry_marker}", f"engine={engine.description}", json.dumps(list(snap.capture_args)),
            json.dumps(snap.run_source), json.dumps(list(snap.preload)), json.dumps(dict(spec.env)),
        ]  # fmt: skip
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def path(self, spec: WasmSpec) -> Path:
        return self._dir / f"{self.key(spec)}.snap"

    def _code_name(self, snap: WasmSnapshot) -> str:
        text = f"snapshot-code\n{CODE_VERSION}\n{snap.artifact_sha256}\n{snap.entry_function}\n{snap.entry_marker}"
        return hashlib.sha256(text.encode()).hexdigest()

    # -- state -----------------------------------------------------------------------------

    def ready(self, spec: WasmSpec) -> bool:
        """Whether runs of ``spec`` can use a snapshot without building one first. Cheap: stats."""
        snap = spec.snapshot
        if snap is None:
            return False
        key = self.key(spec)
        with self._lock:
            if key in self._images:
                return True
        _, modules = self._machinery()
        return (self._dir / f"{key}.snap").is_file() and modules.has(self._code_name(snap))

    def failure(self, spec: WasmSpec) -> str | None:
        """Why the snapshot of ``spec`` could not be built in this process (None: it was not tried or it was)."""
        with self._lock:
            return self._failed.get(self.key(spec))

    def image(self, pack: Pack, progress: ProgressCallback | None) -> tuple[wasmtime.Module, Image] | None:
        """The code module and verified image for ``pack``'s runs, captured first when needed.

        None when the pack has no snapshot or it cannot be built here (the
        reason is logged once and kept: ``failure``); the run then starts cold.
        """
        spec = pack.wasm
        if spec is None or spec.snapshot is None or spec.module is None:
            return None
        key = self.key(spec)
        with self._lock:
            if key in self._failed:
                return None
            image = self._images.get(key)
            lock = self._key_locks.setdefault(key, threading.Lock())
        try:
            module = self._code_module(spec, progress)
            if image is not None:
                return module, image
            with lock:
                with self._lock:
                    image = self._images.get(key)
                if image is None:
                    image = self._load(key)
                    if image is None:
                        image = self._capture(pack, module, key, progress)
                    with self._lock:
                        self._images[key] = image
            return module, image
        except (SnapshotError, wasmtime.WasmtimeError, OSError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("%s starts cold: no snapshot (%s)", pack.name, reason)
            with self._lock:
                self._failed[key] = reason
            return None

    def _code_module(self, spec: WasmSpec, progress: ProgressCallback | None) -> wasmtime.Module:
        snap = spec.snapshot
        assert snap is not None and spec.module is not None
        path = self._artifacts.verified_path(spec.module, spec.module.name)
        _, modules = self._machinery()
        return modules.derived(
            self._code_name(snap), lambda: code_module(path.read_bytes(), snap)[0], path,
            label=f"{spec.module.name} (snapshot code)", progress=progress,
        )  # fmt: skip

    # -- the file --------------------------------------------------------------------------

    def _load(self, key: str) -> Image | None:
        path = self._dir / f"{key}.snap"
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            magic, digest, meta_len = _HEADER.unpack_from(blob)
            rest = memoryview(blob)[_HEADER.size :]
            if magic != _MAGIC or hashlib.sha256(rest).digest() != digest:
                raise ValueError("checksum mismatch")
            meta = json.loads(bytes(rest[:meta_len]))
            memory = rest[meta_len:]
            if meta.get("key") != key or len(memory) != meta["pages"] * _PAGE:
                raise ValueError("metadata does not match")
            stack_pointer = int(meta["stack_pointer"])
            minimum = int(meta["memory_minimum"])
            monotonic = int(meta["monotonic_ns"])
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            log.warning("snapshot %s is corrupt (%s); capturing it again", path, exc)
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # last used now: ``_prune`` keeps it
        except OSError:
            pass
        return Image(MemoryImage(memory, name=f"snapshot-{key[:12]}"), stack_pointer, minimum, monotonic, key)

    def _store(self, key: str, memory: bytes, meta: dict[str, Any]) -> None:
        meta_bytes = json.dumps(meta, sort_keys=True).encode()
        digest = hashlib.sha256()
        digest.update(meta_bytes)
        digest.update(memory)
        try:
            self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self._dir, 0o700)
            fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".tmp-", suffix=".snap")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(_HEADER.pack(_MAGIC, digest.digest(), len(meta_bytes)))
                    handle.write(meta_bytes)
                    handle.write(memory)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.chmod(tmp, 0o600)
                os.replace(tmp, self._dir / f"{key}.snap")
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:  # the snapshot still serves this process
            log.warning("cannot write snapshot %s: %s", key, exc)
        self._prune(keep=key)

    def _prune(self, *, keep: str) -> None:
        """Delete snapshots not used for ``STALE_AFTER`` seconds (other versions of the runtime or the product)."""
        cutoff = time.time() - STALE_AFTER
        try:
            for path in self._dir.glob("*.snap"):
                if path.stem != keep and path.stat().st_mtime < cutoff:
                    path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cannot prune old snapshots: %s", exc)

    # -- capture ---------------------------------------------------------------------------

    def _capture(self, pack: Pack, module: wasmtime.Module, key: str, progress: ProgressCallback | None) -> Image:
        spec = pack.wasm
        assert spec is not None and spec.snapshot is not None and spec.module is not None
        if progress is not None:
            try:
                progress(f"preparing the {pack.name} snapshot (once)", -1.0)
            except Exception:
                log.exception("progress callback failed")
        wasm = self._artifacts.verified_path(spec.module, pack.name).read_bytes()
        _, initial_sp = code_module(wasm, spec.snapshot)
        initial = initial_memory(wasm)
        start = MemoryImage(initial, name=f"snapshot-start-{pack.name}")
        got: dict[str, Any] = {}

        def take(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
            exports = instance.exports(store)
            memory, stack = exports.get("memory"), exports.get(STACK_EXPORT)
            assert isinstance(memory, wasmtime.Memory) and isinstance(stack, wasmtime.Global)
            size = memory.data_len(store)
            got["memory"] = bytes(memory.read(store, 0, size))
            got["stack_pointer"] = int(stack.value(store))
            got["monotonic"] = time.monotonic_ns()

        output = OutputCapture(1 << 20)
        control = RunControl(wall_limit=_CAPTURE_WALL, cpu_limit=_CAPTURE_WALL)
        engine, _ = self._machinery()
        try:
            launch = runner.Launch(
                module=module, argv=[pack.name, *spec.snapshot.capture_args], env=dict(spec.env), stdin=b"",
                vfs=VFS.for_limits(DEFAULT_LIMITS.validate()), output=output, memory_limit=None,
                wall_limit=_CAPTURE_WALL, cpu_limit=_CAPTURE_WALL, attempts=AttemptLog(), quiet_paths=spec.quiet_paths,
                image=runner.ImageStart(image=start, label=f"the {pack.name} runtime", minimum=len(initial)),
                capture=take,
            )  # fmt: skip
            outcome = runner.run(engine, launch, control)
        except Exception as exc:
            raise SnapshotError(f"the capture failed: {exc}") from None
        finally:
            start.close()
        if "memory" not in got:
            text = (output.stderr() or output.stdout()).decode("utf-8", "replace").strip()
            raise SnapshotError(
                f"the capture ended (exit {outcome.exit_code}) before its snapshot point: {text[-300:] or 'no output'}"
            )
        memory: bytes = got["memory"]
        stack_pointer: int = got["stack_pointer"]
        if not 0 < stack_pointer <= initial_sp:
            raise SnapshotError(f"implausible stack pointer {stack_pointer:#x}")
        meta = {
            "key": key, "pack": pack.name, "artifact": spec.snapshot.artifact_sha256, "pages": len(memory) // _PAGE,
            "stack_pointer": stack_pointer, "memory_minimum": len(initial), "monotonic_ns": got["monotonic"],
            "recipe": RECIPE_VERSION,
            "engine": engine.description,
        }  # fmt: skip
        self._store(key, memory, meta)
        log.info("captured the %s snapshot: %d pages", pack.name, len(memory) // _PAGE)
        return Image(
            MemoryImage(memory, name=f"snapshot-{key[:12]}"), stack_pointer, len(initial), got["monotonic"], key
        )
