"""``WasmBackend``: runs packs on wasmtime over our own WASI and the in-memory VFS.

Every run gets a fresh Store, instance, descriptor table and VFS (the
VFS comes from the core), executed on its own worker thread so the event
loop never blocks. Runtimes are verified (SHA-256) and compiled once, then
served from the module cache.

Sessions (``open_session``, see ``session``): one long-lived instance per
session on its own worker thread, driven by a REPL driver over framed
stdin and a control channel (``channel``).

Serving (``serve``, see ``serve``): the handler bridge; a served program
is one such live instance and each HTTP request one call into it.

Precision of the limits (see ``engine`` and ``runner``): wall time and
cancellation to one epoch tick (~5 ms); CPU time is the guest thread's CPU
time, to one tick; memory is a hard cap on linear memory
(``memory.grow`` fails beyond it) with heuristic reporting; output and the
filesystem quota are exact.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple

import wasmtime

from backends.wasm import devices, launch, live, mounts, procpool, runner, serve, session, snapshot, transforms, workers
from backends.wasm.artifacts import ArtifactStore, cache_root
from backends.wasm.channel import SESSION_DIR
from backends.wasm.diagnose import diagnose
from backends.wasm.engine import WasmEngine, shared_engine, wasmtime_version
from backends.wasm.modcache import ModuleCache
from backends.wasm.state import RunControl
from backends.wasm.typescript import TypeScriptTransformer
from playground.core import handoff
from playground.core.backend import Diagnostic, ProgressCallback, Request
from playground.core.errors import BackendUnavailable
from playground.core.output import Stream
from playground.core.pack import Artifact, Pack, WasmSnapshot, WasmSpec
from playground.core.result import Outcome
from playground.core.serve import GuestService, ServeRequest
from playground.core.session import GuestSession, SessionRequest
from playground.core.variants import snapshot_for, variant_pack

log = logging.getLogger(__name__)

#: Native stack of a worker thread: wasm may use 2 MiB of it, plus Python frames of host calls.
WORKER_STACK: Final = 16 << 20
_stack_lock = threading.Lock()
_run_ids = itertools.count(1)


class _SnapshotKind(NamedTuple):
    """One snapshot of a pack: its name in messages, what starts from it, and how it is captured."""

    name: str
    serves: str
    snapshot: WasmSnapshot
    preopens: tuple[str, ...]
    #: Built by the first run that starts from it (before its clock) unless a set-up asks for everything
    #: (``provision(complete=True)``): the import snapshots, which only some programs use.
    on_first_run: bool = False


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class WasmBackend:
    """The ``wasm`` backend. Safe for concurrent runs from one or more event loops.

    ``cache_dir`` overrides the cache location (default: ``cache_root()``,
    read once at construction); runtimes are looked up under
    ``<cache_dir>/artifacts`` and compiled modules kept in
    ``<cache_dir>/modules``.

    Lifecycle: ``close()`` is idempotent; afterwards ``run`` raises
    ``BackendUnavailable`` and ``unavailable_reason`` says it is closed.
    Runs already in flight finish normally (each is bounded by its limits).
    """

    name: Final = "wasm"
    supports_network: Final = False

    def __init__(self, *, cache_dir: Path | None = None, packs: Iterable[Pack] = (), processes: int = 0) -> None:
        root = cache_dir if cache_dir is not None else cache_root()
        #: Worker processes that take one-shot runs while another is in flight (``procpool``); None: none.
        self._pool = procpool.ProcessPool(processes, root) if processes else None
        #: One-shot runs in flight, here or in workers (the event loop's count: changed on the loop only).
        self._in_flight = 0
        self._packs = tuple(packs)
        self._root = root
        self._artifacts = ArtifactStore(root)
        self._lock = threading.Lock()
        self._state = _State.OPEN
        self._engine: WasmEngine | None = None
        self._modules: ModuleCache | None = None
        #: Snapshots of started interpreters for one-shot runs (``snapshot``).
        self.snapshots = snapshot.Snapshots(root, self._artifacts, self._machinery)
        #: Threads for one-shot runs, reused from run to run (``workers``); sessions and serving start their own.
        self._workers = workers.WorkerPool(_start_worker)
        #: The instance made for the next run (``prepare_next``: a worker process's), taken by the run it fits.
        self._prepared: runner.Prepared | None = None
        #: Stores of ``run_here``'s runs (a worker process's), closed by ``after_run_here`` once its answer went.
        self._spent: list[wasmtime.Store] = []
        #: The snapshot starts worked out so far (``_snapshot_start``), by what they depend on.
        self._starts: dict[_StartKey, _KnownStart] = {}

    @property
    def cache_dir(self) -> Path:
        return self._root

    def _machinery(self) -> tuple[WasmEngine, ModuleCache]:
        with self._lock:
            if self._engine is None or self._modules is None:
                self._engine = shared_engine()
                self._modules = ModuleCache(self._engine, self._root / "modules")
            return self._engine, self._modules

    @property
    def modules(self) -> ModuleCache:
        """The compiled-module cache (built on first use)."""
        return self._machinery()[1]

    # -- Provisionable protocol ---------------------------------------------------------------

    def missing(self, pack: Pack, *, complete: bool = False) -> list[str]:
        """What ``pack`` still needs here: runtime files not in the cache, then modules not compiled yet,
        then snapshots (the import snapshots only when ``complete``: see ``provision``).

        Cheap: a stat per artifact and per compiled module, no hashing.
        """
        absent = [a.name for a in _artifacts_of(pack) if self._artifacts.missing_reason(a, a.name) is not None]
        if absent:
            return absent
        needed = [f"{a.name} (compiled for this machine)" for a in _modules_of(pack) if not self.modules.has(a.sha256)]
        for kind in self._snapshot_kinds(pack):
            if (complete or not kind.on_first_run) and self._snapshot_missing(pack, kind):
                needed.append(f"{self._label(pack)} {kind.name} (a started interpreter for fast {kind.serves})")
        return needed

    def _label(self, pack: Pack) -> str:
        """``pack``'s name in messages: "python", or "python (scientific)" for a variant of a known pack."""
        for known in self._packs:
            if known.name == pack.name and known.wasm is not None:
                for variant in known.wasm.variants:
                    if variant.wasm is pack.wasm:
                        return f"{pack.name} ({variant.name})"
        return pack.name

    def _snapshot_kinds(self, pack: Pack) -> list[_SnapshotKind]:
        """The snapshots ``pack`` has: one-shot runs', then sessions'."""
        spec = pack.wasm
        if spec is None:
            return []
        kinds = []
        if spec.snapshot is not None:
            kinds.append(_SnapshotKind("snapshot", "runs", spec.snapshot, ()))
        for extra in spec.import_snapshots:
            names, joint = extra.for_imports, " + " if extra.all_imports else ", "
            shown = joint.join(names) if len(names) <= 3 else f"{joint.join(names[:3])} and {len(names) - 3} more"
            kinds.append(_SnapshotKind(f"snapshot for {shown}", "runs", extra, (), on_first_run=True))
        session_snap = session.session_snapshot(pack)
        if session_snap is not None:
            kinds.append(_SnapshotKind("session snapshot", "sessions", session_snap, (SESSION_DIR,)))
        return kinds

    def _snapshot_missing(self, pack: Pack, kind: _SnapshotKind) -> bool:
        """Whether ``kind`` of ``pack`` is not built yet (and did not fail to build in this process)."""
        spec = pack.wasm
        assert spec is not None
        return (
            not self.snapshots.ready(spec, kind.snapshot, kind.preopens)
            and self.snapshots.failure(spec, kind.snapshot, kind.preopens) is None
        )

    def provision(self, pack: Pack, progress: Callable[[str], None], *, complete: bool = False) -> None:
        """Fetch or build ``pack``'s missing runtimes into this backend's cache, then compile them (blocks).

        Compiling here (the scientific runtime takes a minute or more) keeps
        it out of every run: a run then only loads the compiled module.
        Then the snapshots: the one every run starts from and the sessions';
        the import snapshots (the scientific runtime's eight, 2-5 s each)
        only when ``complete`` (``playground setup``). Otherwise the first
        run that starts from one builds it, before its clock starts: a first
        use of the scientific runtime took 88 s, 20 s of them for snapshots
        its program did not use.

        Raises:
            BackendUnavailable: an artifact has no manifest entry, fetching/building
                it failed, or it does not compile.
        """
        from backends.wasm import provision  # the manifest and pip/zig machinery, only when needed

        wanted = [a for a in _artifacts_of(pack) if self._artifacts.missing_reason(a, a.name) is not None]
        try:
            provision.provision_artifacts([a.sha256 for a in wanted], root=self._root, progress=progress)
        except provision.BuildError as exc:
            raise BackendUnavailable(f"could not set up the runtime for {pack.name}: {exc}") from None
        for artifact in _modules_of(pack):
            if self.modules.has(artifact.sha256):
                continue
            path = self._artifacts.verified_path(artifact, pack.name)
            started = time.monotonic()
            progress(f"compiling {artifact.name} for this machine ({_compile_estimate(artifact)}, once)")
            try:
                self.modules.runtime(artifact.sha256, path, label=artifact.name, progress=None)
            except wasmtime.WasmtimeError as exc:
                raise BackendUnavailable(f"{artifact.name} does not compile: {str(exc).splitlines()[0]}") from None
            progress(f"compiled {artifact.name} in {time.monotonic() - started:.0f} s")
        spec = pack.wasm
        for kind in self._snapshot_kinds(pack):
            if spec is None or (kind.on_first_run and not complete) or not self._snapshot_missing(pack, kind):
                continue
            started = time.monotonic()
            how = "starting it"
            if not self.snapshots.code_compiled(kind.snapshot):
                how = "compiling its code once, then starting it"
            progress(f"preparing the {self._label(pack)} {kind.name} ({how})")
            if not self.snapshots.build(pack, None, kind.snapshot, kind.preopens):
                failure = self.snapshots.failure(spec, kind.snapshot, kind.preopens)
                progress(f"no {self._label(pack)} {kind.name} ({failure}): its {kind.serves} start cold")
            else:
                progress(f"prepared the {self._label(pack)} {kind.name} in {time.monotonic() - started:.1f} s")

    def diagnostics(self) -> list[Diagnostic]:
        """wasmtime, the cache directory, every runtime of the packs given at construction, and their snapshots."""
        lines = diagnose(self._root, self._artifacts, self._packs, wasmtime_version(), self.modules.has)
        runtimes = [
            variant_pack(base, variant)
            for base in self._packs
            for variant in (None, *(base.wasm.variants if base.wasm is not None else ()))
        ]  # fmt: skip
        for pack in runtimes:
            spec = pack.wasm
            for kind in self._snapshot_kinds(pack):
                assert spec is not None
                if self.snapshots.ready(spec, kind.snapshot, kind.preopens):
                    one = "one-shot runs" if kind.serves == "runs" else "sessions"
                    detail = f"ready in {self.snapshots.directory} ({one} start from it)"
                else:
                    first = "run" if kind.serves == "runs" else "session"
                    detail = f"not prepared yet: playground setup or the first {first} needing it does (0.4-5 s)"
                failure = self.snapshots.failure(spec, kind.snapshot, kind.preopens)
                lines.append(Diagnostic(
                    name=f"{self._label(pack)} {kind.name}", ok=failure is None, required=False,
                    detail=detail if failure is None else f"cannot be built here ({failure}); {kind.serves} start cold",
                ))  # fmt: skip
        if self._pool is not None:
            sizes = self._pool.idle_memory()
            each = f"; memory {', '.join(f'{size >> 20} MiB' for size in sizes)}" if sizes else ""
            lines.append(Diagnostic(
                name="wasm worker processes", ok=True, required=False,
                detail=f"{self._pool.size} for one-shot runs that overlap ({self._pool.ready()} started{each})",
            ))  # fmt: skip
        return lines

    # -- Backend protocol --------------------------------------------------------------------

    def unavailable_reason(self, pack: Pack) -> str | None:
        """None when ``pack`` can run now. Cheap: at most a stat per artifact (``missing_reason``), no hashing."""
        if self._state is _State.CLOSED:
            return "wasm backend is closed"
        spec = pack.wasm
        if spec is None:
            return f"{pack.name} has no WebAssembly runtime"
        for mount in spec.mounts:
            reason = self._artifacts.missing_reason(mount.artifact, pack.name)
            if reason is not None:
                return reason
        if spec.transform:
            if spec.transform not in transforms.KNOWN:
                return f"unknown source transform {spec.transform!r}"
            if spec.transformer is None:
                return f"the {spec.transform} transform needs a transformer artifact"
            reason = self._artifacts.missing_reason(spec.transformer, f"{spec.transform} transform")
            if reason is not None:
                return reason
        if spec.module is None:
            return None
        return self._artifacts.missing_reason(spec.module, pack.name)

    async def run(self, request: Request) -> Outcome:
        """Run the request on a worker thread and return its outcome.

        Cancellation: cancelling the awaiting task stops the guest (within
        one epoch tick, or at once when it sleeps in ``poll_oneoff``); the
        worker thread is always waited for before ``CancelledError``
        leaves, so no Store is ever abandoned. A first-time compile cannot
        be interrupted; the guest is then never started.

        Raises:
            BackendUnavailable: closed, runtime missing, or artifact hash mismatch.
            TimeLimitExceeded, MemoryLimitExceeded, OutputLimitExceeded,
            FSQuotaExceeded: a limit tripped (the core adds the partial result).
            InvalidSpec: a ``wasm``-pack module that is not valid.
        """
        if self._state is _State.CLOSED:
            raise BackendUnavailable("wasm backend is closed")
        limits = request.limits
        pool = self._pool
        self._in_flight += 1
        try:
            # A run alone runs here (no hand-over to pay); one that overlaps another goes to an idle worker
            # (the first overlap starts the workers: a caller that never overlaps runs never pays for them).
            # Only a run here looks for the runtime's files again (the core's routing just did): a worker
            # takes only runs of a start it has loaded, so it holds that runtime already.
            worker = None
            if pool is not None:
                start = self.start_of(request)
                pool.note(request, start)
                worker = pool.take(request, start) if self._in_flight > 1 else None
            if worker is not None:
                assert pool is not None
                try:
                    return await pool.run(worker, request, _as_async)
                except procpool.NotSent as exc:
                    log.warning("a run stays in this process: %s", exc)
            self._check_runnable(request.pack)
            memory = limits.memory_cap
            control = RunControl(wall_limit=limits.wall_time_cap, cpu_limit=limits.cpu_time_cap)
            name = f"wasm-run-{next(_run_ids)}"
            return await handoff.in_thread(
                lambda: self._run_blocking(request, control, memory),
                start=lambda body: self._submit(body, name), stop=control.cancel, translate=_as_async,
            )  # fmt: skip
        finally:
            self._in_flight -= 1

    def run_here(self, request: Request, control: RunControl) -> Outcome:
        """Run ``request`` on this thread (a worker process's ``procworker``), as ``run`` does on its worker.

        Raises:
            As ``run``; ``runner.RunCancelled`` when ``control`` was cancelled.
        """
        self._check_runnable(request.pack)
        try:
            return self._run_blocking(request, control, request.limits.memory_cap, dispose=self._spent.append)
        except (wasmtime.WasmtimeError, wasmtime.Trap) as exc:
            raise live.translate(exc) from None

    def after_run_here(self, request: Request) -> None:
        """After ``run_here``'s answer went (a worker process, between its runs): prepare the next run like
        ``request`` (``prepare_next``), then close the finished runs' Stores."""
        try:
            self.prepare_next(request)
        except Exception as exc:  # the next run makes its own instance, and meets the same failure
            log.debug("no instance prepared for the next %s run: %s", request.pack.name, exc)
        spent, self._spent = self._spent, []
        for store in spent:
            store.close()

    def prepare_next(self, request: Request) -> None:
        """Make the instance the next run like ``request`` starts from (``runner.prepare``), in place of any other.

        A worker process calls it between its runs (``after_run_here``).
        Why: its parent takes about as long to hand the next run over as a
        short run takes, and this work (a fifth of a hello world: the Store,
        tables, instance and image) is then off the run's path: a
        JavaScript hello handed to an idle worker took 2.16 ms (p50)
        against 2.37 without it. It does not add throughput where the CPU
        is the limit (two workers and their parent on two cores). Not in
        the main process: there the run's thread would do it while the
        caller's loop takes the result, and the two took turns at the
        interpreter lock: JavaScript hello worlds went from 1.27-1.85 to
        1.72-2.04 ms (p50), Lua's from 1.12-1.41 to 1.60-1.73. The instance
        is made for ``request``'s runtime, start (snapshot, cold image or
        none) and memory limit; a next run that differs in any of them
        starts its own instance, as before. The prepared instance ran no
        code: the run sets its own arguments, environment, source, stdin
        and tree in it. It costs the memory of its image's pages that were
        copied (``ProcessPool.idle_memory``) until the next run takes it,
        and no CPU while it waits.
        """
        self._drop_prepared()
        spec = request.pack.wasm
        if self.closed or spec is None or spec.module is None:
            return  # closed, or the user's own module: never prepared
        engine, _ = self._machinery()
        module, start = self._runtime_start(request, None)  # raises as a run would when the runtime is missing
        made = runner.prepare(engine, module, start, request.limits.memory_cap)
        with self._lock:
            replaced, self._prepared = self._prepared, made  # one made meanwhile (another thread) gives way
        if replaced is not None:
            replaced.close()
        if self.closed:  # closed while it was made
            self._drop_prepared()

    def _take_prepared(self) -> runner.Prepared | None:
        with self._lock:
            prepared, self._prepared = self._prepared, None
        return prepared

    def _drop_prepared(self) -> None:
        prepared = self._take_prepared()
        if prepared is not None:
            prepared.close()

    def _check_runnable(self, pack: Pack) -> None:
        """Raise ``BackendUnavailable`` unless a one-shot run of ``pack`` can start (open, runtime there)."""
        if self._state is _State.CLOSED:
            raise BackendUnavailable("wasm backend is closed")
        reason = self.unavailable_reason(pack)
        if reason is not None:
            raise BackendUnavailable(f"wasm backend cannot run {pack.name}: {reason}")

    @property
    def processes(self) -> int:
        """How many worker processes one-shot runs may spread to (0: none; ``procpool``)."""
        return self._pool.size if self._pool is not None else 0

    def _submit(self, body: Callable[[], None], name: str) -> None:
        try:
            self._workers.submit(body, name)
        except RuntimeError:  # closed since ``run`` checked
            raise BackendUnavailable("wasm backend is closed") from None

    # -- SessionBackend protocol -------------------------------------------------------------

    def session_unavailable_reason(self, pack: Pack) -> str | None:
        """None when ``open_session`` can keep an interpreter of ``pack`` alive; else why not."""
        return self.unavailable_reason(pack) or session.driver_unavailable_reason(pack)

    async def open_session(self, request: SessionRequest) -> GuestSession:
        """Start ``request.pack``'s interpreter with its REPL driver; see ``backends.wasm.session``.

        Cancellation: stops the start-up and waits for the worker thread.

        Raises:
            BackendUnavailable: closed, no driver, runtime missing or corrupt.
            TimeLimitExceeded, MemoryLimitExceeded: start-up hit a limit.
            HostFailure: the driver stopped before its first prompt.
        """
        if self._state is _State.CLOSED:
            raise BackendUnavailable("wasm backend is closed")
        reason = self.session_unavailable_reason(request.pack)
        if reason is not None:
            raise BackendUnavailable(f"wasm backend cannot keep a {request.pack.name} session: {reason}")
        engine, modules = self._machinery()
        return await session.open_session(
            engine, modules, self._artifacts, request, _start_worker, snapshots=self.snapshots
        )

    # -- ServeBackend protocol ---------------------------------------------------------------

    def serve_unavailable_reason(self, pack: Pack) -> str | None:
        """None when ``serve`` can run ``pack`` behind the handler bridge; else why not."""
        return self.unavailable_reason(pack) or serve.bridge_unavailable_reason(pack)

    async def serve(self, request: ServeRequest) -> GuestService:
        """Start ``request.spec``'s program behind the handler bridge; see ``backends.wasm.serve``.

        Cancellation: stops the start-up and waits for the worker thread.

        Raises:
            BackendUnavailable: closed, no bridge for the pack, runtime missing or corrupt.
            FSQuotaExceeded, TimeLimitExceeded, MemoryLimitExceeded: start-up hit a limit.
            ServeError: the program ended before it served.
        """
        if self._state is _State.CLOSED:
            raise BackendUnavailable("wasm backend is closed")
        reason = self.serve_unavailable_reason(request.pack)
        if reason is not None:
            raise BackendUnavailable(f"wasm backend cannot serve {request.pack.name}: {reason}")
        engine, modules = self._machinery()
        pack = request.pack
        return await serve.start_service(
            engine, modules, self._artifacts, request, _start_worker,
            cold=lambda: self.snapshots.cold_start(pack, None),
        )  # fmt: skip

    def supports_caller_root(self) -> bool:
        """Yes: the guest's ``/`` is a VFS, so any tree the caller gives can be it (``Spec.root_files``)."""
        return True

    @property
    def closed(self) -> bool:
        return self._state is _State.CLOSED

    def close(self) -> None:
        """Refuse new runs and sessions. Idempotent; runs and sessions in flight go on until they end."""
        self._state = _State.CLOSED
        self._workers.close()
        if self._pool is not None:
            self._pool.close()
        self._drop_prepared()

    # -- the blocking part (worker thread) ---------------------------------------------------

    def _run_blocking(
        self, request: Request, control: RunControl, memory: int | None,
        dispose: Callable[[wasmtime.Store], None] | None = None,
    ) -> Outcome:
        engine, modules = self._machinery()
        pack = request.pack
        spec = pack.wasm
        assert spec is not None
        start: runner.ImageStart | None = None
        if spec.module is None:
            module = modules.user(launch.user_module_bytes(request.spec.code, request.vfs))
            has_program = False
        else:
            module, start = self._runtime_start(request, request.progress)
            program = request.spec.code_bytes
            if spec.transform:
                transformed = self._transform(spec, program, request, launch.main_path(pack, request.spec))
                if isinstance(transformed, str):
                    request.output.write(Stream.STDERR, transformed.encode("utf-8", "replace"))
                    return Outcome(exit_code=1)
                program = transformed
            launch.place_program(request.vfs, launch.main_path(pack, request.spec), program)
            has_program = True
        preopens = mounts.place(request.vfs, spec.mounts, self._artifacts, pack.name)
        devices.place(request.vfs)
        plan = runner.Launch(
            module=module,
            argv=launch.argv(pack, request.spec, has_program=has_program),
            env=launch.environment(pack, request.spec),
            stdin=request.stdin,
            keyboard=request.input,
            vfs=request.vfs,
            output=request.output,
            memory_limit=memory,
            wall_limit=control.wall_limit,
            cpu_limit=control.cpu_limit,
            entry=spec.entry,
            preopens=preopens,
            attempts=request.attempts,
            quiet_paths=spec.quiet_paths,
            image=start,
            prepared=self._take_prepared(),
            dispose=dispose,
        )  # fmt: skip
        return runner.run(engine, plan, control)

    def _runtime_start(
        self, request: Request, progress: ProgressCallback | None
    ) -> tuple[wasmtime.Module, runner.ImageStart | None]:
        """The module a run of ``request`` (a pack with a runtime) instantiates, and the image it starts from.

        A snapshot when the run can start from one; else a cold start over
        the runtime's data (``Snapshots.cold_start``); else the runtime
        itself with its own data segments (no image).
        """
        pack, spec = request.pack, request.pack.wasm
        assert spec is not None and spec.module is not None
        path = self._artifacts.verified_path(spec.module, pack.name)
        start_from = self._snapshot_start(request) or self.snapshots.cold_start(pack, progress)
        if start_from is not None:
            return start_from
        _, modules = self._machinery()
        return modules.runtime(spec.module.sha256, path, label=spec.module.name, progress=progress), None

    def _snapshot_start(self, request: Request) -> tuple[wasmtime.Module, runner.ImageStart] | None:
        """The code module and start of a snapshot run, or None: this run starts cold (``snapshot``).

        Cold: the pack has no snapshot, the run has a caller root tree,
        sets an environment variable the interpreter reads while it starts,
        has a source too large for the guest's stack, or the snapshot
        cannot be built here.

        A start is worked out once per runtime, snapshot, arguments and
        environment (``_starts``): the image's lookup, the code module's
        (a second stat of the runtime) and the payload's JSON cost 20-70 µs
        a run, twice per run in a worker process (which also prepares the
        next run's instance). The runtime file itself is still checked by
        every run (``_runtime_start``), and a snapshot loaded in this
        process never changes, so a known start is the one this would make.
        """
        pack, spec = request.pack, request.pack.wasm
        assert spec is not None
        env = launch.environment(pack, request.spec)
        snap = self._chosen_snapshot(request, env)
        if snap is None:
            return None
        argv = launch.argv(pack, request.spec, has_program=True)
        key = (id(spec), id(snap), tuple(argv), tuple(env.items()))
        known = self._starts.get(key)
        if known is None:
            known = self._work_out_start(pack, snap, argv, env, request.progress)
            if known is None:
                return None
            if len(self._starts) >= MAX_STARTS:  # many different arguments or environments: start over
                self._starts.clear()
            self._starts[key] = known
        self.snapshots.warm_up(pack, known.module, known.image, snap=known.snap)
        return known.module, known.start

    def _work_out_start(
        self, pack: Pack, snap: WasmSnapshot, argv: list[str], env: dict[str, str], progress: ProgressCallback | None
    ) -> _KnownStart | None:
        spec = pack.wasm
        assert spec is not None
        data = snapshot.payload(snap, argv, env)
        if data is None or len(data) > snapshot.MAX_PAYLOAD:
            return None
        got = self.snapshots.image(pack, progress, snap)
        if got is None and snap is not spec.snapshot and spec.snapshot is not None:  # that one failed: the plain one
            snap = spec.snapshot
            got = self.snapshots.image(pack, progress, snap)
        if got is None:
            return None
        module, image = got
        return _KnownStart(spec, snap, module, image, image.start(f"the {pack.name} snapshot", data))

    @staticmethod
    def _chosen_snapshot(request: Request, env: Mapping[str, str]) -> WasmSnapshot | None:
        """The snapshot a one-shot run of ``request`` with environment ``env`` starts from (None: it starts cold)."""
        spec = request.pack.wasm
        assert spec is not None
        snap = snapshot_for(spec, request.spec.code_bytes)
        if snap is None or request.spec.uses_caller_root or snap.needs_cold_start(env, spec.env):
            return None
        return snap

    @classmethod
    def start_of(cls, request: Request) -> int | None:
        """Which start a one-shot run of ``request`` loads: ``procpool.start_key``'s last part.

        -1: the spec's own snapshot; ``i``: its ``import_snapshots[i]``;
        None: a cold start. An index, not the object: a worker process has
        its own copy of the pack.
        """
        spec = request.pack.wasm
        if spec is None or spec.module is None:
            return None
        snap = cls._chosen_snapshot(request, launch.environment(request.pack, request.spec))
        if snap is None:
            return None
        return -1 if snap is spec.snapshot else spec.import_snapshots.index(snap)

    def load_start(self, pack: Pack, start: int | None) -> None:
        """Load what a run of ``pack`` from ``start`` (``start_of``) needs: the compiled code and the image.

        A worker process does this before it takes such runs, so that no
        run waits for a worker's first load of a runtime (about 1.4 s for
        the scientific Python's). Raises what a run would.
        """
        spec = pack.wasm
        if spec is None or spec.module is None:
            return
        snap = None if start is None else spec.snapshot if start == -1 else spec.import_snapshots[start]
        if snap is not None and self.snapshots.image(pack, None, snap) is not None:
            return
        if self.snapshots.cold_start(pack, None) is None:
            _, modules = self._machinery()
            path = self._artifacts.verified_path(spec.module, pack.name)
            modules.runtime(spec.module.sha256, path, label=spec.module.name, progress=None)

    def _transform(self, spec: WasmSpec, program: bytes, request: Request, guest_path: str) -> bytes | str:
        """The transformed program, or the error text for stderr (naming the file as at ``guest_path``)."""
        engine, modules = self._machinery()
        artifact = spec.transformer
        assert artifact is not None
        path = self._artifacts.verified_path(artifact, f"{spec.transform} transform")
        module = modules.runtime(artifact.sha256, path, label=artifact.name, progress=request.progress)
        transformer: transforms.SourceTransform = TypeScriptTransformer(engine, module)
        name = guest_path.rsplit("/", 1)[-1]
        if name.endswith(".js"):  # the pack's default file holds the JavaScript; the source was TypeScript
            name = name[:-3] + ".ts"
        try:
            return transformer.transform(program.decode("utf-8", "replace"), name).encode("utf-8")
        except transforms.TransformError as exc:
            text = str(exc)
            return text if text.endswith("\n") else text + "\n"


