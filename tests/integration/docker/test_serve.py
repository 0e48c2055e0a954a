"""Serving on a real daemon through ``Sandbox.serve``: proxy, auth, isolation, crash, OOM, stop, TTL.

Network rule: the test client talks only to the proxy on 127.0.0.1; the
proxy talks only to its relay, which reaches the guest inside the guest's
own network namespace (the container has no network).
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from backends.docker.engine import Engine
from backends.docker.profile import EngineKind
from playground.core import Limits, MemoryLimitExceeded, Sandbox, ServeError, ServeOpts, Service, Spec
from playground.packs import node
from playground.serve import start_service_proxy

from .conftest import require_image

#: Podman's default capabilities (containers.conf), which its inspect lists as dropped for ``cap_drop=["ALL"]``.
PODMAN_DEFAULT_CAPS = {
    "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP",
    "SETUID", "SYS_CHROOT",
}  # fmt: skip

SERVER = """
const http = require('http');
const server = http.createServer((req, res) => {
  console.log('got', req.method, req.url);
  if (req.url === '/crash') { res.end('bye'); setTimeout(() => process.exit(3), 50); return; }
  if (req.url === '/hog') {
    res.end('hogging'); const a = []; setInterval(() => a.push(Buffer.alloc(8 << 20, 1)), 5); return;
  }
  res.setHeader('content-type', 'text/plain');
  res.end('hello from ' + require('os').hostname() + ' ' + req.url);
});
server.listen(8080, () => console.log('listening'));
"""


@pytest.fixture(autouse=True)
def node_image(engine: Engine) -> None:
    require_image(engine, node.PACK)


def guest_of(service: Service) -> object:
    return service._guest  # the DockerGuestService, for its container and relays


async def get(service: Service, path: str, *, token: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as client,
        client.get(service.url.rstrip("/") + path, headers=headers) as response,
    ):
        return response.status, await response.text()


async def test_node_server_through_the_proxy(sandbox: Sandbox, engine: Engine, no_network_leaks: None) -> None:
    started = time.monotonic()
    async with await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=60)) as service:
        assert service.url.startswith("http://127.0.0.1:") and service.backend == "docker"
        status, body = await get(service, "/hi", token=service.token)
        assert (status, body) == (200, "hello from sandbox /hi")
        first_response = time.monotonic() - started
        status, _ = await get(service, "/hi", token=None)
        assert status == 401
        status, _ = await get(service, "/hi", token="wrong")
        assert status == 401
        deadline = time.monotonic() + 5
        while "got GET /hi" not in service.logs():
            assert time.monotonic() < deadline, service.logs()
            await asyncio.sleep(0.05)
        assert service.logs().startswith("listening\n")
    assert first_response < 30
    assert service.done.is_set() and service.err is None


async def test_the_guest_has_no_network_at_all(sandbox: Sandbox, engine: Engine, no_network_leaks: None) -> None:
    """Issue #12: no bridge, no address, no published port: the proxy's relay is the only way in."""
    networks = {n.id for n in engine.networks()}
    async with await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=60)) as service:
        guest = guest_of(service)
        attrs = engine._api.inspect_container(guest.container)  # type: ignore[attr-defined]
        host = attrs["HostConfig"]
        assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] and not host.get("CapAdd")
        # Podman reports "drop ALL" as the list of its default capabilities, all dropped.
        assert host["CapDrop"] == ["ALL"] or set(host["CapDrop"]) >= PODMAN_DEFAULT_CAPS
        assert host["PortBindings"] in (None, {})  # nothing published on the host
        endpoints = attrs["NetworkSettings"]["Networks"] or {}
        assert set(endpoints) <= {"none"}
        assert not any(e.get("IPAddress") or e.get("GlobalIPv6Address") for e in endpoints.values())
        assert {n.id for n in engine.networks()} == networks  # serving made no network
        relay = guest.relays[8080]  # type: ignore[attr-defined]
        assert relay.address.host == "127.0.0.1"
        assert (await get(service, "/hi", token=service.token)) == (200, "hello from sandbox /hi")


