"""The egress proxy against a real upstream on 127.0.0.1.

Network rule: every socket here goes to 127.0.0.0/8. Names are answered by a
fake resolver; "public" addresses only ever reach the guard or a recording
connector that redirects to the local test server - they are never contacted.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
from collections.abc import AsyncIterator, Sequence

import pytest
from aiohttp import web

from playground.core import NetPolicy
from playground.net import EgressProxy, direct_connector, start_egress_proxy
from playground.net.guard import IPAddress

PUBLIC = "93.184.216.34"  # checked by the guard only; the recording connector never dials it
BIG = 100_000


class FakeResolver:
    """Answers from a table; a list of answers is consumed one per call (the last one repeats)."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        answers = self.table.get(host)
        if not answers:
            raise OSError(f"fake resolver: no such name {host}")
        return answers.pop(0) if len(answers) > 1 else answers[0]


class RecordingConnector:
    """Records the pinned address; dials it only if it is loopback, else the local test server."""

    def __init__(self, local_port: int) -> None:
        self.local_port = local_port
        self.dialed: list[tuple[IPAddress, int]] = []

    async def __call__(self, address: IPAddress, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        self.dialed.append((address, port))
        if address.is_loopback:
            return await direct_connector(address, port)
        return await asyncio.open_connection("127.0.0.1", self.local_port)


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[int, list[str]]]:
    """A small HTTP server on 127.0.0.1; yields (port, list of Host headers seen)."""
    hosts: list[str] = []

    async def hello(request: web.Request) -> web.Response:
        hosts.append(request.headers.get("Host", ""))
        assert "Proxy-Authorization" not in request.headers
        return web.Response(text="hello")

    async def big(request: web.Request) -> web.Response:
        return web.Response(body=b"x" * BIG)

    async def echo(request: web.Request) -> web.Response:
        return web.Response(body=await request.read())

    app = web.Application()
    app.router.add_get("/hello", hello)
    app.router.add_get("/big", big)
    app.router.add_post("/echo", echo)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield port, hosts
    finally:
        await runner.cleanup()


async def raw(proxy: EgressProxy, data: bytes, *, tunnel_then: bytes | None = None) -> tuple[int, bytes]:
    """Send ``data`` to the proxy; return (status, everything read until EOF).

    With ``tunnel_then``, ``data`` is a CONNECT; after a 200, send ``tunnel_then`` through the tunnel.
    """
    host, port = proxy.address
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(data)
        await writer.drain()
        if tunnel_then is not None:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            status = int(head.split(b" ", 2)[1])
            if status != 200:
                return status, head + await asyncio.wait_for(reader.read(), 10)
            writer.write(tunnel_then)
            await writer.drain()
            return status, await asyncio.wait_for(_read_all(reader), 10)
        blob = await asyncio.wait_for(_read_all(reader), 10)
        return int(blob.split(b" ", 2)[1]), blob
    finally:
        writer.close()


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    try:
        while chunk := await reader.read(65536):
            chunks.append(chunk)
    except ConnectionError:
        pass
    return b"".join(chunks)


def get(url: str, extra: str = "") -> bytes:
    return f"GET {url} HTTP/1.1\r\nHost: ignored\r\n{extra}\r\n".encode()


def connect(authority: str, extra: str = "") -> bytes:
    return f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{extra}\r\n".encode()


def inner_get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: public.example.test\r\nConnection: close\r\n\r\n".encode()


