"""Guests on our networks cannot reach host services: the per-bridge firewall chain (``hostfirewall``).

A ``NetPolicy`` run tries to connect to two listeners of the host: one bound
to 0.0.0.0 and one bound to its bridge's gateway address. Both must be
refused (and accept nothing), while the run still reaches its egress proxy.
After stop, nothing of the chain is left in ``iptables -S``. A served guest
has no network at all since issue #12: it tries the host's listener through
the host's address on Docker's default bridge and gets no route.

Network rule: the guests connect only to the host's address on a bridge
(the one the test created, or Docker's default); the test client talks only
to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import pytest

from backends.docker import egress as egress_module
from backends.docker.engine import Engine
from backends.docker.hostfirewall import HostFirewall, chain_name, detect
from backends.docker.networks import GuestNetwork, create_guest_network, remove_guest_network
from playground.core import NetPolicy, Sandbox, ServeOpts, Service, Spec
from playground.packs import node

from .conftest import require_image

#: Every test here must leave no network of ours behind.
pytestmark = pytest.mark.usefixtures("no_network_leaks")

SECRET = b"HOST-SECRET\n"

#: A node server whose /probe?host=H&port=P tries one TCP connection (2 s timeout) and says how it went.
PROBING_SERVER = """
const http = require('http'), net = require('net');
function probe(host, port) {
  return new Promise(done => {
    const s = net.connect({host, port: Number(port)});
    let data = '';
    s.setTimeout(2000, () => { s.destroy(); done('timeout'); });
    s.on('data', d => { data += d; });
    s.on('connect', () => setTimeout(() => { s.destroy(); done('connected ' + data.trim()); }, 300));
    s.on('error', e => done(e.code || String(e)));
  });
}
http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const q = url.searchParams;
  res.end(url.pathname === '/probe' ? await probe(q.get('host'), q.get('port')) : 'ok');
}).listen(8080);
"""


def probing_run(targets: list[tuple[str, int]]) -> str:
    """Node code for a NetPolicy run: probe each (host, port) - "GW" meaning the gateway - and print JSON."""
    return (
        "const net = require('net'); const gw = new URL(process.env.HTTP_PROXY).hostname;"
        f"const targets = {json.dumps(targets)};"
        "function probe([h, port]) { const host = h === 'GW' ? gw : h; return new Promise(done => {"
        " const s = net.connect({host, port}); let data = '';"
        " s.setTimeout(2000, () => { s.destroy(); done('timeout'); });"
        " s.on('data', d => { data += d; });"
        " s.on('connect', () => setTimeout(() => { s.destroy(); done('connected ' + data.trim()); }, 300));"
        " s.on('error', e => done(e.code || String(e))); }); }"
        "Promise.all(targets.map(probe)).then(r => console.log(JSON.stringify(r)));"
    )


@dataclass
class HostListener:
    """A tiny asyncio server on the host that hands out a secret and counts connections."""

    server: asyncio.Server
    port: int
    accepted: list[str] = field(default_factory=list)


async def listen(host: str, port: int = 0) -> HostListener:
    accepted: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(str(writer.get_extra_info("peername")))
        writer.write(SECRET)
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, host, port)
    bound = server.sockets[0].getsockname()[1]
    return HostListener(server=server, port=int(bound), accepted=accepted)


def iptables_listing() -> str:
    assert isinstance(FIREWALL, HostFirewall)
    tables = FIREWALL.tables
    out = []
    for binary in (tables.iptables, tables.ip6tables):
        if binary:
            done = subprocess.run([binary, "-w", "10", "-S"], capture_output=True, text=True, check=True)
            out.append(done.stdout)
    return "\n".join(out)


def rules_for(bridge: str) -> list[str]:
    chain = chain_name(bridge)
    assert chain is not None
    return [line for line in iptables_listing().splitlines() if chain in line or bridge in line]


FIREWALL = detect().firewall


@pytest.fixture(autouse=True)
def need_firewall(engine: Engine) -> None:
    require_image(engine, node.PACK)
    if FIREWALL is None:
        why = detect().reason
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI runs as root and must be able to firewall the bridges: {why}")
        pytest.skip(f"cannot firewall the bridges here: {why}")


@pytest.fixture
async def wildcard() -> AsyncIterator[HostListener]:
    listener = await listen("0.0.0.0")
    yield listener
    listener.server.close()
    await listener.server.wait_closed()


async def get(service: Service, path: str) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {service.token}"}
    async with (
        aiohttp.ClientSession() as client,
        client.get(service.url.rstrip("/") + path, headers=headers) as response,
    ):
        return response.status, await response.text()


async def test_served_guest_cannot_reach_host_services(
    sandbox: Sandbox, engine: Engine, wildcard: HostListener
) -> None:
    """A served guest has no network since issue #12: no route to the host at all, firewall or not."""
    docker0 = [n for n in engine.networks() if n.name == "bridge"]
    gateway = str(ipaddress.ip_network(docker0[0].subnets[0]).network_address + 1) if docker0 else "172.17.0.1"
    async with await sandbox.serve(Spec(lang="node", code=PROBING_SERVER), ServeOpts(ttl=60)) as service:
        # The host can reach its listener (it is real), and the reverse proxy reaches the guest.
        reader, writer = await asyncio.open_connection("127.0.0.1", wildcard.port)
        assert await reader.readline() == SECRET
        writer.close()
        assert await get(service, "/") == (200, "ok")
        seen = len(wildcard.accepted)
        loop = asyncio.get_running_loop()
        for host, port, expected in (
            (gateway, wildcard.port, "ENETUNREACH"),  # the host's address on Docker's default bridge
            (gateway, 22, "ENETUNREACH"),
            ("127.0.0.1", wildcard.port, "ECONNREFUSED"),  # the guest's own loopback, not the host's
        ):
            started = loop.time()
            status, body = await get(service, f"/probe?host={host}&port={port}")
            assert (status, body) == (200, expected), (host, port)
            assert loop.time() - started < 2.0
        assert len(wildcard.accepted) == seen


