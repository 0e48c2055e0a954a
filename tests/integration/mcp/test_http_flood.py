"""Issue #12, item 5 on the MCP HTTP transport: unauthenticated traffic cannot lock the token holder out.

The reverse proxy charged a per-address rate limit before checking the
token, so a local flood without the token locked the token holder out.
The MCP transport's ``AccessGuard`` checks Host, Origin and the token
before anything else and keeps no per-address budget that a flood could
spend; these tests pin that: after (and during) a flood of requests without
the token, and with many idle connections held open, the token holder's
SDK client still initializes and calls tools. ``playground mcp --http``
runs as a subprocess on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_http import ACCEPT, INIT, TOKEN, Served, _start, _stop

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def server() -> Iterator[Served]:
    served = _start("--token", TOKEN)
    yield served
    _stop(served)


async def _token_holder_works(server: Served) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        languages = await client.call_tool("list_languages", {})
    assert not languages.is_error


async def test_a_flood_without_the_token_leaves_the_token_holder_served(server: Served) -> None:
    bad = [{}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": f"Basic {TOKEN}"}]
    async with httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=32)) as http:

        async def one(i: int) -> int:
            response = await http.post(server.url, json=INIT, headers={**ACCEPT, **bad[i % len(bad)]})
            return response.status_code

        statuses = await asyncio.gather(*(one(i) for i in range(300)))
    assert set(statuses) == {401}
    await _token_holder_works(server)
    good = httpx2.post(server.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert good.status_code == 200


async def test_the_token_holder_is_served_while_a_flood_runs(server: Served) -> None:
    stop = asyncio.Event()
    refused: list[int] = []

    async def flooder(http: httpx2.AsyncClient) -> None:
        while not stop.is_set():
            refused.append((await http.post(server.url, json=INIT, headers=ACCEPT)).status_code)

    async with httpx2.AsyncClient(timeout=60) as http:
        tasks = [asyncio.create_task(flooder(http)) for _ in range(8)]
        try:
            while len(refused) < 50:
                await asyncio.sleep(0.01)
            await _token_holder_works(server)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
    assert set(refused) == {401}


async def test_idle_and_half_sent_connections_do_not_lock_out_the_token_holder(server: Served) -> None:
    """Slowloris: connections that send nothing, or half a request head, and stay open."""
    writers = []
    try:
        for i in range(200):
            _, writer = await asyncio.open_connection("127.0.0.1", server.port)
            if i % 2:
                writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())
            writers.append(writer)
        await asyncio.sleep(0.2)
        await _token_holder_works(server)
    finally:
        for writer in writers:
            writer.close()