#: The most snapshot starts a backend keeps (``_starts``); each is a few hundred bytes.
MAX_STARTS: Final = 64
#: What a snapshot start depends on: the runtime's spec and snapshot (by id: each is held by its entry), the
#: arguments and the environment.
_StartKey = tuple[int, int, tuple[str, ...], tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class _KnownStart:
    """A snapshot start worked out (``WasmBackend._snapshot_start``). It holds the spec its key names by id, and
    the spec holds every snapshot of it, so neither id in the key is reused while the entry is kept."""

    spec: WasmSpec
    snap: WasmSnapshot
    module: wasmtime.Module
    image: snapshot.Image
    start: runner.ImageStart


def _as_async(exc: BaseException) -> BaseException:
    """A run's worker error as the awaiting task sees it: a cancelled run is a cancellation."""
    if isinstance(exc, runner.RunCancelled):
        return asyncio.CancelledError()
    return live.translate(exc)


def _start_worker(target: Callable[[], None], name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name, daemon=True)
    with _stack_lock:
        previous = threading.stack_size(WORKER_STACK)
        try:
            thread.start()
        finally:
            threading.stack_size(previous)
    return thread


def _modules_of(pack: Pack) -> list[Artifact]:
    """The artifacts of ``pack`` that are Wasm modules to compile: its runtime and its transformer.

    A runtime with a snapshot is not among them: its snapshot's code module
    serves every start, cold ones too (``Snapshots.cold_start``); the whole
    runtime is compiled only if that module cannot be made.
    """
    spec = pack.wasm
    if spec is None:
        return []
    runtime = spec.module if spec.snapshot is None else None
    return [a for a in (runtime, spec.transformer) if a is not None]


def _compile_estimate(artifact: Artifact) -> str:
    """A rough duration for a first compile on 2 cores (about 1 s per MB of Wasm)."""
    seconds = artifact.size / 1e6
    return f"about {max(1, round(seconds / 60))} min" if seconds >= 90 else "a few seconds"


def _artifacts_of(pack: Pack) -> list[Artifact]:
    """The pinned files a pack's Wasm runtime needs: its module, its source transformer and its mounts."""
    spec = pack.wasm
    if spec is None:
        return []
    found = [a for a in (spec.module, spec.transformer) if a is not None] + [m.artifact for m in spec.mounts]
    return list({a.sha256: a for a in found}.values())
