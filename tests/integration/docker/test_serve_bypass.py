"""Issue #12, item 4: a served Docker guest is reachable only through the proxy.

The attack: a host process (or a DNS-rebinding page in the user's browser)
connects straight to the served container's address, sends ``Host:
evil.com`` and no token, and gets the guest's answer - bypassing the proxy's
token, ``Host`` check and rate limit. Before the fix the container sat on an
internal bridge whose gateway is the host, so that worked. Now the container
has no network and the proxy's upstream is a relay that admits only this
process's own sockets. Tried here from the host (by every address the
container has, and by the relay's address from another process), from a
container on Docker's default bridge, and from containers attached to every
network the guest is on.

Network rule: the test talks to 127.0.0.1, to the project's own containers
and, from a helper container, to the host's address on Docker's bridge.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from backends.docker.engine import Engine
from backends.docker.images import env_var
from playground.core import Sandbox, ServeOpts, Service, Spec
from playground.packs import bash, node

from .conftest import require_image
from .test_serve import SERVER, get

#: What the guest answers; never seen by anyone who bypasses the proxy.
ANSWER = b"hello from sandbox"
#: A request as a rebinding page or a local process would send it: foreign Host, no token.
EVIL = b"GET /secret HTTP/1.1\r\nHost: evil.com\r\nConnection: close\r\n\r\n"

#: Another process on the host: connect, send EVIL, print what came back (or the error).
CLIENT = """
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    s.sendall(sys.argv[3].encode('latin1'))
    data = b''
    while chunk := s.recv(65536):
        data += chunk
    print('answer', data[:200])
except OSError as exc:
    print('error', type(exc).__name__, exc)
"""

#: A helper container: try each "host port" with the evil request, print what came back.
HELPER = r"""
for target in "$@"; do
  out=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1#*:}" && printf "%b" "$2" >&3 && cat <&3' _ "$target" \
        'GET /secret HTTP/1.1\r\nHost: evil.com\r\nConnection: close\r\n\r\n' 2>&1 | head -c 300)
  echo "$target => ${out:-nothing}"
done
"""


@pytest.fixture
async def service(sandbox: Sandbox, engine: Engine) -> AsyncIterator[Service]:
    require_image(engine, node.PACK)
    async with await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=120)) as served:
        # The proxy itself works, and guards: a valid request passes, a tokenless one does not.
        assert await get(served, "/hi", token=served.token) == (200, "hello from sandbox /hi")
        assert (await get(served, "/hi", token=None))[0] == 401
        yield served


def guest_addresses(engine: Engine, container: str) -> dict[str, str]:
    """Every IP address the container has, by network name."""
    attrs = engine._api.inspect_container(container)  # type: ignore[attr-defined]
    found = {}
    for name, endpoint in (attrs["NetworkSettings"]["Networks"] or {}).items():
        for key in ("IPAddress", "GlobalIPv6Address"):
            if endpoint.get(key):
                found[f"{name}/{key}"] = str(endpoint[key])
    return found


async def other_process(host: str, port: int) -> str:
    """What a different host process gets back for EVIL at host:port."""
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", CLIENT, host, str(port), EVIL.decode("latin1")],
        capture_output=True,
        text=True,
        timeout=20,
    )
    return done.stdout + done.stderr


def helper_container(engine: Engine, network: str, targets: list[str]) -> str:
    """Run the helper on ``network`` (a bridge) against ``targets`` and return its output."""
    require_image(engine, bash.PACK)
    api = engine._api  # type: ignore[attr-defined]
    created = api.create_container(
        os.environ[env_var("bash")],
        entrypoint=["bash", "-c", HELPER, "helper", *targets],
        command=[],
        # Explicit nofile and nproc: Podman's defaults (1048576) are refused where the daemon's own limits are lower.
        host_config=api.create_host_config(
            network_mode=network, cap_drop=["ALL"], read_only=True,
            ulimits=[{"name": "nofile", "soft": 1024, "hard": 1024}, {"name": "nproc", "soft": 4096, "hard": 4096}],
        ),
    )
    try:
        api.start(created["Id"])
        api.wait(created["Id"], timeout=60)
        return str(api.logs(created["Id"]).decode("utf-8", "replace"))
    finally:
        api.remove_container(created["Id"], force=True)


async def test_host_cannot_bypass_the_proxy_by_the_container_address(service: Service, engine: Engine) -> None:
    """The attack as reported: connect to the container's IP with a bad Host and no token."""
    guest = service._guest  # type: ignore[attr-defined]
    addresses = guest_addresses(engine, guest.container)
    for where, address in addresses.items():
        for client in ("this process", "another process"):
            if client == "another process":
                got = await other_process(address, 8080)
            else:
                try:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(address, 8080), 3)
                    writer.write(EVIL)
                    got = str(await asyncio.wait_for(reader.read(), 3))
                    writer.close()
                except (OSError, TimeoutError) as exc:
                    got = repr(exc)
            assert ANSWER.decode() not in got, f"{client} bypassed the proxy via {where} {address}: {got}"
    # And there is nothing to try: the guest has no address on any network.
    assert addresses == {}, addresses
    attrs = engine._api.inspect_container(guest.container)  # type: ignore[attr-defined]
    assert attrs["HostConfig"]["NetworkMode"] == "none"


