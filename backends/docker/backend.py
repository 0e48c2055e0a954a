"""``DockerBackend``: runs a pack's program in a hardened container used for that run only.

It speaks ``Request``/``Outcome`` upward and only ``engine`` downward; no
``docker`` exception reaches the core; it routes, and the work is in the
modules named here. One run, in a worker thread: find the daemon
(``detect``, ``connection``), resolve and if needed pull the image
(``imagestore``), then ``launch``: take a prepared container made with
exactly the run's create arguments (``pool``, ``parked``) or create one from
``oneshot_profile``, feed it the input archive, stream its output and read
the wrapper's trailer (``oneshot``: also how precisely each limit is
enforced), copy ``/out`` back (``outtar``), and remove the container.

Beyond ``run``: REPL sessions (``session``, ``drivers``), servers
(``serve``) and ``Spec.net`` policies (an internal network and the host's
egress proxy: ``egress``, ``networks``; the host shielded from such guests:
``isolation``). A served guest has no network either: the proxy reaches it
through its private network namespace only (``guestnet``, ``relay``), which
needs root on a local rootful daemon; otherwise serving is refused with the
reason. What the guest tried (``Result.attempts``): the in-guest report
(``report``) plus what the host sees (``sinkhole``, ``spawnwatch``, the
egress log), where this process may enter the guest's namespaces.

Cancellation: cancelling the awaiting task makes the worker kill the
container within ``POLL`` seconds; ``run`` waits for the worker (and so for
the container's removal) before ``CancelledError`` leaves. Cancelling twice
is the same as once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from backends.docker.availability import AvailabilityCache
from backends.docker.connection import EngineConnection
from backends.docker.control import Cancelled as _Cancelled
from backends.docker.control import RunControl as _RunControl
from backends.docker.control import in_worker
from backends.docker.detect import DaemonProbe, ProbeResult, network_policy_refusal
from backends.docker.diagnostics import docker_diagnostics, pool_diagnostic
from backends.docker.drivers import no_driver_reason
from backends.docker.egress import NetAccess, run_with_egress
from backends.docker.engine import Engine, EngineError, EngineInfo
from backends.docker.hostfirewall import Detection
from backends.docker.images import ImageResolver
from backends.docker.imagestore import ImageStore
from backends.docker.isolation import (
    HostIsolation,
    host_reach_reason,
    isolation_diagnostic,
    network_record_refusal,
    serve_reason,
)
from backends.docker.launch import execute_oneshot
from backends.docker.pool import DEFAULT_SIZE as DEFAULT_POOL_SIZE
from backends.docker.pool import PODMAN_POOL_REASON, PoolStatus, WarmPool
from backends.docker.profile import EngineKind
from backends.docker.serve import DockerGuestService, start_guest_service
from backends.docker.session import DockerGuestSession, start_session
from backends.docker.sinkhole import tools_missing
from backends.docker.spawnwatch import SpawnWatch
from playground.core import (
    BackendUnavailable,
    Diagnostic,
    GuestService,
    GuestSession,
    NetPolicy,
    Outcome,
    Pack,
    ProgressCallback,
    Request,
    ServeRequest,
    SessionRequest,
    Unsupported,
)
from playground.core.backend import CHECKING
from playground.net import Connector, Resolver

log = logging.getLogger(__name__)

class DockerBackend:
    """The Docker/Podman tier. Cheap to construct: nothing connects until first use.

    ``packs`` is only used by ``diagnostics()`` to report each pack's image.
    ``base_url`` pins the daemon (else ``detect.candidate_endpoints``).
    ``pull_timeout`` bounds a silent registry during a pull. Thread-safe;
    ``close()`` is idempotent and later runs raise ``BackendUnavailable``.
    """

    #: A ``NetPolicy`` is enforced by ``playground.net``'s egress proxy (see ``backends.docker.egress``).
    supports_network = True

    def __init__(
        self,
        *,
        packs: Iterable[Pack] = (),
        base_url: str | None = None,
        probe_ttl: float = 5.0,
        probe_timeout: float = 2.0,
        api_timeout: float = 30.0,
        pull_timeout: float = 120.0,
        resolver: ImageResolver | None = None,
        max_concurrent: int = 32,
        net_resolver: Resolver | None = None,
        net_connector: Connector | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self._packs = tuple(p for p in packs if p.docker is not None)
        self._probe = DaemonProbe(base_url=base_url, ttl=probe_ttl, timeout=probe_timeout)
        self._connection = EngineConnection(self._probe, api_timeout=api_timeout)
        #: Prepared containers for one-shot runs (``pool``); declined on Podman (see ``_warm_pool``).
        self._warm = WarmPool(
            pool_size, lambda: self._connected()[0], record_network=lambda: self._network_record_reason() is None
        )
        self._images = ImageStore(
            resolver or ImageResolver(), connected=lambda: self._connected()[0], ttl=lambda: self._probe.ttl,
            pull_timeout=pull_timeout,
        )  # fmt: skip
        self._max_concurrent = max_concurrent
        self._net_resolver = net_resolver
        self._net_connector = net_connector
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        #: What ``unavailable_reason`` answers from (``refresh``), and the packs it covers.
        self._availability = AvailabilityCache(
            self._packs, ttl=lambda: self._probe.ttl, invalidate=self._probe.invalidate,
            learn_reason=self._learn_reason, learn_serve=self._serve_reason,
        )  # fmt: skip
        self._closed = False
        self._sessions: weakref.WeakSet[DockerGuestSession] = weakref.WeakSet()
        self._reapers: set[threading.Thread] = set()
        self._services: weakref.WeakSet[DockerGuestService] = weakref.WeakSet()
        self._isolation = HostIsolation(self._probe)
        #: The host's view of spawned commands (``spawnwatch``), made on first use; ``False``: not possible here.
        self._spawn_watch: SpawnWatch | bool | None = None

    @property
    def name(self) -> str:
        return "docker"

    # -- availability -------------------------------------------------------

    def unavailable_reason(self, pack: Pack) -> str | None:
        """None when ``pack`` can run here now; else why not. Never blocks (``SlowAvailability``).

        Answers from the last snapshot of the daemon and its images
        (``CHECKING`` before the first); a stale snapshot is learned again on
        a thread of its own. A missing image is a reason; so is a pull that
        failed recently.
        """
        if self._closed:
            return "the Docker backend is closed"
        if pack.docker is None:
            return f"{pack.name} has no Docker image"
        snapshot = self._availability.for_pack(pack)
        if snapshot is None or pack.name not in snapshot.reasons:
            return CHECKING
        return snapshot.reasons[pack.name]

    @property
    def availability_known(self) -> bool:
        return self._availability.snapshot is not None

    def refresh(self) -> None:
        """Learn now (blocking) whether the daemon answers and which packs' images it has; see ``SlowAvailability``."""
        self._availability.refresh()

    def _learn_reason(self, pack: Pack) -> str | None:
        """``unavailable_reason``, learned now: may ask the daemon (bounded by the probe and API timeouts)."""
        if pack.docker is None:
            return f"{pack.name} has no Docker image"
        probe = self._probe.get()
        if probe.reason is not None:
            return probe.reason
        return self._images.reason(pack)

    def _connected(self) -> tuple[Engine, EngineInfo, ProbeResult]:
        return self._connection.get()

    def _host_isolation(self) -> Detection:
        return self._isolation.get()

    def _host_reach_reason(self) -> str | None:
        """None when guests on a network (``NetPolicy`` runs) may be started; else why not."""
        return host_reach_reason(self._host_isolation())

    def _isolation_diagnostic(self) -> Diagnostic:
        return isolation_diagnostic(self._host_isolation())

    def _ensure_image(self, engine: Engine, pack: Pack, progress: ProgressCallback | None, ctl: _RunControl) -> str:
        return self._images.ensure(engine, pack, progress, ctl)

    # -- running ------------------------------------------------------------

    async def run(self, request: Request) -> Outcome:
        """Run one request in a fresh container; see the module docstring for limits.

        With ``spec.net`` set, the container sits on its own internal network
        and reaches out only through the egress proxy (``egress``); every
        request lands in ``Outcome.net_log`` (also on a limit error's outcome).

        Cancellation: the container is killed promptly and removed (and the
        run's network and egress proxy too) before ``CancelledError`` propagates.

        Raises:
            TimeLimitExceeded, MemoryLimitExceeded, OutputLimitExceeded,
            FSQuotaExceeded: a limit tripped (without ``.result``; the core adds it).
            BackendUnavailable: no daemon, no image, the daemon failed mid-run,
                or the backend is closed.
        """
        if self._closed:
            raise BackendUnavailable("the Docker backend is closed")
        if request.spec.net is None:
            return await in_worker(self._pool(), lambda ctl: self._execute(request, ctl, None))
        return await self._run_with_network(request, request.spec.net)

    async def _run_with_network(self, request: Request, policy: NetPolicy) -> Outcome:
        pool = self._pool()
        engine, info, probe = await asyncio.to_thread(self._connected)
        # Podman or a remote daemon: cannot work at all, so PLAYGROUND_DOCKER_ALLOW_HOST_REACH does not apply.
        refused = network_policy_refusal(probe.endpoint, info) if probe.endpoint is not None else None
        why = refused or await asyncio.to_thread(self._host_reach_reason)
        if why is not None:
            raise BackendUnavailable(f"docker: {why}")
        return await run_with_egress(
            engine, policy, lambda access: in_worker(pool, lambda ctl: self._execute(request, ctl, access)),
            request.attempts, resolver=self._net_resolver, connector=self._net_connector,
            firewall=self._host_isolation().firewall,
        )  # fmt: skip

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._closed:
                raise BackendUnavailable("the Docker backend is closed")
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self._max_concurrent, thread_name_prefix="docker-run")
            return self._executor

    def _execute(self, request: Request, ctl: _RunControl, net: NetAccess | None) -> Outcome:
        pack = request.pack
        if pack.docker is None:
            raise BackendUnavailable(f"docker: {pack.name} has no Docker image")
        engine, info, _ = self._connected()
        ctl.check()
        image = self._ensure_image(engine, pack, request.progress, ctl)
        ctl.check()
        return execute_oneshot(
            engine, info.kind, image, request, ctl, net=net, watch=self._spawns(),
            record_network=net is None and self._network_record_reason() is None, pool=self._warm_pool(info.kind),
        )  # fmt: skip

    def _warm_pool(self, kind: EngineKind) -> WarmPool | None:
        """The pool, or None where it is declined: on Podman (``PODMAN_POOL_REASON``)."""
        if kind is EngineKind.PODMAN:
            self._warm.declined = PODMAN_POOL_REASON
            return None
        return self._warm

    def pool_status(self) -> PoolStatus:
        """The warm pool's size and how many containers are prepared now, per language."""
        return self._warm.status()

    def set_pool_size(self, size: int) -> None:
        """Prepared containers per language used from now on (0: none; see ``pool``).

        Raises:
            ValueError: a negative size.
        """
        self._warm.resize(size)

    # -- sessions -----------------------------------------------------------

    def session_unavailable_reason(self, pack: Pack) -> str | None:
        """None for packs with a REPL driver (bash, node) whose image can run here; else why not."""
        return no_driver_reason(pack) or self.unavailable_reason(pack)

    async def open_session(self, request: SessionRequest) -> GuestSession:
        """Start a session container and wait for its driver; see ``backends.docker.session``.

        Cancellation: the half-started container is removed before ``CancelledError`` leaves.

        Raises:
            Unsupported: no REPL driver for the pack.
            BackendUnavailable: no daemon, no image, or the backend is closed.
            SessionKilled: the driver did not come up.
        """
        why = no_driver_reason(request.pack)
        if why is not None:
            raise Unsupported(why)
        pool = self._pool()

        def start(ctl: _RunControl) -> DockerGuestSession:
            engine, info, _ = self._connected()
            image = self._ensure_image(engine, request.pack, None, ctl)
            ctl.check()
            try:
                return start_session(
                    engine, image=image, kind=info.kind, request=request, pool=pool, reaper=self._reap, ctl=ctl,
                    spawns=self._spawns(), record_network=self._network_record_reason() is None,
                )  # fmt: skip
            except EngineError as exc:
                raise BackendUnavailable(f"docker: could not start a session: {exc}") from exc

        session = await in_worker(pool, start)
        self._sessions.add(session)
        return session

    def _reap(self, job: Callable[[], None]) -> None:
        """Run a container removal on its own thread; ``close()`` waits for all of them."""

        def run() -> None:
            try:
                job()
            finally:
                with self._lock:
                    self._reapers.discard(thread)

        thread = threading.Thread(target=run, name="docker-reap", daemon=True)
        with self._lock:
            self._reapers.add(thread)
        thread.start()

    # -- serving ------------------------------------------------------------

    def serve_unavailable_reason(self, pack: Pack) -> str | None:
        """Any pack this backend can run can serve, when this process can enter the guest's private network
        namespace (root, local rootful daemon): that is the proxy's only way in (see ``serve``). Never blocks."""
        reason = self.unavailable_reason(pack)
        if reason is not None:
            return reason
        snapshot = self._availability.snapshot
        return CHECKING if snapshot is None else snapshot.serve

    def _spawns(self) -> SpawnWatch | None:
        """The backend's ``SpawnWatch``, started on first use; None where the host cannot watch (see ``spawnwatch``)."""
        why = None if isinstance(self._spawn_watch, SpawnWatch) else self._sinkhole_reason()
        with self._lock:
            if self._closed or self._spawn_watch is False:
                return None
            if self._spawn_watch is None:
                try:
                    if why is not None:
                        raise OSError(why)
                    self._spawn_watch = SpawnWatch.open()
                except OSError as exc:
                    log.info("no host records of spawned commands: %s", exc)
                    self._spawn_watch = False
                    return None
            return self._spawn_watch if isinstance(self._spawn_watch, SpawnWatch) else None

    def _sinkhole_reason(self) -> str | None:
        """None when this process can enter a run's namespaces and run the tools (``sinkhole``, ``spawnwatch``)."""
        return self._serve_reason() or tools_missing()

    def _network_record_reason(self) -> str | None:
        """None when a run without a network can have its network attempts recorded by the host (``sinkhole``)."""
        return network_record_refusal(self._probe) or self._sinkhole_reason()

    def _serve_reason(self) -> str | None:
        return serve_reason(self._probe)

    async def serve(self, request: ServeRequest) -> GuestService:
        """Start the guest server; see ``backends.docker.serve``.

        Cancellation: a half-started container is removed before ``CancelledError`` leaves.

        Raises:
            BackendUnavailable: no daemon, no image, the daemon refused, this process cannot enter
                the guest's network namespace (see ``guestnet``), or the backend is closed.
        """
        if request.spec.net is not None:
            raise Unsupported("docker: a network policy for a served guest is not implemented yet")
        loop = asyncio.get_running_loop()

        def start(ctl: _RunControl) -> DockerGuestService:
            engine, info, _ = self._connected()
            why = self._serve_reason()
            if why is not None:
                raise BackendUnavailable(f"docker: cannot serve: {why}")
            image = self._ensure_image(engine, request.pack, None, ctl)
            ctl.check()
            try:
                service = start_guest_service(engine, image=image, kind=info.kind, request=request, loop=loop)
            except EngineError as exc:
                raise BackendUnavailable(f"docker: could not start the service: {exc}") from exc
            if ctl.cancelled.is_set():
                service._teardown()
                raise _Cancelled()
            self._services.add(service)
            return service

        return await in_worker(self._pool(), start)

    # -- lifecycle ----------------------------------------------------------

    def close(self) -> None:
        """Refuse new runs and release the client and worker pool. Idempotent.

        Runs already in flight finish (their containers are still removed);
        open sessions are closed and their containers removed before this returns.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._availability.close()
        self._warm.close()
        for session in list(self._sessions):
            session.close()
        for service in list(self._services):
            self._reap(service._teardown)
        while True:
            with self._lock:
                reapers = list(self._reapers)
            if not reapers:
                break
            for thread in reapers:
                thread.join(timeout=30.0)
                with self._lock:
                    self._reapers.discard(thread)
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        self._connection.close()
        with self._lock:
            watch, self._spawn_watch = self._spawn_watch, False
        if isinstance(watch, SpawnWatch):
            watch.close()

    # -- doctor -------------------------------------------------------------

    def diagnostics(self) -> list[Diagnostic]:
        """Daemon, API version, Docker or Podman, host isolation of networked guests, and each pack's image,
        with fix hints (see ``diagnostics``). Every line is ``required=False``: the Docker tier is optional."""
        lines = docker_diagnostics(self._probe, self._images, self._packs, self._isolation_diagnostic)
        if lines[0].ok:  # a daemon answers: what the warm pool holds on it
            lines.append(pool_diagnostic(self._warm))
        return lines