async def test_plain_http_allowed(upstream: tuple[int, list[str]]) -> None:
    port, hosts = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("*.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        status, blob = await raw(proxy, get(f"http://public.example.test:{port}/hello", "Proxy-Connection: x\r\n"))
        assert status == 200 and blob.endswith(b"hello")
        assert hosts == [f"public.example.test:{port}"]
    [entry] = proxy.log  # final once stop() returned
    assert entry.method == "GET" and entry.url == f"http://public.example.test:{port}/hello"
    assert entry.status_code == 200 and entry.error == ""
    assert entry.bytes_transferred == len(blob) and entry.duration >= 0 and entry.timestamp > 0


async def test_connect_tunnel_allowed(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        status, blob = await raw(proxy, connect(f"public.example.test:{port}"), tunnel_then=inner_get("/hello"))
        assert status == 200 and blob.startswith(b"HTTP/1.1 200") and blob.endswith(b"hello")
    [entry] = proxy.log
    assert entry.method == "CONNECT" and entry.url == f"public.example.test:{port}"
    assert entry.status_code == 200 and entry.bytes_transferred == len(blob) and not entry.error


async def test_chunked_upload_is_reframed(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: y\r\n\r\n"
        request = (
            f"POST http://public.example.test:{port}/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode() + body
        status, blob = await raw(proxy, request)
        assert status == 200 and blob.endswith(b"hello world")
        bad = (
            f"POST http://public.example.test:{port}/echo HTTP/1.1\r\n"
            "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        status, _ = await raw(proxy, bad.encode())
        assert status == 400


async def test_denied_host_is_403_and_logged(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    connector = RecordingConnector(port)
    policy = NetPolicy(allow_hosts=("*.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver, connector=connector) as proxy:
        status, blob = await raw(proxy, get(f"http://example.test:{port}/hello"))
        assert status == 403 and b"not in allow_hosts" in blob
        status, _ = await raw(proxy, connect(f"evil.test:{port}"), tunnel_then=b"")
        assert status == 403
        status, _ = await raw(proxy, connect("public.example.test:22"), tunnel_then=b"")
        assert status == 403
    assert resolver.calls == [] and connector.dialed == []
    assert [e.status_code for e in proxy.log] == [403, 403, 403]
    assert "not in allow_hosts" in proxy.log[0].error and proxy.log[0].method == "GET"
    assert proxy.log[1].method == "CONNECT" and proxy.log[1].url == f"evil.test:{port}"
    assert "port 22" in proxy.log[2].error


@pytest.mark.parametrize(
    "answer",
    ["169.254.169.254", "10.0.0.5", "127.0.0.1", "::1", "::ffff:127.0.0.1", "100.100.100.200", "fd00:ec2::254"],
)
async def test_ssrf_answers_refused_before_connecting(upstream: tuple[int, list[str]], answer: str) -> None:
    port, _ = upstream
    resolver = FakeResolver({"evil.example.test": [[answer]]})
    connector = RecordingConnector(port)
    policy = NetPolicy(allow_hosts=("*.example.test",), allow_ports=(port,))
    async with await start_egress_proxy(policy, resolver=resolver, connector=connector) as proxy:
        status, _ = await raw(proxy, connect(f"evil.example.test:{port}"), tunnel_then=b"")
        assert status == 403
        status, _ = await raw(proxy, get(f"http://evil.example.test:{port}/"))
        assert status == 403
    assert connector.dialed == []
    assert all(answer.split("%", maxsplit=1)[0] in e.error or "embeds" in e.error for e in proxy.log)


@pytest.mark.parametrize(
    "host",
    ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]", "[::1]", "169.254.169.254", "127.0.0.1"],
)
async def test_ssrf_host_forms_refused(upstream: tuple[int, list[str]], host: str) -> None:
    port, _ = upstream
    resolver = FakeResolver({})
    connector = RecordingConnector(port)
    policy = NetPolicy(
        allow_hosts=("*.example.test", host.strip("[]")) if ":" not in host else ("*.example.test",),
        allow_ports=(port,),
    )
    async with await start_egress_proxy(policy, resolver=resolver, connector=connector) as proxy:
        status, _ = await raw(proxy, get(f"http://{host}:{port}/hello"))
        assert status == 403
        status, _ = await raw(proxy, connect(f"{host}:{port}"), tunnel_then=b"")
        assert status == 403
    assert resolver.calls == [] and connector.dialed == []


async def test_resolved_address_is_pinned_real_sockets(upstream: tuple[int, list[str]]) -> None:
    """The first answer (127.0.0.1, a server) is checked and dialed; a later answer (127.0.0.2, nothing) never is."""
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"], ["127.0.0.2"]]})
    dialed: list[IPAddress] = []

    async def recording(address: IPAddress, p: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        dialed.append(address)
        return await direct_connector(address, p)

    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver, connector=recording) as proxy:
        status, blob = await raw(proxy, connect(f"public.example.test:{port}"), tunnel_then=inner_get("/hello"))
        assert status == 200 and blob.endswith(b"hello")
    assert resolver.calls == ["public.example.test"]  # resolved exactly once
    assert dialed == [ipaddress.ip_address("127.0.0.1")]


async def test_rebinding_public_then_loopback(upstream: tuple[int, list[str]]) -> None:
    """Public first (checked, pinned, dialed), loopback second (refused, never dialed)."""
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [[PUBLIC], ["127.0.0.1"]]})
    connector = RecordingConnector(port)
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,))
    async with await start_egress_proxy(policy, resolver=resolver, connector=connector) as proxy:
        status, blob = await raw(proxy, connect(f"public.example.test:{port}"), tunnel_then=inner_get("/hello"))
        assert status == 200 and blob.endswith(b"hello")
        status, _ = await raw(proxy, connect(f"public.example.test:{port}"), tunnel_then=b"")
        assert status == 403
    assert connector.dialed == [(ipaddress.ip_address(PUBLIC), port)]
    assert resolver.calls == ["public.example.test", "public.example.test"]
    assert "loopback" in proxy.log[1].error


async def test_unresolvable_and_unreachable_are_502(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"down.example.test": [["127.0.0.3"]]})
    policy = NetPolicy(allow_hosts=("*.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        status, _ = await raw(proxy, get(f"http://nxdomain.example.test:{port}/"))
        assert status == 502
        status, _ = await raw(proxy, connect(f"down.example.test:{port}"), tunnel_then=b"")
        assert status == 502
    assert "cannot resolve" in proxy.log[0].error and "cannot connect" in proxy.log[1].error


async def test_max_requests(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), max_requests=2, allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        url = f"http://public.example.test:{port}/hello"
        assert (await raw(proxy, get(url)))[0] == 200
        assert (await raw(proxy, get(f"http://denied.test:{port}/")))[0] == 403  # refused requests count too
        status, blob = await raw(proxy, get(url))
        assert status == 429 and b"max_requests" in blob
    assert proxy.requests == 3
    assert [e.status_code for e in proxy.log] == [200, 403, 429]
    assert "max_requests (2) exceeded" in proxy.log[2].error


async def test_max_bytes_cuts_transfer_and_then_refuses(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), max_bytes=10_000, allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        status, blob = await raw(proxy, get(f"http://public.example.test:{port}/big"))
        assert status == 200 and len(blob) == 10_000
        status, blob = await raw(proxy, connect(f"public.example.test:{port}"), tunnel_then=inner_get("/hello"))
        assert status == 403 and b"max_bytes" in blob
    assert proxy.bytes_received == 10_000
    first, second = proxy.log
    assert first.bytes_transferred == 10_000 and "max_bytes (10000) exceeded" in first.error
    assert second.status_code == 403 and "exhausted" in second.error


async def test_max_bytes_in_a_tunnel(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), max_bytes=5000, allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver) as proxy:
        status, blob = await raw(proxy, connect(f"public.example.test:{port}"), tunnel_then=inner_get("/big"))
        assert status == 200 and len(blob) == 5000
    assert "max_bytes" in proxy.log[0].error and proxy.log[0].bytes_transferred == 5000


async def test_proxy_token(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver, proxy_token="s3cret") as proxy:
        url = f"http://public.example.test:{port}/hello"
        status, blob = await raw(proxy, get(url))
        assert status == 407 and b"Proxy-Authenticate: Basic" in blob
        assert (await raw(proxy, get(url, "Proxy-Authorization: Bearer wrong\r\n")))[0] == 407
        basic = base64.b64encode(b"guest:s3cret").decode()
        status, blob = await raw(proxy, get(url, f"Proxy-Authorization: Basic {basic}\r\n"))
        assert status == 200 and blob.endswith(b"hello")
        status, _ = await raw(
            proxy,
            connect(f"public.example.test:{port}", "Proxy-Authorization: Bearer s3cret\r\n"),
            tunnel_then=inner_get("/hello"),
        )
        assert status == 200
    assert [e.status_code for e in proxy.log] == [407, 407, 200, 200]


async def test_bad_requests(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,))
    async with await start_egress_proxy(policy, resolver=FakeResolver({})) as proxy:
        for request in [
            b"GET /relative HTTP/1.1\r\n\r\n",
            b"GET https://public.example.test/ HTTP/1.1\r\n\r\n",
            b"GET http://user:pw@public.example.test/ HTTP/1.1\r\n\r\n",
            b"CONNECT public.example.test HTTP/1.1\r\n\r\n",
            b"GET http://public.example.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
            b"NOT HTTP\r\n\r\n",
        ]:
            assert (await raw(proxy, request))[0] == 400, request
        status, _ = await raw(proxy, b"GET http://public.example.test/ HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n")
        assert status == 431


async def test_stop_is_idempotent_and_final(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,), allow_private=True)
    proxy = await start_egress_proxy(policy, resolver=resolver)
    host, pport = proxy.address
    # an open tunnel is cut by stop()
    reader, writer = await asyncio.open_connection(host, pport)
    writer.write(connect(f"public.example.test:{port}"))
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    await asyncio.gather(proxy.stop(), proxy.stop())
    await proxy.stop()
    assert proxy.closed
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
    with pytest.raises(OSError):
        await asyncio.open_connection(host, pport)
    assert len(proxy.log) == 1


async def test_max_connections(upstream: tuple[int, list[str]]) -> None:
    port, _ = upstream
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(port,))
    async with await start_egress_proxy(policy, resolver=FakeResolver({}), max_connections=2) as proxy:
        host, pport = proxy.address
        held = [await asyncio.open_connection(host, pport) for _ in range(2)]
        await asyncio.sleep(0.05)
        reader, writer = await asyncio.open_connection(host, pport)
        assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 503")
        writer.close()
        for _, w in held:
            w.close()


async def test_argument_validation() -> None:
    policy = NetPolicy()
    with pytest.raises(ValueError):
        await start_egress_proxy(policy, max_connections=0)
    with pytest.raises(ValueError):
        await start_egress_proxy(policy, proxy_token="")
    with pytest.raises(TypeError):
        await start_egress_proxy("nope")  # type: ignore[arg-type]
