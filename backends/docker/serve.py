"""``DockerGuestService``: a guest server in a hardened container on its own internal network.

The container is set up like a run (inputs through the stdin tar, see
``wrapper.serve_script``) with three differences: it sits on a fresh
``internal`` network (``networks``; firewalled off from the host's own
services by ``hostfirewall`` when we may) instead of ``network_mode=none``,
RLIMIT_CPU is left out (the service's TTL bounds its life), and the program
is ``exec``'d, so there is no trailer and no ``/out``. The host-side proxy
reaches it at its address on that network (``upstream``). Guest
stdout/stderr stream into the ``LogBuffer`` as they come.

``stop()`` kills and removes the container, then the network; it is
idempotent, and every failure path during start does the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from typing import Final

from backends.docker.engine import Attachment, ContainerState, Engine, EngineError
from backends.docker.hostfirewall import HostFirewall
from backends.docker.networks import GuestNetwork, create_guest_network, isolate_from_host, remove_guest_network
from backends.docker.profile import EngineKind, long_lived_profile, on_network
from backends.docker.wrapper import input_archive, serve_script
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
        network: GuestNetwork,
        address: str,
        attachment: Attachment,
        logs: LogBuffer,
        memory: int | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.container = container
        self.network = network
        self.address = address
        self._engine = engine
        self._attachment = attachment
        self._logs = logs
        self._memory = memory
        self._loop = loop
        self._exited = asyncio.Event()
        self._reader = threading.Thread(target=self._read, name="docker-serve-logs", daemon=True)
        self._stopping: asyncio.Task[None] | None = None
        self._teardown_lock = threading.Lock()
        self._torn_down = False

    def start_reading(self) -> None:
        self._reader.start()

    def upstream(self, guest_port: int) -> TCPAddress:
        """The container's address on its internal network: reachable from the host only."""
        return TCPAddress(self.address, guest_port)

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
            ServeError: the container vanished (it was stopped).
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
        return Outcome(exit_code=state.exit_code)

    def _final_state(self) -> ContainerState:
        self._engine.wait(self.container, timeout=30.0)
        return self._engine.state(self.container)

    async def stop(self) -> None:
        """Kill and remove the container, then the network. Idempotent; concurrent calls share one stop."""
        if self._stopping is None:
            self._stopping = self._loop.create_task(asyncio.to_thread(self._teardown))
        await asyncio.shield(self._stopping)

    def _teardown(self) -> None:
        """Blocking, idempotent, never raises."""
        with self._teardown_lock:
            if self._torn_down:
                return
            self._torn_down = True
        try:
            self._engine.remove(self.container)
        except EngineError:
            log.warning("could not remove service container %s", self.container[:12], exc_info=True)
        self._attachment.close()
        self._reader.join(timeout=10.0)
        remove_guest_network(self._engine, self.network)


def start_guest_service(
    engine: Engine,
    *,
    image: str,
    kind: EngineKind,
    request: ServeRequest,
    loop: asyncio.AbstractEventLoop,
    firewall: HostFirewall | None = None,
) -> DockerGuestService:
    """Create the network (shielding the host from it with ``firewall``) and the container, start it,
    feed its inputs (blocking).

    On any failure the container and the network (and its firewall chain) are removed before the error leaves.
    """
    spec = request.pack.docker
    assert spec is not None
    network = create_guest_network(engine, "serve", firewall=firewall)
    container: str | None = None
    try:
        isolate_from_host(network)
        archive = input_archive(request.vfs, spec, request.spec.code_bytes, request.stdin, secrets.token_hex(16))
        argv = ["/bin/sh", "-c", serve_script(spec, request.spec.args)]
        profile = on_network(long_lived_profile(request.limits, spec, kind), network.name)
        container = engine.create(image, argv, profile, request.spec.env)
        attachment = engine.attach(container)
        try:
            engine.start(container)
            attachment.send_and_close_stdin(archive)
            address = engine.container_address(container, network.id)
            if not address:
                raise EngineError(f"the container got no address on {network.name}")
            service = DockerGuestService(
                engine=engine,
                container=container,
                network=network,
                address=address,
                attachment=attachment,
                logs=request.logs,
                memory=_opt_int(request.limits.get("memory")),
                loop=loop,
            )
        except BaseException:
            attachment.close()
            raise
        service.start_reading()
        return service
    except BaseException:
        if container is not None:
            with contextlib.suppress(EngineError):
                engine.remove(container)
        remove_guest_network(engine, network)
        raise


def _opt_int(value: int | float | None) -> int | None:
    return None if value is None else int(value)