async def test_another_host_process_cannot_use_the_proxys_upstream(service: Service) -> None:
    """The proxy's upstream (the relay) serves this process only: a browser or a local tool gets a reset."""
    guest = service._guest  # type: ignore[attr-defined]
    upstream = guest.upstream(8080)  # what the proxy connects to
    got = await other_process(upstream.host, upstream.port)
    assert ANSWER.decode() not in got and "error" in got, got
    assert guest.relays[8080].refused == 1
    # This process (the proxy's) is served; through the proxy the token and Host checks hold.
    reader, writer = await asyncio.open_connection(upstream.host, upstream.port)
    writer.write(b"GET /direct HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert ANSWER in await asyncio.wait_for(reader.read(), 5)
    writer.close()
    # A rebinding page reaching the proxy itself (it sends its own Host, and has no token) is refused too.
    proxy = service.url.split("//", 1)[1].rstrip("/")
    host, port = proxy.rsplit(":", 1)
    got = await other_process(host, int(port))
    assert ANSWER.decode() not in got and ("421" in got or "401" in got), got


async def test_other_containers_cannot_reach_the_guest(service: Service, engine: Engine) -> None:
    """From Docker's default bridge (by the guest's addresses and the host's bridge address at the relay and
    proxy ports), and from a container attached to each network the guest is on."""
    guest = service._guest  # type: ignore[attr-defined]
    addresses = guest_addresses(engine, guest.container)
    relay = guest.upstream(8080)
    proxy_port = int(service.url.rstrip("/").rsplit(":", 1)[1])
    bridge = [n for n in engine.networks() if n.name == "bridge"]
    targets = [f"{a}:8080" for a in addresses.values() if ":" not in a]
    if bridge and bridge[0].subnets:
        gateway = ipaddress.ip_network(bridge[0].subnets[0]).network_address + 1
        targets += [f"{gateway}:{relay.port}", f"{gateway}:{proxy_port}"]
    assert targets, "nothing to try from the default bridge"
    out = await asyncio.to_thread(helper_container, engine, "bridge", targets)
    assert out.count("=>") == len(targets), out
    assert ANSWER.decode() not in out, out
    attrs = engine._api.inspect_container(guest.container)  # type: ignore[attr-defined]
    attached = [n for n in (attrs["NetworkSettings"]["Networks"] or {}) if n != "none"]
    for network in attached:
        inside = [f"{a}:8080" for where, a in addresses.items() if where.startswith(network + "/") and ":" not in a]
        out = await asyncio.to_thread(helper_container, engine, network, inside)
        assert ANSWER.decode() not in out, f"a container on {network} reached the guest: {out}"
    assert attached == [], "the guest is attached to a network another container could join"