async def test_guest_crash_ends_the_service(sandbox: Sandbox, engine: Engine, no_network_leaks: None) -> None:
    before = set(engine.containers())
    service = await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=60))
    try:
        assert (await get(service, "/crash", token=service.token))[0] == 200
        err = await asyncio.wait_for(service.wait(), 20)
        assert isinstance(err, ServeError) and "code 3" in str(err)
        assert service.outcome is not None and service.outcome.exit_code == 3
    finally:
        await service.stop()
    assert set(engine.containers()) == before


async def test_guest_oom_is_memory_limit_exceeded(
    sandbox: Sandbox, engine_kind: EngineKind, no_network_leaks: None
) -> None:
    spec = Spec(lang="node", code=SERVER, limits=Limits(memory=96 << 20))
    async with await sandbox.serve(spec, ServeOpts(ttl=60)) as service:
        assert (await get(service, "/hog", token=service.token))[0] == 200
        err = await asyncio.wait_for(service.wait(), 30)
        if engine_kind is EngineKind.PODMAN:  # no OOMKilled from Podman 4.3: the likely cause is named
            assert isinstance(err, ServeError) and "most likely by its memory limit" in str(err)
        else:
            assert isinstance(err, MemoryLimitExceeded)


async def test_stop_removes_container_and_relays(sandbox: Sandbox, engine: Engine, no_network_leaks: None) -> None:
    containers = set(engine.containers())
    networks = {n.id for n in engine.networks()}
    service = await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=60))
    assert len(set(engine.containers()) - containers) == 1
    assert {n.id for n in engine.networks()} == networks
    url = service.url
    relay = guest_of(service).relays[8080].address  # type: ignore[attr-defined]
    await asyncio.gather(service.stop(), service.stop())
    await service.stop()
    assert set(engine.containers()) == containers
    assert service.done.is_set() and service.err is None
    with pytest.raises(aiohttp.ClientError):
        async with aiohttp.ClientSession() as client, client.get(url):
            pass
    deadline = time.monotonic() + 5
    while True:  # the relay closes on the loop, right after stop
        try:
            _, writer = await asyncio.open_connection(relay.host, relay.port)
        except OSError:
            break
        writer.close()
        assert time.monotonic() < deadline, "the relay still listens after stop"
        await asyncio.sleep(0.05)


async def test_ttl_stops_everything(sandbox: Sandbox, engine: Engine, no_network_leaks: None) -> None:
    containers = set(engine.containers())
    service = await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=1.5))
    assert (await get(service, "/", token=service.token))[0] == 200
    await asyncio.wait_for(service.done.wait(), 20)
    assert set(engine.containers()) == containers


async def test_server_that_never_listens_is_not_ready(sandbox: Sandbox, engine: Engine, no_network_leaks: None) -> None:
    from playground.core import ServiceNotReady, TCPReady

    containers = set(engine.containers())
    with pytest.raises(ServiceNotReady):
        await sandbox.serve(Spec(lang="node", code="setInterval(() => {}, 1000)"), ServeOpts(ready=TCPReady(timeout=2)))
    assert set(engine.containers()) == containers


async def test_backend_close_stops_running_services(engine: Engine, no_network_leaks: None) -> None:
    from backends.docker import DockerBackend
    from playground.core import DOCKER_ONLY

    from .conftest import PACKS, TEST_LIMITS

    containers = set(engine.containers())
    backend = DockerBackend(packs=PACKS)
    sandbox = Sandbox(
        backends=[backend],
        packs=PACKS,
        policy=DOCKER_ONLY,
        default_limits=TEST_LIMITS,
        proxy_starter=start_service_proxy,
    )
    service = await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=60))
    sandbox.close()
    assert set(engine.containers()) == containers
    await service.stop()
