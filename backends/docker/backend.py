"""``DockerBackend``: runs a pack's program in a fresh hardened container per run.

It speaks ``Request``/``Outcome`` upward and only ``engine`` downward; no
``docker`` exception reaches the core. One run, in a worker thread:

1. find the daemon (``detect``), resolve the image (``images``), pull it on
   first use with progress, or fail with ``BackendUnavailable`` saying how to
   get it offline;
2. create the container from ``oneshot_profile`` with the ``wrapper``
   script as its only process tree, attach to its stdio, start it, and
   write the input archive (``/in``, the program, stdin) to its stdin;
3. stream stdout/stderr into ``request.output`` until the wrapper's trailer
   marker, then read the trailer (usage, ``/out`` as a tar, capped);
4. check the limits, copy ``/out`` into ``request.vfs`` (with the checks in
   ``outtar`` and the VFS quota), and remove the container in ``finally``.

Limits and how precisely they are enforced:

* ``wall_time``: measured from container start (unpacking, compiling and
  running all count); at the deadline the container is SIGKILLed and
  ``TimeLimitExceeded`` carries the output captured so far.
* ``memory``: cgroup limit, no swap; ``State.OOMKilled`` (Docker), or a failed
  run whose cgroup peak reached the limit (Podman does not set OOMKilled)
  -> ``MemoryLimitExceeded``.
* ``max_output``: the write that crosses the cap keeps exactly the bytes that
  fit; the container is killed at once and ``OutputLimitExceeded`` leaves.
* ``max_procs``: pids cgroup (a fork bomb stalls, then meets the wall time).
* ``fs_quota``/``max_files``: each tmpfs is capped (the guest sees ENOSPC);
  afterwards a full mount, a total above the quota (in tmpfs pages) or a
  ``/out`` that does not fit the VFS -> ``FSQuotaExceeded``.
* ``cpu_time``: RLIMIT_CPU per process; a process killed by SIGXCPU ->
  ``TimeLimitExceeded``.

Beyond ``run``: REPL sessions (``open_session``, bash and node, see
``session`` and ``drivers``), servers (``serve``, see ``serve``) and
``Spec.net`` policies (a per-run internal network plus the host's egress
proxy, see ``egress`` and ``networks``). ``Spec.net=None`` keeps
``network_mode=none``, and so does a served guest: the proxy reaches it
through its private network namespace only (``guestnet``, ``relay``), which
needs root on a local rootful daemon; otherwise serving is refused with the
reason.

Host services and guests on a network: a container on one of our internal
networks (a ``NetPolicy`` run) has a route to the bridge's gateway, which is
the host; without a firewall it could connect to any host service listening
on that address or on a wildcard address (a database, SSH, a dev server).
When this process may (root, i.e. CAP_NET_ADMIN, a working ``iptables``, a
rootful daemon whose bridges are in our network namespace), each such
network gets a firewall chain that refuses everything from the guest to the
host except the run's egress proxy (``hostfirewall``). When it may not (a
user in the ``docker`` group, rootless Docker, Podman, no iptables),
``NetPolicy`` runs are refused with the reason, unless
``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1`` accepts that guests may reach host
services; ``diagnostics()`` says which case applies. Plain runs, served
guests (``network_mode=none``) and REPL sessions need no firewall.

What the guest tried (``Result.attempts``, issue #15): the in-guest hooks of
Python and node report over a channel the wrapper hands back in its trailer
(``report``); the host adds what it sees itself: network attempts of a run
without a network (``sinkhole``) or through the egress proxy, spawned
commands (``spawnwatch``) and the process limit. The sinkhole and the
spawn watch need what serving needs (root, a local rootful daemon); without
it runs have only the in-guest records and the process limit. REPL sessions
have the host's records per eval (network, spawned commands, the process
limit; see ``session``), no in-guest hooks; served guests have no attempt
records yet.

Cancellation: cancelling the awaiting task makes the worker kill the
container within ``POLL`` seconds; ``run`` waits for the worker (and so for
the container's removal) before ``CancelledError`` leaves. Cancelling twice
is the same as once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from backends.docker import packages
from backends.docker.control import Cancelled as _Cancelled
from backends.docker.control import RunControl as _RunControl
from backends.docker.control import in_worker
from backends.docker.detect import DaemonProbe, ProbeResult, firewall_refusal, network_policy_refusal
from backends.docker.drivers import no_driver_reason
from backends.docker.egress import NetAccess, guest_egress
from backends.docker.engine import (
    Engine,
    EngineError,
    EngineInfo,
    ImagePullFailed,
    version_tuple,
)
from backends.docker.guestnet import netns_unavailable_reason
from backends.docker.hostfirewall import ALLOW_ENV, Detection, detect, host_reach_allowed
from backends.docker.images import ImageResolver, images_hint, missing_image_reason
from backends.docker.oneshot import run_container
from backends.docker.profile import EngineKind, on_network, oneshot_profile
from backends.docker.report import record_net_log
from backends.docker.serve import DockerGuestService, start_guest_service
from backends.docker.session import DockerGuestSession, start_session
from backends.docker.sinkhole import tools_missing
from backends.docker.spawnwatch import SpawnWatch
from backends.docker.usage import check_inputs_fit
from backends.docker.wrapper import MARK_ENV, expand, for_request, input_archive, main_path, wrapper_argv
from playground.core import (
    BackendUnavailable,
    Diagnostic,
    GuestService,
    GuestSession,
    LimitExceeded,
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

#: The highest API version we ask for (the SDK's default).
MAX_API_VERSION: Final = "1.45"
#: How long a failed pull is remembered (and reported by ``unavailable_reason``).
PULL_FAILURE_TTL: Final = 60.0


@dataclasses.dataclass(frozen=True, slots=True)
class _Availability:
    """What ``refresh`` learned: per pack, None or why it cannot run; and why serving cannot (or None)."""

    learned_at: float
    reasons: dict[str, str | None]
    serve: str | None


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
    ) -> None:
        self._packs = tuple(p for p in packs if p.docker is not None)
        self._probe = DaemonProbe(base_url=base_url, ttl=probe_ttl, timeout=probe_timeout)
        self._api_timeout = api_timeout
        self._pull_timeout = pull_timeout
        self._resolver = resolver or ImageResolver()
        self._max_concurrent = max_concurrent
        self._net_resolver = net_resolver
        self._net_connector = net_connector
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._engine_url = ""
        self._executor: ThreadPoolExecutor | None = None
        self._images: dict[str, tuple[float, bool]] = {}
        self._pull_failures: dict[str, tuple[float, str]] = {}
        self._pulls: dict[str, threading.Lock] = {}
        #: What ``unavailable_reason`` answers from (``refresh``), and the packs it covers.
        self._snapshot: _Availability | None = None
        self._known_packs: dict[str, Pack] = {p.name: p for p in self._packs}
        self._learning: threading.Thread | None = None
        self._closed = False
        self._sessions: weakref.WeakSet[DockerGuestSession] = weakref.WeakSet()
        self._reapers: set[threading.Thread] = set()
        self._services: weakref.WeakSet[DockerGuestService] = weakref.WeakSet()
        self._isolation: tuple[str, Detection] | None = None
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
        snapshot = self._snapshot_for(pack)
        if snapshot is None or pack.name not in snapshot.reasons:
            return CHECKING
        return snapshot.reasons[pack.name]

    @property
    def availability_known(self) -> bool:
        return self._snapshot is not None

    def refresh(self) -> None:
        """Learn now (blocking) whether the daemon answers and which packs' images it has; see ``SlowAvailability``."""
        with self._lock:
            packs = dict(self._known_packs)
        self._probe.invalidate()
        reasons = {name: self._learn_reason(pack) for name, pack in packs.items()}
        serve = self._serve_reason()
        with self._lock:
            self._snapshot = _Availability(learned_at=time.monotonic(), reasons=reasons, serve=serve)

    def _snapshot_for(self, pack: Pack) -> _Availability | None:
        """The last snapshot; learns again in the background when it is stale or lacks ``pack``."""
        with self._lock:
            snapshot = self._snapshot
            known = pack.name in self._known_packs
            self._known_packs.setdefault(pack.name, pack)
            stale = snapshot is None or not known or time.monotonic() - snapshot.learned_at >= self._probe.ttl
            start = stale and not self._closed and (self._learning is None or not self._learning.is_alive())
            if start:
                self._learning = threading.Thread(target=self._learn_quietly, name="docker-availability", daemon=True)
                self._learning.start()
        return snapshot

    def _learn_quietly(self) -> None:
        try:
            self.refresh()
        except Exception:  # a bug of ours: say so, and answer from what was known
            log.exception("learning the Docker tier's availability failed")

    def _learn_reason(self, pack: Pack) -> str | None:
        """``unavailable_reason``, learned now: may ask the daemon (bounded by the probe and API timeouts)."""
        if pack.docker is None:
            return f"{pack.name} has no Docker image"
        probe = self._probe.get()
        if probe.reason is not None:
            return probe.reason
        image, _ = self._resolver.resolve(pack, self._image_present)
        if self._image_present(image):
            return None
        failure = self._pull_failures.get(image)
        if failure is not None and time.monotonic() - failure[0] < PULL_FAILURE_TTL:
            return failure[1]
        return missing_image_reason(pack, [i for i, _ in self._resolver.candidates(pack)])

    def _connected(self) -> tuple[Engine, EngineInfo, ProbeResult]:
        probe = self._probe.get()
        if probe.reason is not None or probe.endpoint is None or probe.info is None:
            raise BackendUnavailable(f"docker: {probe.reason}; {probe.hint}")
        with self._lock:
            if self._closed:
                raise BackendUnavailable("the Docker backend is closed")
            if self._engine is None or self._engine_url != probe.endpoint.url:
                if self._engine is not None:
                    self._engine.close()
                api = probe.info.api_version
                if version_tuple(api) > version_tuple(MAX_API_VERSION):
                    api = MAX_API_VERSION
                try:
                    self._engine = Engine(
                        probe.endpoint.url, timeout=self._api_timeout, version=api, tls=probe.endpoint.tls
                    )
                except EngineError as exc:
                    raise BackendUnavailable(f"docker: {exc}") from exc
                self._engine_url = probe.endpoint.url
            return self._engine, probe.info, probe

    def _host_isolation(self) -> Detection:
        """Whether (and with which firewall) the host can be shielded from our networks; cached per daemon."""
        probe = self._probe.get()
        endpoint = probe.endpoint
        if endpoint is None or probe.info is None:
            return Detection(reason=probe.reason or "no daemon")
        with self._lock:
            if self._isolation is not None and self._isolation[0] == endpoint.url:
                return self._isolation[1]
        path = endpoint.socket_path
        refused = firewall_refusal(endpoint, probe.info)
        if refused is not None or path is None:
            found = Detection(reason=refused or "not a local socket")
        else:
            rootless = "rootless" in endpoint.source.lower() or path.startswith("/run/user/")
            found = detect(rootless=rootless)
        with self._lock:
            self._isolation = (endpoint.url, found)
        return found

    def _host_reach_reason(self) -> str | None:
        """None when guests on a network (``NetPolicy`` runs) may be started; else why not (the host cannot be
        shielded)."""
        found = self._host_isolation()
        if found.firewall is not None or host_reach_allowed():
            return None
        return (
            f"guests on network-policy runs could reach host services on the bridge gateway: {found.reason}. "
            f"Run as root (so the backend can firewall its bridges), or set {ALLOW_ENV}=1 to accept the risk"
        )

    def _image_present(self, image: str) -> bool:
        cached = self._images.get(image)
        now = time.monotonic()
        if cached is not None and now - cached[0] < self._probe.ttl:
            return cached[1]
        try:
            engine, _, _ = self._connected()
            present = engine.image_present(image)
        except (BackendUnavailable, EngineError):
            return False
        self._images[image] = (now, present)
        return present

    def _ensure_image(self, engine: Engine, pack: Pack, progress: ProgressCallback | None, ctl: _RunControl) -> str:
        image, source = self._resolver.resolve(pack, self._image_present)
        if self._image_present(image):
            return image
        lock = self._pulls.setdefault(image, threading.Lock())
        with lock:
            self._images.pop(image, None)
            if self._image_present(image):
                return image

            def report(message: str, fraction: float) -> None:
                ctl.check()
                if progress is not None:
                    progress(message, fraction)

            report(f"pulling {image} (first use)", -1.0)
            puller = Engine(engine.base_url, timeout=self._pull_timeout, version="1.32", tls=engine.tls)
            try:
                puller.pull(image, report)
            except ImagePullFailed as exc:
                message = (
                    f"image {image} (from {source}) is not present and could not be pulled: "
                    f"{exc.detail or exc}. Offline? Build a local image from Debian packages: {images_hint(pack.name)}"
                )
                self._pull_failures[image] = (time.monotonic(), message)
                raise BackendUnavailable(f"docker: {message}") from exc
            finally:
                puller.close()
            self._pull_failures.pop(image, None)
            self._images[image] = (time.monotonic(), True)
            report(f"pulled {image}", 1.0)
        return image

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
        firewall = self._host_isolation().firewall
        failed: LimitExceeded | None = None
        try:
            async with guest_egress(
                engine, policy, resolver=self._net_resolver, connector=self._net_connector, firewall=firewall
            ) as (access, egress):
                try:
                    outcome = await in_worker(pool, lambda ctl: self._execute(request, ctl, access))
                except LimitExceeded as exc:
                    failed = exc
        except EngineError as exc:
            raise BackendUnavailable(f"docker: could not set up the run's network: {exc}") from exc
        record_net_log(egress.entries, request.attempts)
        if failed is not None:
            failed.outcome = dataclasses.replace(failed.outcome or Outcome(exit_code=-1), net_log=egress.entries)
            raise failed
        return dataclasses.replace(outcome, net_log=egress.entries)

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
        spec = for_request(pack.docker, request.spec)
        engine, info, _ = self._connected()
        ctl.check()
        image = self._ensure_image(engine, pack, request.progress, ctl)
        ctl.check()
        check_inputs_fit(request)
        mark = secrets.token_hex(16)
        live = request.input is not None  # stdin is forwarded while the program runs (see keyboard)
        archive = input_archive(request.vfs, spec, request.spec.code_bytes, b"" if live else request.stdin)
        kwargs = oneshot_profile(request.limits, spec, info.kind)
        if (added := packages.for_run(request.vfs)) is not None:  # Spec.packages: a tmpfs of their own
            archive = packages.members(added) + archive
            kwargs = packages.with_mount(kwargs, added)
        env = dict(request.spec.env)
        if net is not None:
            kwargs = on_network(kwargs, net.network)
            env.update(net.env)
        argv = wrapper_argv(spec, request.spec.args, env, archive_size=len(archive), live_stdin=live)
        try:
            # The guest's environment travels in argv; the container's holds only the marker (see wrapper).
            container = engine.create(image, argv, kwargs, {MARK_ENV: mark})
        except EngineError as exc:
            raise BackendUnavailable(f"docker: {exc}") from exc
        watch = self._spawns()
        program = expand(spec.cmd, main_path(spec), request.spec.args)
        try:
            with watch.track(container, program, request.attempts) if watch else contextlib.nullcontext():
                return run_container(
                    engine, container, image=image, archive=archive, mark=mark, request=request, ctl=ctl,
                    record_network=net is None and self._network_record_reason() is None,
                )  # fmt: skip
        except EngineError as exc:
            raise BackendUnavailable(f"docker: the run failed: {exc}") from exc
        finally:
            try:
                engine.remove(container)
            except EngineError:
                log.warning("could not remove container %s", container[:12], exc_info=True)

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
        snapshot = self._snapshot
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
        """None when a run without a network can have its network attempts recorded by the host (``sinkhole``).

        Not on Podman: there the route and the refusing rules are set up, but
        the packet copies never reach the recorder (seen in CI with Podman 4.3,
        cause not found), so the host would claim a record it cannot make; the
        in-guest hooks still report.
        """
        probe = self._probe.get()
        if probe.info is not None and probe.info.kind is EngineKind.PODMAN:
            return "Podman: the host's network recorder gets no packets there"
        return self._sinkhole_reason()

    def _serve_reason(self) -> str | None:
        probe = self._probe.get()
        endpoint = probe.endpoint
        if endpoint is None:
            return probe.reason or "no daemon"
        path = endpoint.socket_path
        rootless = "rootless" in endpoint.source.lower() or (path or "").startswith("/run/user/")
        return netns_unavailable_reason(socket_path=path, rootless=rootless)

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
            engine, self._engine = self._engine, None
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        if engine is not None:
            engine.close()
        with self._lock:
            watch, self._spawn_watch = self._spawn_watch, False
        if isinstance(watch, SpawnWatch):
            watch.close()

    # -- doctor -------------------------------------------------------------

    def diagnostics(self) -> list[Diagnostic]:
        """Daemon, API version, Docker or Podman, host isolation of networked guests, and each pack's image,
        with fix hints.

        Every line is ``required=False``: the Docker tier is optional.
        """
        probe = self._probe.get()
        if probe.reason is not None or probe.info is None or probe.endpoint is None:
            return [
                Diagnostic(name="docker daemon", ok=False, detail=probe.reason or "?", hint=probe.hint, required=False)
            ]
        info = probe.info
        lines = [
            Diagnostic(
                name="docker daemon",
                ok=True,
                detail=(
                    f"{info.kind.value} {info.server_version} at {probe.endpoint.url} ({probe.endpoint.source}), "
                    f"API {info.api_version}"
                ),
                required=False,
            ),
            self._isolation_diagnostic(),
        ]
        for pack in self._packs:
            image, source = self._resolver.resolve(pack, self._image_present)
            present = self._image_present(image)
            lines.append(
                Diagnostic(
                    name=f"docker image for {pack.name}",
                    ok=present,
                    detail=f"{image} ({'present' if present else 'missing'}; from {source})",
                    hint="" if present else f"{images_hint(pack.name)} (from Debian packages), or pull {image}",
                    required=False,
                )
            )
        return lines

    def _isolation_diagnostic(self) -> Diagnostic:
        found = self._host_isolation()
        name = "docker host isolation"
        if found.firewall is not None:
            tables = found.firewall.tables
            return Diagnostic(
                name=name,
                ok=True,
                detail=(
                    "network-policy guests are firewalled from host services "
                    f"({tables.iptables}{', ' + tables.ip6tables if tables.ip6tables else ''})"
                ),
                required=False,
            )
        detail = f"guests on network-policy runs can reach host services on the bridge gateway: {found.reason}"
        if host_reach_allowed():
            return Diagnostic(
                name=name,
                ok=False,
                detail=f"{detail}; allowed by {ALLOW_ENV}=1",
                hint="run as root (CAP_NET_ADMIN, iptables, rootful Docker) so the bridges can be firewalled",
                required=False,
            )
        return Diagnostic(
            name=name,
            ok=False,
            detail=f"{detail}; network-policy runs are refused",
            hint=f"run as root (CAP_NET_ADMIN, iptables, rootful Docker), or set {ALLOW_ENV}=1 to accept the risk",
            required=False,
        )