async def test_netpolicy_run_reaches_only_its_egress_proxy(
    sandbox: Sandbox, wildcard: HostListener, monkeypatch: pytest.MonkeyPatch, network_policy_supported: None
) -> None:
    # The gateway listener must exist before the guest starts: bind it right after the firewall is in place,
    # on a port reserved on 127.0.0.1 (a specific address, so the gateway's same port stays free).
    reserve = socket.socket()
    reserve.bind(("127.0.0.1", 0))
    port = int(reserve.getsockname()[1])
    loop = asyncio.get_running_loop()
    made: list[tuple[GuestNetwork, HostListener]] = []
    real = egress_module.isolate_from_host

    def isolate_then_listen(network: GuestNetwork, *, proxy_port: int | None = None) -> None:
        real(network, proxy_port=proxy_port)
        assert network.firewall is not None and proxy_port is not None
        listener = asyncio.run_coroutine_threadsafe(listen(network.gateway, port), loop).result(10)
        made.append((network, listener))

    monkeypatch.setattr(egress_module, "isolate_from_host", isolate_then_listen)
    try:
        code = probing_run([["GW", wildcard.port], ["GW", port], ["GW", 22]])  # type: ignore[list-item]
        result = await sandbox.run(Spec(lang="node", code=code, net=NetPolicy(allow_hosts=("x.test",))))
    finally:
        reserve.close()
        for _, listener in made:
            listener.server.close()
            await listener.server.wait_closed()
    [(network, on_gateway)] = made
    assert json.loads(result.stdout) == ["ECONNREFUSED"] * 3, result.stderr
    assert wildcard.accepted == [] and on_gateway.accepted == []
    assert rules_for(network.bridge) == []


async def test_netpolicy_run_still_reaches_its_proxy(sandbox: Sandbox, network_policy_supported: None) -> None:
    code = (
        "const net = require('net'); const u = new URL(process.env.HTTP_PROXY);"
        "const s = net.connect({host: u.hostname, port: Number(u.port)});"
        "s.setTimeout(2000, () => { console.log('timeout'); s.destroy(); });"
        "s.on('connect', () => { console.log('connected'); s.destroy(); });"
        "s.on('error', e => console.log(e.code));"
    )
    result = await sandbox.run(Spec(lang="node", code=code, net=NetPolicy(allow_hosts=("x.test",))))
    assert result.stdout == b"connected\n", result.stderr


async def test_a_crashed_runs_chain_is_swept(engine: Engine) -> None:
    """A ``PG-*`` chain whose network is gone (a crash) disappears at the next network creation."""
    assert FIREWALL is not None
    bridge = "pgbr-dead0c0ffe"
    chain = chain_name(bridge)
    assert chain is not None
    binary = FIREWALL.tables.iptables
    try:
        for args in (["-N", chain], ["-A", chain, "-j", "DROP"], ["-I", "INPUT", "1", "-i", bridge, "-j", chain]):
            subprocess.run([binary, "-w", "10", *args], check=True, capture_output=True)
        assert rules_for(bridge)
        network = await asyncio.to_thread(create_guest_network, engine, "serve", firewall=FIREWALL)
        try:
            assert rules_for(bridge) == []
        finally:
            await asyncio.to_thread(remove_guest_network, engine, network)
    finally:
        FIREWALL.unguard(bridge)
    assert rules_for(bridge) == []
