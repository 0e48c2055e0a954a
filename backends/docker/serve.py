"""``DockerGuestService``: a guest server in a hardened container that only the proxy can reach.

The container is set up like a run (inputs through the stdin tar, see
``wrapper.serve_script``) with two differences: RLIMIT_CPU is left out (the
service's TTL bounds its life), and the program is ``exec``'d, so there is no
trailer and no ``/out``. Guest stdout/stderr stream into the ``LogBuffer`` as
they come.

How the proxy reaches it (issue #12, item 4): the container has *no*
network (``network_mode=none``, like a run), so neither the host nor another
container has any route to it, and it has none out. The proxy's upstream is
a ``relay.PortRelay`` per exposed port: a 127.0.0.1 port of this process
that admits only this process's own connections and joins each to a socket
made inside the guest's network namespace (``guestnet``). Serving therefore
needs to be root on a local rootful daemon (``unavailable_reason``).

``stop()`` closes the relays, then kills and removes the container; it is
idempotent, and every failure path during start does the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import Final

from backends.docker.engine import Attachment, ContainerState, Engine, EngineError
from backends.docker.guestnet import GuestNetns, NetnsError
from backends.docker.profile import EngineKind, long_lived_profile
from backends.docker.relay import PortRelay
from backends.docker.wrapper import for_request, input_archive, serve_script
from playground.core import LogBuffer, MemoryLimitExceeded, Outcome, ServeError, ServeRequest, TCPAddress

log = logging.getLogger(__name__)

#: How often the log reader wakes up.
POLL: Final = 0.2


class DockerGuestService:
    """A running guest server. ``wait`` and ``stop`` belong to ``loop``, the loop that started it."""

    def __init__(
        self,
        *,
        engine: Engine,
        container: str,
        netns: GuestNetns,
        attachment: Attachment,
        logs: LogBuffer,
        memory: int | None,
        loop: asyncio.AbstractEventLoop,
        podman: bool = False,
    ) -> None:
        self.container = container
        self.netns = netns
        #: One relay per exposed guest port, made by ``upstream`` (on ``loop``).
        self.relays: dict[int, PortRelay] = {}
        self._engine = engine
        self._attachment = attachment
        self._logs = logs
        self._memory = memory
        self._podman = podman
        self._loop = loop
        self._exited = asyncio.Event()
        self._reader = threading.Thread(target=self._read, name="docker-serve-logs", daemon=True)
        self._stopping: asyncio.Task[None] | None = None
        self._teardown_lock = threading.Lock()
        self._torn_down = False

    def start_reading(self) -> None:
        self._reader.start()

    def upstream(self, guest_port: int) -> TCPAddress:
        """The relay's address for ``guest_port``: it admits only this process (call it on ``loop``).

        Raises:
            ServeError: the service is stopping.
        """
        with self._teardown_lock:
            if self._torn_down:
                raise ServeError("the service is stopping")
            relay = self.relays.get(guest_port)
            if relay is None:
                relay = self.relays[guest_port] = PortRelay(self.netns, guest_port, self._loop)
        return relay.address

    def _read(self) -> None:
        try:
            for stream_id, data in self._attachment.frames(POLL):
                if stream_id == 2:
                    self._logs.write_stderr(data)
                elif stream_id == 1:
                    self._logs.write_stdout(data)
        except OSError as exc:
            log.debug("service log stream ended: %s", exc)
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                self._loop.call_soon_threadsafe(self._exited.set)

    async def wait(self) -> Outcome:
        """Return when the guest exits on its own.

        Raises:
            MemoryLimitExceeded: the container was OOM-killed.
            ServeError: the container vanished (it was stopped), or, on Podman, the server was SIGKILLed:
                Podman (4.3) reports no OOM kill, so the likely memory limit is named, not asserted.
        """
        await self._exited.wait()
        try:
            state = await asyncio.to_thread(self._final_state)
        except EngineError as exc:
            raise ServeError(f"the service's container is gone: {exc}") from exc
        if state.oom_killed:
            raise MemoryLimitExceeded(
                f"memory limit of {self._memory} bytes exceeded; the server was OOM-killed",
                outcome=Outcome(exit_code=state.exit_code),
            )
        if self._podman and self._memory is not None and state.exit_code == 128 + 9:
            raise ServeError(
                f"the guest server was killed (SIGKILL, exit code 137): most likely by its memory limit of "
                f"{self._memory} bytes, which Podman does not report"
            )
        return Outcome(exit_code=state.exit_code)

    def _final_state(self) -> ContainerState:
        self._engine.wait(self.container, timeout=30.0)
        return self._engine.state(self.container)

    async def stop(self) -> None:
        """Close the relays, kill and remove the container. Idempotent; concurrent calls share one stop."""
        if self._stopping is None:
            self._stopping = self._loop.create_task(asyncio.to_thread(self._teardown))
        await asyncio.shield(self._stopping)

    def _teardown(self) -> None:
        """Blocking, idempotent, never raises."""
        with self._teardown_lock:
            if self._torn_down:
                return
            self._torn_down = True
            relays = list(self.relays.values())
        for relay in relays:
            relay.close()
        self.netns.close()
        try:
            self._engine.remove(self.container)
        except EngineError:
            log.warning("could not remove service container %s", self.container[:12], exc_info=True)
        self._attachment.close()
        self._reader.join(timeout=10.0)


def start_guest_service(
    engine: Engine,
    *,
    image: str,
    kind: EngineKind,
    request: ServeRequest,
    loop: asyncio.AbstractEventLoop,
) -> DockerGuestService:
    """Create the container (no network), start it, feed its inputs and open its network namespace (blocking).

    On any failure the container is removed before the error leaves.

    Raises:
        EngineError: the daemon refused, or the guest's namespace could not be entered.
    """
    assert request.pack.docker is not None
    spec = for_request(request.pack.docker, request.spec)
    archive = input_archive(request.vfs, spec, request.spec.code_bytes, request.stdin)
    argv = ["/bin/sh", "-c", serve_script(spec, request.spec.args)]
    profile = long_lived_profile(request.limits, spec, kind)
    container = engine.create(image, argv, profile, request.spec.env)
    try:
        attachment = engine.attach(container)
        try:
            engine.start(container)
            attachment.send_and_close_stdin(archive)
            try:
                netns = GuestNetns.open(engine, container)
            except NetnsError as exc:
                raise EngineError(f"cannot reach the guest: {exc}") from exc
            try:
                service = DockerGuestService(
                    engine=engine,
                    container=container,
                    netns=netns,
                    attachment=attachment,
                    logs=request.logs,
                    memory=request.limits.memory_cap,
                    loop=loop,
                    podman=kind is EngineKind.PODMAN,
                )
            except BaseException:
                netns.close()
                raise
        except BaseException:
            attachment.close()
            raise
        service.start_reading()
        return service
    except BaseException:
        with contextlib.suppress(EngineError):
            engine.remove(container)
        raise
