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

A pack may have a second snapshot for its REPL sessions
(``WasmSpec.session_snapshot``, with the driver script in its capture
arguments; ``session.image_source``): the same machinery, captured with
the session's ``/.session`` preopened (the C library reads its preopen
table once, at start), keyed by those preopens too. The first time a run
of an image starts while another run is in flight, two calibration runs
learn the pages every run writes (``warmpages``, ``Snapshots.warm_up``).

A runtime that exports its own way to run a source (``WasmSnapshot.entry_export``,
a reactor's ``turn``) keeps it: the code module adds only the stack pointer
export, the capture calls it with ``capture_source`` (placed by
``alloc_export``) and takes the memory when it returns, and a run calls it
with its source; passive data segments stay as empty ones. The pack's mounts
are placed in the capture's tree as in a run, in the run's preopen order.

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

import functools
import hashlib
import json
import logging
import os
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

import wasmtime

from backends.wasm import launch, mounts, runner, warmpages, wasmbin
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
from playground.core.spec import Spec
from playground.core.vfs import VFS, Dir

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
#: Calibration runs per image and process (``warmpages``): the pages all of them wrote are prefaulted.
CALIBRATION_RUNS: Final = 2
#: A capture may take this long (CPython starts and imports the preload in about 0.2 s).
_CAPTURE_WALL: Final = 60.0
#: A calibration run (``_learn_warm_pages``) may take this long (a Python one takes about 10 ms).
_CALIBRATION_WALL: Final = 5.0


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

    #: The runtime's own export that runs a source, and its allocator (``WasmSnapshot.entry_export``); "": ours.
    entry_export: str = ""
    alloc_export: str = ""

    def start(self, label: str, payload: bytes) -> runner.ImageStart:
        return runner.ImageStart(
            image=self.memory, label=label, minimum=self.minimum, stack_pointer=self.stack_pointer,
            monotonic=self.monotonic, payload=payload, entry=self.entry_export or ENTRY_EXPORT,
            stack_export=STACK_EXPORT, alloc=self.alloc_export,
        )  # fmt: skip


def payload(snap: WasmSnapshot, argv: list[str], env: dict[str, str]) -> bytes | None:
    """The run's source for the entry: UTF-8, NUL-terminated for a pinned function (``{argv}`` and ``{env}``
    as JSON, ``{argv}`` without the snapshot's ``kept_args``); None when ``argv`` does not start with those
    (the run starts cold)."""
    kept = snap.kept_args
    if kept:
        if tuple(argv[1 : 1 + len(kept)]) != kept:
            return None
        argv = [*argv[:1], *argv[1 + len(kept) :]]
    source = snap.run_source.replace("{argv}", json.dumps(argv)).replace("{env}", json.dumps(env))
    data = source.encode("utf-8", "surrogatepass")
    return data if snap.entry_export else data + b"\0"  # an export's source has a length; a C string, its NUL


def code_module(wasm: bytes, snap: WasmSnapshot) -> tuple[bytes, int]:
    """The code module of ``wasm`` (see the module docstring) and its initial stack pointer.

    Raises:
        SnapshotError: the entry does not look like the pinned one, or the module has a shape the
            snapshotter does not handle (explicit-memory data, more than one mutable global).
    """
    try:
        parts = wasmbin.sections(wasm)
        by_id = dict(parts)
        exports = wasmbin.read_exports(by_id[wasmbin.EXPORT]) if wasmbin.EXPORT in by_id else []
        added = _check_entry(parts, exports, snap)
        globs = wasmbin.read_globals(by_id[wasmbin.GLOBAL])
        mutable = [i for i, g in enumerate(globs) if g.mutable]
        if len(mutable) != 1 or globs[mutable[0]].valtype != wasmbin.I32:
            raise SnapshotError("the runtime must have exactly one mutable global (its stack pointer)")
        stack_global = mutable[0] + wasmbin.import_counts(by_id.get(wasmbin.IMPORT, b"\0"))[3]
        stack_pointer = wasmbin.const_value(globs[mutable[0]])
        # Only active segments for memory 0 at a constant offset, and passive ones (checked).
        segments, passive = wasmbin.data_count(by_id.get(wasmbin.DATA, b"\0"))
        # No data (the image brings it); with passive segments, every index stays, as an empty passive one.
        empty = wasmbin.empty_passive_data(segments) if passive else wasmbin.enc_uleb(0)
        wasmbin.read_memory(by_id[wasmbin.MEMORY])
        if any(e.name in (ENTRY_EXPORT, STACK_EXPORT) for e in exports):
            raise SnapshotError("the runtime already exports the snapshot's names")
        out: list[tuple[int, bytes]] = []
        for sid, body in parts:
            if sid in (0, wasmbin.START):
                continue
            if sid == wasmbin.EXPORT:
                extra = [wasmbin.Export(STACK_EXPORT, wasmbin.KIND_GLOBAL, stack_global)]
                if added is not None:
                    extra.insert(0, wasmbin.Export(ENTRY_EXPORT, wasmbin.KIND_FUNC, added))
                out.append((sid, wasmbin.write_exports(exports + extra)))
            elif sid == wasmbin.DATA:
                out.append((sid, empty))
            elif sid == wasmbin.DATA_COUNT:
                out.append((sid, wasmbin.enc_uleb(segments if passive else 0)))
            else:
                out.append((sid, body))
        return wasmbin.build(out), stack_pointer
    except (wasmbin.WasmFormatError, KeyError, IndexError) as exc:
        raise SnapshotError(f"cannot read the runtime: {exc or type(exc).__name__}") from None


def _check_entry(parts: list[tuple[int, bytes]], exports: list[wasmbin.Export], snap: WasmSnapshot) -> int | None:
    """The function to export as the entry (None: the runtime's own ``entry_export`` is it), checked.

    Raises:
        SnapshotError: a pinned function is not (i32, i32) -> i32 or does not refer to its marker; a named
            export is missing or has another type; the allocator is not (i32) -> i32.
    """
    if snap.entry_function is not None:
        params, results = wasmbin.function_type(parts, snap.entry_function)
        if (params, results) != (b"\x7f\x7f", b"\x7f"):
            raise SnapshotError(f"function {snap.entry_function} is not (i32, i32) -> i32")
        if not wasmbin.references_string(parts, snap.entry_function, snap.entry_marker.encode()):
            raise SnapshotError(f"function {snap.entry_function} does not refer to {snap.entry_marker!r}")
        return snap.entry_function
    functions = {e.name: e.index for e in exports if e.kind == wasmbin.KIND_FUNC}
    for name, want in ((snap.entry_export, (b"\x7f\x7f", b"\x7f")), (snap.alloc_export, (b"\x7f", b"\x7f"))):
        if name not in functions:
            raise SnapshotError(f"the runtime exports no function {name!r}")
        if wasmbin.function_type(parts, functions[name]) != want:
            raise SnapshotError(f"the runtime's {name!r} does not take {len(want[0])} i32 and return one")
    return None


def initial_memory(wasm: bytes) -> bytes:
    """The runtime's memory as instantiation leaves it: its minimum, with the data segments in place."""
    by_id = dict(wasmbin.sections(wasm))
    minimum, _ = wasmbin.read_memory(by_id[wasmbin.MEMORY])
    memory = bytearray(minimum * _PAGE)
    for offset, blob in wasmbin.read_data(by_id.get(wasmbin.DATA, b"\0"), passive=True):
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
        #: code-module name -> the runtime's initial memory and stack pointer (``_initial_image``), kept for
        #: the process's life.
        self._initial: dict[str, tuple[MemoryImage, int]] = {}
        self._warming = threading.Lock()
        #: (id(spec), id(snapshot), preopens) -> (spec, snapshot, key): both are held, so their ids cannot be
        #: reused while cached.
        self._keys: dict[tuple[int, int, tuple[str, ...]], tuple[WasmSpec, WasmSnapshot, str]] = {}

    @property
    def directory(self) -> Path:
        return self._dir

    # -- naming ----------------------------------------------------------------------------

    def key(self, spec: WasmSpec, snap: WasmSnapshot | None = None, preopens: Sequence[str] = ()) -> str:
        """The name of the snapshot ``snap`` (default: ``spec.snapshot``) captured with ``preopens``."""
        snap = snap or spec.snapshot
        assert snap is not None
        ident = (id(spec), id(snap), tuple(preopens))
        cached = self._keys.get(ident)  # asked at every run; hashing Python's capture script took ~0.1 ms
        if cached is not None and cached[0] is spec and cached[1] is snap:
            return cached[2]
        key = self._key(spec, snap, preopens)
        if len(self._keys) >= 64:  # specs are pack data (a handful); never let made-up ones pile up
            self._keys.clear()
        self._keys[ident] = (spec, snap, key)
        return key

    def _key(self, spec: WasmSpec, snap: WasmSnapshot, preopens: Sequence[str]) -> str:
        assert snap is not None
        engine, _ = self._machinery()
        parts = [
            f"recipe={RECIPE_VERSION}", f"artifact={snap.artifact_sha256}", f"entry={snap.entry_function}",
            f"marker={snap.entry_marker}", f"engine={engine.description}", json.dumps(list(snap.capture_args)),
            json.dumps(snap.run_source), json.dumps(list(snap.preload)), json.dumps(dict(spec.env)),
        ]  # fmt: skip
        if snap.entry_export:
            parts += [f"export={snap.entry_export}/{snap.alloc_export}", json.dumps(snap.capture_source)]
        if snap.kept_args:
            parts.append(f"kept={json.dumps(list(snap.kept_args))}")
        if spec.mounts:  # the capture sees them (the C library reads its preopen table once)
            parts.append(json.dumps([[m.artifact.sha256, m.member, m.guest_path, m.tree] for m in spec.mounts]))
        if preopens:
            parts.append(f"preopens={json.dumps(list(preopens))}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def path(self, spec: WasmSpec, snap: WasmSnapshot | None = None, preopens: Sequence[str] = ()) -> Path:
        return self._dir / f"{self.key(spec, snap, preopens)}.snap"

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def _code_name(snap: WasmSnapshot) -> str:
        """Cached: asked on every snapshot run (a snapshot is frozen, plain data)."""
        entry = snap.entry_export or f"{snap.entry_function}\n{snap.entry_marker}"
        text = f"snapshot-code\n{CODE_VERSION}\n{snap.artifact_sha256}\n{entry}"
        return hashlib.sha256(text.encode()).hexdigest()

    # -- state -----------------------------------------------------------------------------

    def ready(self, spec: WasmSpec, snap: WasmSnapshot | None = None, preopens: Sequence[str] = ()) -> bool:
        """Whether runs of ``spec`` can use a snapshot without building one first. Cheap: stats."""
        snap = snap or spec.snapshot
        if snap is None:
            return False
        key = self.key(spec, snap, preopens)
        with self._lock:
            if key in self._images:
                return True
        return (self._dir / f"{key}.snap").is_file() and self.code_compiled(snap)

    def code_compiled(self, snap: WasmSnapshot) -> bool:
        """Whether the code module ``snap`` runs on is compiled for this machine already. Cheap: a stat."""
        _, modules = self._machinery()
        return modules.has(self._code_name(snap))

    def failure(self, spec: WasmSpec, snap: WasmSnapshot | None = None, preopens: Sequence[str] = ()) -> str | None:
        """Why the snapshot of ``spec`` could not be built in this process (None: it was not tried or it was)."""
        with self._lock:
            return self._failed.get(self.key(spec, snap, preopens))

    def build(
        self, pack: Pack, progress: ProgressCallback | None, snap: WasmSnapshot | None = None,
        preopens: Sequence[str] = (),
    ) -> bool:
        """Make sure ``image`` finds the snapshot on disk (captured now if needed), without keeping it here.

        What ``provision`` does for every snapshot of a runtime: the
        scientific Python has eight (about 630 MiB of images), and a process
        that then runs some of its programs (the window, an MCP server)
        would otherwise hold all of them in memfds for its life. A run loads
        the one it needs (``image``). False when it cannot be built here.
        """
        spec = pack.wasm
        snap = snap or (spec.snapshot if spec is not None else None)
        if spec is None or snap is None:
            return False
        if self.ready(spec, snap, preopens):
            return True
        got = self.image(pack, progress, snap, preopens, keep=False)
        return got is not None

    def image(
        self, pack: Pack, progress: ProgressCallback | None, snap: WasmSnapshot | None = None,
        preopens: Sequence[str] = (), *, keep: bool = True,
    ) -> tuple[wasmtime.Module, Image] | None:
        """The code module and verified image for ``pack``'s runs, captured first when needed.

        ``snap`` is the snapshot (default: the pack's one-shot ``snapshot``;
        a session's is ``session_snapshot`` with its driver in place), and
        ``preopens`` the guest names of empty directories preopened after the
        root at the capture: the C library reads its preopen table while it
        starts, so a run that preopens more (a session's ``/.session``) needs
        a capture that had them. None when there is no snapshot or it cannot
        be built here (the reason is logged once and kept: ``failure``); the
        run then starts cold. ``keep`` False (``build``): an image made or
        loaded here is closed, not kept for the next run.
        """
        spec = pack.wasm
        snap = snap or (spec.snapshot if spec is not None else None)
        if spec is None or snap is None or spec.module is None:
            return None
        key = self.key(spec, snap, preopens)
        with self._lock:
            if key in self._failed:
                return None
            image = self._images.get(key)
            lock = self._key_locks.setdefault(key, threading.Lock())
        try:
            module = self._code_module(spec, snap, progress)
            if image is not None:
                return module, image
            with lock:
                with self._lock:
                    image = self._images.get(key)
                if image is None:
                    image = self._load(key, snap)
                    if image is None:
                        image = self._capture(pack, module, key, progress, snap=snap, preopens=preopens)
                    if not keep:
                        image.memory.close()
                        return module, image
                    with self._lock:
                        self._images[key] = image
            return module, image
        except (SnapshotError, wasmtime.WasmtimeError, OSError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("%s starts cold: no snapshot (%s)", pack.name, reason)
            with self._lock:
                self._failed[key] = reason
            return None

    def cold_start(
        self, pack: Pack, progress: ProgressCallback | None
    ) -> tuple[wasmtime.Module, runner.ImageStart] | None:
        """A cold start of ``pack``'s runtime from the snapshot's code module: one compile serves both.

        The code module is the runtime without its data; over a memory
        mapped from the runtime's own data segments (``initial_memory``) its
        ``_start`` runs exactly as the runtime's would. So a run, session or
        service that cannot use a snapshot (start-up variables, mounts, a
        caller root, a large source) needs no second compile of the whole
        runtime (about 10 s for CPython on 2 cores), and its memory comes
        copy-on-write from a sealed memfd instead of a copy of the data
        segments. None when the pack has no snapshot or its code module
        cannot be made here (then the runtime itself is compiled, as before).
        """
        spec = pack.wasm
        snap = spec.snapshot if spec is not None else None
        if spec is None or snap is None or spec.module is None:
            return None
        failed_key = f"cold-{self._code_name(snap)}"
        with self._lock:
            if failed_key in self._failed:
                return None
        try:
            module = self._code_module(spec, snap, progress)
            initial, _ = self._initial_image(pack, snap)
        except (SnapshotError, wasmtime.WasmtimeError, OSError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("%s compiles its whole runtime for cold starts (%s)", pack.name, reason)
            with self._lock:
                self._failed[failed_key] = reason
            return None
        return module, runner.ImageStart(image=initial, label=f"the {pack.name} runtime", minimum=initial.length)

    def _initial_image(self, pack: Pack, snap: WasmSnapshot) -> tuple[MemoryImage, int]:
        """The runtime's memory as instantiation leaves it (``initial_memory``, in a sealed memfd) and its
        initial stack pointer: what a capture and a cold start run ``_start`` over. Made once per code module.

        Raises:
            SnapshotError: the runtime has a shape the snapshotter does not handle (``code_module``).
            OSError: the runtime file or the memfd.
        """
        spec = pack.wasm
        assert spec is not None and spec.module is not None
        name = self._code_name(snap)
        with self._lock:
            found = self._initial.get(name)
        if found is not None:
            return found
        wasm = self._artifacts.verified_path(spec.module, pack.name).read_bytes()
        _, stack_pointer = code_module(wasm, snap)
        made = (MemoryImage(initial_memory(wasm), name=f"initial-{pack.name}"), stack_pointer)
        with self._lock:
            found = self._initial.setdefault(name, made)
        if found is not made:
            made[0].close()
        return found

    def _code_module(self, spec: WasmSpec, snap: WasmSnapshot, progress: ProgressCallback | None) -> wasmtime.Module:
        assert spec.module is not None
        path = self._artifacts.verified_path(spec.module, spec.module.name)
        _, modules = self._machinery()
        return modules.derived(
            self._code_name(snap), lambda: code_module(path.read_bytes(), snap)[0], path,
            label=f"{spec.module.name} (snapshot code)", progress=progress,
        )  # fmt: skip

    # -- the file --------------------------------------------------------------------------

    def _load(self, key: str, snap: WasmSnapshot) -> Image | None:
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
        return Image(
            MemoryImage(memory, name=f"snapshot-{key[:12]}"), stack_pointer, minimum, monotonic, key,
            snap.entry_export, snap.alloc_export,
        )  # fmt: skip

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
                    _write_sparse(handle, memory)
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

    # -- warm pages --------------------------------------------------------------------------

    def warm_up(
        self, pack: Pack, module: wasmtime.Module, image: Image, *, snap: WasmSnapshot | None = None,
        preopens: Sequence[str] = (),
    ) -> None:
        """Learn ``image``'s warm pages now if they are not known and another run is in flight.

        Only then are they used (``runner``), so a process that never runs
        two at once never pays for the calibration (about 20 ms for Python,
        once). One calibration at a time; a run that finds one going on
        starts without waiting for it.
        """
        if image.memory.warm is not None:
            return
        engine, _ = self._machinery()
        if engine.active_runs == 0 or not self._warming.acquire(blocking=False):
            return
        try:
            snap = snap or (pack.wasm.snapshot if pack.wasm is not None else None)
            if image.memory.warm is None and snap is not None:
                self._learn_warm_pages(pack, module, image, snap=snap, preopens=preopens)
        finally:
            self._warming.release()

    def _learn_warm_pages(
        self, pack: Pack, module: wasmtime.Module, image: Image, *, snap: WasmSnapshot, preopens: Sequence[str]
    ) -> None:
        """Learn the pages every run of ``image`` writes (``warmpages``) from host-chosen calibration runs.

        ``CALIBRATION_RUNS`` runs of the pack's ``warm_program`` (a session
        snapshot: its driver, which finds no session and stops) with the
        pack's own environment; the pages all of them wrote become
        ``image.memory.warm``.
        Never fails: without it (an error, no page map) runs fault as before.
        """
        spec = pack.wasm
        assert spec is not None
        runs: list[bytes] = []

        def inspect(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
            base = runner.memory_base(store, instance)
            flags = None if base is None else warmpages.written(base, image.memory.length)
            if flags is not None:
                runs.append(flags)

        engine, _ = self._machinery()
        program = Spec(lang=pack.name, code="")
        if snap == spec.snapshot:
            argv = launch.argv(pack, program, has_program=True)
        elif spec.session is not None:
            argv = [pack.name, *spec.session.args]
        else:
            return
        data = payload(snap, argv, dict(spec.env))
        if data is None:
            return
        try:
            for _ in range(CALIBRATION_RUNS):
                vfs = VFS.for_limits(DEFAULT_LIMITS.validate())
                launch.place_program(vfs, launch.main_path(pack, program), snap.warm_program.encode())
                opened = self._preopens(vfs, pack, preopens)
                control = RunControl(wall_limit=_CALIBRATION_WALL, cpu_limit=_CALIBRATION_WALL)
                runner.run(engine, runner.Launch(
                    module=module, argv=argv, env=dict(spec.env), stdin=b"", vfs=vfs, output=OutputCapture(1 << 16),
                    memory_limit=None, wall_limit=_CALIBRATION_WALL, cpu_limit=_CALIBRATION_WALL,
                    quiet_paths=spec.quiet_paths,
                    image=image.start(f"the {pack.name} calibration", data), inspect=inspect, preopens=opened,
                ), control)  # fmt: skip
        except Exception as exc:  # a calibration is an optimisation: the runs work without it
            log.warning("%s: no warm pages (%s)", pack.name, exc)
            runs.clear()
        image.memory.warm = warmpages.WarmPages.common(runs)
        kind = "snapshot" if snap == spec.snapshot else "session snapshot"
        log.info("%s %s: %d warm pages", pack.name, kind, image.memory.warm.pages)

    # -- capture ---------------------------------------------------------------------------

    def _preopens(self, vfs: VFS, pack: Pack, preopens: Sequence[str]) -> list[tuple[str, Dir]]:
        """The preopens of a capture or calibration run in ``vfs``, in a run's order: the empty ``preopens``
        (a session's ``/.session``, which its channel opens before the launch's preopens), then those of the
        pack's mounts, placed in ``vfs``."""
        spec = pack.wasm
        assert spec is not None
        placed = mounts.place(vfs, spec.mounts, self._artifacts, pack.name)
        return [*((name, Dir(0, True, None)) for name in preopens), *placed]

    def _capture(
        self, pack: Pack, module: wasmtime.Module, key: str, progress: ProgressCallback | None, *,
        snap: WasmSnapshot, preopens: Sequence[str],
    ) -> Image:
        spec = pack.wasm
        assert spec is not None and spec.module is not None
        if progress is not None:
            try:
                what = f"snapshot for {', '.join(snap.for_imports)}" if snap.for_imports else "snapshot"
                progress(f"preparing the {pack.name} {what} (once, before the program's time limit starts)", -1.0)
            except Exception:
                log.exception("progress callback failed")
        start, initial_sp = self._initial_image(pack, snap)
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
        label = f"the {pack.name} runtime"
        if snap.entry_export:  # the runtime's own entry runs the capture's source; taken when it returns
            begin = runner.ImageStart(
                image=start, label=label, minimum=start.length, stack_pointer=initial_sp,
                payload=snap.capture_source.encode("utf-8"), entry=snap.entry_export, stack_export=STACK_EXPORT,
                alloc=snap.alloc_export,
            )  # fmt: skip
        else:
            begin = runner.ImageStart(image=start, label=label, minimum=start.length)
        try:
            vfs = VFS.for_limits(DEFAULT_LIMITS.validate())
            launch = runner.Launch(
                module=module, argv=[pack.name, *snap.capture_args], env=dict(spec.env), stdin=b"",
                vfs=vfs, output=output, memory_limit=None, entry=spec.entry,
                wall_limit=_CAPTURE_WALL, cpu_limit=_CAPTURE_WALL, attempts=AttemptLog(), quiet_paths=spec.quiet_paths,
                image=begin, capture=take, preopens=self._preopens(vfs, pack, preopens),
            )  # fmt: skip
            outcome = runner.run(engine, launch, control)
        except Exception as exc:
            raise SnapshotError(f"the capture failed: {exc}") from None
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
            "key": key, "pack": pack.name, "artifact": snap.artifact_sha256, "pages": len(memory) // _PAGE,
            "stack_pointer": stack_pointer, "memory_minimum": start.length, "monotonic_ns": got["monotonic"],
            "recipe": RECIPE_VERSION,
            "engine": engine.description,
        }  # fmt: skip
        self._store(key, memory, meta)
        log.info("captured the %s snapshot: %d pages", pack.name, len(memory) // _PAGE)
        return Image(
            MemoryImage(memory, name=f"snapshot-{key[:12]}"), stack_pointer, start.length, got["monotonic"], key,
            snap.entry_export, snap.alloc_export,
        )  # fmt: skip


#: Runs of zeros at least this long are not written to a snapshot file (``_write_sparse``).
_HOLE: Final = 65536


def _write_sparse(handle: BinaryIO, data: bytes) -> None:
    """Write ``data`` at the file's position, leaving each 64 KiB run of zeros a hole (the file system stores
    no blocks for it; reading it gives the zeros back, so the checksum is the same).

    Why: 3-45 % of a snapshot's memory is such runs (heap a runtime
    reserved, stacks); in one cache with the scientific runtime's eight,
    869 MiB of snapshot files held 165 MiB of them.
    """
    view = memoryview(data)
    zero = bytes(_HOLE)
    start = handle.tell()
    for offset in range(0, len(view), _HOLE):
        chunk = view[offset : offset + _HOLE]
        if chunk == zero[: len(chunk)]:
            handle.seek(len(chunk), os.SEEK_CUR)
        else:
            handle.write(chunk)
    handle.truncate(start + len(view))  # a hole at the end still counts in the size
