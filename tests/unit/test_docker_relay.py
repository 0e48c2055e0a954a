"""The serve relay and its admission check, without a daemon (issue #12, item 4).

A fake namespace hands out ordinary host sockets, so the relay's own logic -
who is admitted, when it listens, how bytes and half-closes flow, how it
stops - is tested here against a local echo server standing in for the guest.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from backends.docker import guestnet
from backends.docker.relay import PortRelay

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")

#: Another process: connect, send, print what came back or the error.
CLIENT = """
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    s.sendall(b"ping")
    print("answer", s.recv(100))
except OSError as exc:
    print("error", type(exc).__name__)
"""


class HostNetns:
    """Stands in for ``GuestNetns``: sockets in the host's namespace."""

    def socket(self) -> socket.socket:
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM)


@pytest.fixture
async def guest_port() -> AsyncIterator[socket.socket]:
    """A bound, not yet listening socket: the guest's port before its server is up."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield sock
    sock.close()


async def echo_on(sock: socket.socket) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.write(b"<eof>")
        writer.close()

    sock.listen()
    return await asyncio.start_server(handle, sock=sock)


async def refused(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return True
    writer.close()
    return False


async def test_listens_only_once_the_guest_does_then_relays_with_half_close(guest_port: socket.socket) -> None:
    relay = PortRelay(HostNetns(), guest_port.getsockname()[1], asyncio.get_running_loop())  # type: ignore[arg-type]
    try:
        await asyncio.sleep(0.1)
        assert await refused(relay.address.port)  # readiness stays truthful
        server = await echo_on(guest_port)
        for _ in range(100):
            if not await refused(relay.address.port):
                break
            await asyncio.sleep(0.05)
        reader, writer = await asyncio.open_connection(relay.address.host, relay.address.port)
        writer.write(b"hello")
        await writer.drain()
        assert await reader.readexactly(5) == b"hello"
        writer.write_eof()  # the guest sees EOF and answers after it
        assert await asyncio.wait_for(reader.read(), 5) == b"<eof>"
        writer.close()
        assert relay.refused == 0
        server.close()
    finally:
        relay.close()


async def test_another_process_is_reset_and_counted(guest_port: socket.socket) -> None:
    server = await echo_on(guest_port)
    relay = PortRelay(HostNetns(), guest_port.getsockname()[1], asyncio.get_running_loop())  # type: ignore[arg-type]
    try:
        while await refused(relay.address.port):
            await asyncio.sleep(0.02)
        done = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-c", CLIENT, str(relay.address.port)], capture_output=True, text=True
        )
        assert done.stdout.startswith("error"), done.stdout + done.stderr
        assert relay.refused == 1
        # while this process still gets through
        reader, writer = await asyncio.open_connection(relay.address.host, relay.address.port)
        writer.write(b"x")
        assert await reader.readexactly(1) == b"x"
        writer.close()
    finally:
        relay.close()
        server.close()


async def test_close_from_another_thread_stops_everything(guest_port: socket.socket) -> None:
    server = await echo_on(guest_port)
    relay = PortRelay(HostNetns(), guest_port.getsockname()[1], asyncio.get_running_loop())  # type: ignore[arg-type]
    while await refused(relay.address.port):
        await asyncio.sleep(0.02)
    reader, writer = await asyncio.open_connection(relay.address.host, relay.address.port)
    writer.write(b"x")
    assert await reader.readexactly(1) == b"x"
    closer = threading.Thread(target=relay.close)
    closer.start()
    closer.join()
    relay.close()  # idempotent
    assert await asyncio.wait_for(reader.read(), 5) in (b"", b"<eof>")
    assert await refused(relay.address.port)
    writer.close()
    server.close()


async def test_client_owner_tells_ours_from_gone() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname())
    conn, _ = listener.accept()
    assert guestnet.client_owner(conn) == "ours"
    client.close()
    await asyncio.sleep(0.05)
    assert guestnet.client_owner(conn) == "gone"
    conn.close()
    listener.close()


def test_socket_inode_reads_the_kernel_table(tmp_path: Path) -> None:
    table = tmp_path / "tcp"
    table.write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 4242 1\n"
    )
    local = ("127.0.0.1", 0x1F90)
    remote = ("127.0.0.1", 0xA000)
    if sys.byteorder == "little":
        assert guestnet.socket_inode(local, remote, table) == 4242
    assert guestnet.socket_inode(remote, local, table) == 0
    assert guestnet.socket_inode(local, remote, tmp_path / "missing") == 0


def test_serving_needs_the_guests_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guestnet, "has_capability", lambda bit: False)
    why = guestnet.netns_unavailable_reason(socket_path="/var/run/docker.sock", rootless=False)
    assert why is not None and "CAP_SYS_ADMIN" in why
    assert "rootless" in (guestnet.netns_unavailable_reason(socket_path="/x", rootless=True) or "")
    assert "not local" in (guestnet.netns_unavailable_reason(socket_path=None, rootless=False) or "")
    monkeypatch.setattr(guestnet, "has_capability", lambda bit: bit == guestnet.CAP_SYS_ADMIN)
    assert guestnet.netns_unavailable_reason(socket_path="/var/run/docker.sock", rootless=False) is None


def test_the_firewall_opt_in_does_not_make_serving_possible(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1`` used to let a non-root user serve over a bridge the host could
    reach; there is no such path any more: without the namespace, serving is refused."""
    from backends.docker import DockerBackend, isolation
    from backends.docker.hostfirewall import ALLOW_ENV
    from playground.packs import node

    monkeypatch.setenv(ALLOW_ENV, "1")
    monkeypatch.setattr(isolation, "netns_unavailable_reason", lambda **_: "no CAP_SYS_ADMIN here")
    docker = DockerBackend()
    monkeypatch.setattr(docker, "unavailable_reason", lambda pack: None)
    endpoint = SimpleNamespace(socket_path="/var/run/docker.sock", source="default socket")
    monkeypatch.setattr(docker._probe, "get", lambda: SimpleNamespace(endpoint=endpoint, reason=None))
    docker.refresh()
    assert docker.serve_unavailable_reason(node.PACK) == "no CAP_SYS_ADMIN here"
