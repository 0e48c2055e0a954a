"""Issue #12, item 5: unauthenticated traffic cannot lock the token holder out of the reverse proxy.

Every local client shares one address (127.0.0.1), so anything the proxy
counts per address before it knows who is asking can be spent by anyone who
reaches the port. These tests flood a real proxy on 127.0.0.1 with requests
and connections that lack the token, then check that the token holder is
still served. Each one failed before authentication came first and the
connection cap got its reserve.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from playground.serve import ProxyConfig, RunningProxy, TCPUpstream, start_proxy
from playground.serve.proxy import PROBATION_HEAD_TIMEOUT, auth_reserve

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def upstream() -> AsyncIterator[TCPUpstream]:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="hello")

    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield TCPUpstream(host="127.0.0.1", port=runner.addresses[0][1])
    finally:
        await runner.cleanup()


def head(proxy: RunningProxy, token: str | None = None, *, close: bool = True) -> bytes:
    lines = ["GET / HTTP/1.1", f"Host: 127.0.0.1:{proxy.port}"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def exchange(proxy: RunningProxy, data: bytes) -> bytes:
    """One request on a fresh connection; the whole answer (the proxy closes after it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


async def hold(proxy: RunningProxy, count: int, data: bytes = b"") -> list[asyncio.StreamWriter]:
    """Open ``count`` connections that send ``data`` (maybe nothing, maybe half a head) and then sit there."""
    writers = []
    for _ in range(count):
        _, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        if data:
            writer.write(data)
        writers.append(writer)
    await asyncio.sleep(0.1)
    return writers


def release(writers: list[asyncio.StreamWriter]) -> None:
    for writer in writers:
        writer.close()


def status(blob: bytes) -> int:
    return int(blob.split(b" ", 2)[1])


# -- rate limit ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic dXNlcjpwYXNz"])
async def test_a_flood_without_the_token_does_not_spend_the_token_holders_rate(
    upstream: TCPUpstream, authorization: str | None
) -> None:
    """The attack as reported: 60 requests without (or with a wrong) token, then the token holder asks."""
    async with (
        await start_proxy(ProxyConfig(rate=0.5, burst=20), upstream) as proxy,
        aiohttp.ClientSession() as session,
    ):
        assert proxy.token
        flood = []
        closing = set()
        headers = {"Authorization": authorization} if authorization else {}
        for _ in range(60):
            async with session.get(proxy.url, headers=headers) as r:
                flood.append(r.status)
                closing.add(r.headers.get("Connection", "").lower())
        good = {"Authorization": f"Bearer {proxy.token}"}
        mine = []
        for _ in range(21):
            async with session.get(proxy.url, headers=good) as r:
                mine.append(r.status)
        # the token holder's bucket was untouched by the flood: a full burst, then its own limit applies
        assert mine == [200] * 20 + [429]
        assert flood == [401] * 20 + [429] * 40  # the unauthenticated bucket is theirs, and it is empty
        assert closing == {"close"}  # a refusal without the token ends its connection: no keep-alive slot to hold
        logs = "\n".join(proxy.recent_logs())
        assert "rate limited, auth" in logs and proxy.token not in logs


async def test_the_token_holder_is_served_during_a_concurrent_flood(upstream: TCPUpstream) -> None:
    """Other direction: the flood is still running (many connections at once) while the token holder works."""
    async with await start_proxy(ProxyConfig(rate=1, burst=10, max_connections=16), upstream) as proxy:
        stop = asyncio.Event()
        refused: list[int] = []

        async def flooder() -> None:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=8)) as session:
                while not stop.is_set():
                    try:
                        async with session.get(proxy.url) as r:
                            refused.append(r.status)
                    except aiohttp.ClientError:
                        refused.append(0)

        tasks = [asyncio.create_task(flooder()) for _ in range(8)]
        try:
            while len(refused) < 50:
                await asyncio.sleep(0.01)
            async with aiohttp.ClientSession() as session:
                mine = []
                for _ in range(5):
                    async with session.get(proxy.url, headers={"Authorization": f"Bearer {proxy.token}"}) as r:
                        mine.append((r.status, await r.text()))
        finally:
            stop.set()
            await asyncio.gather(*tasks)
        assert mine == [(200, "hello")] * 5
        assert 200 not in refused and 429 in refused


# -- connection cap -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("slow_head", [b"", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"], ids=["idle", "half-head"])
async def test_idle_connections_without_the_token_cannot_hold_every_slot(
    upstream: TCPUpstream, slow_head: bytes
) -> None:
    """Slowloris: unauthenticated clients open max_connections (and the reserve, and more) and never finish."""
    config = ProxyConfig(max_connections=6)
    async with await start_proxy(config, upstream) as proxy:
        assert proxy.token
        held = await hold(proxy, config.max_connections + auth_reserve(config.max_connections) + 5, slow_head)
        try:
            # an unauthenticated newcomer is still turned away at the cap ...
            assert status(await exchange(proxy, head(proxy))) == 503
            assert status(await exchange(proxy, head(proxy, "wrong-token"))) == 503
            # ... but the token holder gets in, again and again
            for _ in range(3):
                blob = await exchange(proxy, head(proxy, proxy.token))
                assert status(blob) == 200 and blob.endswith(b"hello"), blob[:200]
        finally:
            release(held)
        assert "over max_connections without the token" in "\n".join(proxy.recent_logs())


async def test_the_token_holder_keeps_a_keep_alive_connection_over_the_cap(upstream: TCPUpstream) -> None:
    """A connection admitted on probation that showed the token stays open, and is not evicted by newcomers."""
    config = ProxyConfig(max_connections=3)
    async with await start_proxy(config, upstream) as proxy:
        assert proxy.token
        held = await hold(proxy, config.max_connections)
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        try:
            for _ in range(3):
                writer.write(head(proxy, proxy.token, close=False))
                await writer.drain()
                answer = await asyncio.wait_for(reader.readuntil(b"hello"), 10)
                assert status(answer) == 200
                held += await hold(proxy, auth_reserve(config.max_connections) + 2)  # churn the reserve
            await asyncio.sleep(PROBATION_HEAD_TIMEOUT + 0.5)  # past the probation deadline: proven, so kept
            writer.write(head(proxy, proxy.token))
            await writer.drain()
            assert status(await asyncio.wait_for(reader.read(), 10)) == 200
        finally:
            writer.close()
            release(held)


async def test_probation_connections_that_send_nothing_are_closed(upstream: TCPUpstream) -> None:
    config = ProxyConfig(max_connections=2)
    async with await start_proxy(config, upstream) as proxy:
        held = await hold(proxy, config.max_connections)
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        try:
            assert await asyncio.wait_for(reader.read(), PROBATION_HEAD_TIMEOUT + 5) == b""  # closed by the proxy
        finally:
            writer.close()
            release(held)
