"""Request smuggling and parser attacks against the running egress proxy, with a raw upstream that records bytes.

Network rule: every socket here goes to 127.0.0.0/8; names are answered by a
fake resolver. The upstream answers once it has seen the bytes a test says
end the request, then keeps listening briefly so smuggled extra bytes would
show up in what it recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from playground.core import NetPolicy
from playground.net import EgressProxy, start_egress_proxy
from tests.integration.net.test_egress_proxy import FakeResolver, RecordingConnector, connect


class RawUpstream:
    """A TCP server on 127.0.0.1 that records every byte and answers ``200 ok`` after ``until``."""

    def __init__(self) -> None:
        self.until = b"\r\n\r\n"
        self.received: list[bytes] = []
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = b""
        try:
            while self.until not in data:
                chunk = await asyncio.wait_for(reader.read(65536), 5)
                if not chunk:
                    break
                data += chunk
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            await writer.drain()
            try:  # anything smuggled behind the request would arrive now
                while chunk := await asyncio.wait_for(reader.read(65536), 0.2):
                    data += chunk
            except TimeoutError:
                pass
        finally:
            self.received.append(data)
            writer.close()


@pytest.fixture
async def raw_upstream() -> AsyncIterator[RawUpstream]:
    upstream = RawUpstream()
    server = await asyncio.start_server(upstream.handle, "127.0.0.1", 0)
    upstream.port = server.sockets[0].getsockname()[1]
    try:
        yield upstream
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
async def proxy(raw_upstream: RawUpstream) -> AsyncIterator[EgressProxy]:
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(raw_upstream.port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver, idle_timeout=5) as running:
        yield running


async def exchange(proxy: EgressProxy, data: bytes) -> bytes:
    """Send ``data`` in one write and return everything the proxy answers until it closes."""
    reader, writer = await asyncio.open_connection(*proxy.address)
    try:
        writer.write(data)
        await writer.drain()
        chunks = []
        try:
            while chunk := await asyncio.wait_for(reader.read(65536), 10):
                chunks.append(chunk)
        except ConnectionError:
            pass
        return b"".join(chunks)
    finally:
        writer.close()


def url(upstream: RawUpstream, path: str = "/p") -> str:
    return f"http://public.example.test:{upstream.port}{path}"


async def test_cl_te_smuggling_never_reaches_the_upstream(proxy: EgressProxy, raw_upstream: RawUpstream) -> None:
    smuggled = f"GET {url(raw_upstream, '/admin')} HTTP/1.1\r\nHost: public.example.test\r\n\r\n"
    for framing in [
        "Content-Length: 4\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 4",
    ]:
        request = f"POST {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\n{framing}\r\n\r\n0\r\n\r\n{smuggled}"
        blob = await exchange(proxy, request.encode())
        assert blob.startswith(b"HTTP/1.1 400 ") and blob.count(b"HTTP/1.1") == 1
    await proxy.stop()
    assert raw_upstream.received == []
    assert [(e.method, e.status_code, e.error) for e in proxy.log] == [
        ("POST", 400, "both Content-Length and Transfer-Encoding")
    ] * 2
    assert proxy.requests == 2  # counted like any other refused request


@pytest.mark.parametrize("lengths", ["Content-Length: 3\r\nContent-Length: 30", "Content-Length: 3, 30"])
async def test_duplicate_content_length_with_different_values(
    proxy: EgressProxy, raw_upstream: RawUpstream, lengths: str
) -> None:
    request = f"POST {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\n{lengths}\r\n\r\nabc" + "x" * 27
    blob = await exchange(proxy, request.encode())
    assert blob.startswith(b"HTTP/1.1 400 ")
    await proxy.stop()
    assert raw_upstream.received == [] and proxy.log[0].status_code == 400


async def test_body_longer_than_content_length_is_not_forwarded(proxy: EgressProxy, raw_upstream: RawUpstream) -> None:
    raw_upstream.until = b"\r\n\r\nhello"
    smuggled = f"GET {url(raw_upstream, '/admin')} HTTP/1.1\r\nHost: public.example.test\r\n\r\n"
    request = f"POST {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello{smuggled}"
    blob = await exchange(proxy, request.encode())
    assert blob.startswith(b"HTTP/1.1 200 ") and blob.endswith(b"ok") and blob.count(b"HTTP/1.1") == 1
    await proxy.stop()
    [seen] = raw_upstream.received
    assert seen.endswith(b"\r\n\r\nhello") and b"/admin" not in seen
    assert seen.count(b"Content-Length: 5\r\n") == 1 and b"Connection: close\r\n" in seen
    assert len(proxy.log) == 1 and proxy.requests == 1


async def test_pipelined_second_request_is_never_read(proxy: EgressProxy, raw_upstream: RawUpstream) -> None:
    first = f"GET {url(raw_upstream, '/one')} HTTP/1.1\r\nHost: x\r\n\r\n"
    second = f"GET {url(raw_upstream, '/two')} HTTP/1.1\r\nHost: x\r\n\r\n"
    blob = await exchange(proxy, (first + second).encode())
    assert blob.count(b"HTTP/1.1 200") == 1
    await proxy.stop()
    [seen] = raw_upstream.received
    assert seen.startswith(b"GET /one HTTP/1.1\r\n") and b"/two" not in seen
    assert [e.url for e in proxy.log] == [url(raw_upstream, "/one")]


async def test_chunked_body_reaches_the_upstream_reframed(proxy: EgressProxy, raw_upstream: RawUpstream) -> None:
    raw_upstream.until = b"\r\n0\r\n\r\n"
    request = (
        f"POST {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "00005;x=y\r\nhello\r\n0\r\nX-Trailer: evil\r\n\r\n"
    )
    blob = await exchange(proxy, request.encode())
    assert blob.endswith(b"ok")
    await proxy.stop()
    [seen] = raw_upstream.received
    head, _, body = seen.partition(b"\r\n\r\n")
    assert body == b"5\r\nhello\r\n0\r\n\r\n" and b"X-Trailer" not in seen
    assert head.count(b"Transfer-Encoding: chunked") == 1 and b"Content-Length" not in head


@pytest.mark.parametrize("size", ["0x5", "-5", "+5", "zz", "5 5", "1" * 21])
async def test_invalid_chunk_size_cuts_the_exchange(proxy: EgressProxy, raw_upstream: RawUpstream, size: str) -> None:
    raw_upstream.until = b"never"
    head = f"POST {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    request = head + f"{size}\r\nhello\r\n0\r\n\r\n"
    blob = await exchange(proxy, request.encode())
    assert b"200" not in blob
    await proxy.stop()
    [entry] = proxy.log
    assert entry.method == "POST" and "bad chunk" in entry.error
    assert all(b"hello" not in seen for seen in raw_upstream.received)


@pytest.mark.parametrize(
    "head",
    [
        "POST {url} HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n",
        "POST {url} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\tX: y\r\n\r\n",
        "GET {url} HTTP/1.1\nHost: x\n\n",
        "GET {url} HTTP/1.1\r\nHost: x\nTransfer-Encoding: chunked\r\n\r\n",
        "GET {url} HTTP/1.1\r\nHost: x\r\nX: a\rTransfer-Encoding: chunked\r\n\r\n",
        "GET {url} HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "GET {url} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n",
        "GET {url} HTTP/2.0\r\nHost: x\r\n\r\n",
        "G3T {url} HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
)
async def test_malformed_heads_are_400_and_never_forwarded(
    proxy: EgressProxy, raw_upstream: RawUpstream, head: str
) -> None:
    blob = await exchange(proxy, head.format(url=url(raw_upstream)).encode())
    assert blob.startswith(b"HTTP/1.1 400 ")
    await proxy.stop()
    assert raw_upstream.received == [] and [e.status_code for e in proxy.log] == [400]


async def test_obs_fold_message(proxy: EgressProxy, raw_upstream: RawUpstream) -> None:
    blob = await exchange(proxy, f"GET {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n".encode())
    assert b"obsolete header folding is refused" in blob


async def test_huge_header_is_431(proxy: EgressProxy, raw_upstream: RawUpstream) -> None:
    blob = await exchange(proxy, f"GET {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\nX: {'a' * 70_000}\r\n\r\n".encode())
    assert blob.startswith(b"HTTP/1.1 431 ")
    many = "".join(f"X-{i}: {'b' * 60}\r\n" for i in range(1200))
    blob = await exchange(proxy, f"GET {url(raw_upstream)} HTTP/1.1\r\nHost: x\r\n{many}\r\n".encode())
    assert blob.startswith(b"HTTP/1.1 431 ")
    await proxy.stop()
    assert raw_upstream.received == [] and [e.status_code for e in proxy.log] == [431, 431]


@pytest.mark.parametrize("userinfo", ["user:pw@", "user@", "@", ":@"])
async def test_credentials_in_url_are_refused(proxy: EgressProxy, raw_upstream: RawUpstream, userinfo: str) -> None:
    target = f"http://{userinfo}public.example.test:{raw_upstream.port}/"
    blob = await exchange(proxy, f"GET {target} HTTP/1.1\r\nHost: public.example.test\r\n\r\n".encode())
    assert blob.startswith(b"HTTP/1.1 400 ") and b"credentials in the URL are refused" in blob
    await proxy.stop()
    assert raw_upstream.received == []


async def test_connect_early_data_goes_through_the_tunnel(raw_upstream: RawUpstream) -> None:
    connector = RecordingConnector(raw_upstream.port)
    resolver = FakeResolver({"public.example.test": [["127.0.0.1"]]})
    policy = NetPolicy(allow_hosts=("public.example.test",), allow_ports=(raw_upstream.port,), allow_private=True)
    async with await start_egress_proxy(policy, resolver=resolver, connector=connector) as proxy:
        inner = b"GET /inside HTTP/1.1\r\nHost: public.example.test\r\n\r\n"
        blob = await exchange(proxy, connect(f"public.example.test:{raw_upstream.port}") + inner)
        assert blob.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK")
    assert raw_upstream.received == [inner]
    assert proxy.log[0].method == "CONNECT" and proxy.log[0].status_code == 200
