"""Throughput of the serve reverse proxy and the egress proxy, side by side with a direct connection.

Everything runs on 127.0.0.1 in one process (client, proxies, upstream), so
the figures compare overheads rather than measure a network. Prints a table;
asserts nothing about time.

    .venv/bin/python bench/proxy_throughput.py [--requests 2000] [--concurrency 50]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence

import aiohttp
from aiohttp import web

from playground.core import NetPolicy
from playground.net import start_egress_proxy
from playground.serve import HandlerUpstream, Headers, ProxyConfig, TCPUpstream, start_proxy

BIG = 1 << 20


async def upstream() -> tuple[web.AppRunner, int]:
    app = web.Application()

    async def small(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def big(request: web.Request) -> web.Response:
        return web.Response(body=b"x" * BIG)

    app.router.add_get("/small", small)
    app.router.add_get("/big", big)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]


async def drive(
    url: str, n: int, concurrency: int, headers: dict[str, str], proxy: str | None = None
) -> tuple[float, int]:
    connector = aiohttp.TCPConnector(limit=concurrency)
    received = 0
    async with aiohttp.ClientSession(connector=connector) as session:
        sem = asyncio.Semaphore(concurrency)

        async def one() -> None:
            nonlocal received
            async with sem, session.get(url, headers=headers, proxy=proxy) as r:
                data = await r.read()
                received += len(data)
                assert r.status == 200, r.status

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - t0, received


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args(argv)
    runner, port = await upstream()

    async def handler(method: str, path_qs: str, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
        return 200, [("Content-Type", "text/plain")], b"ok"

    cfg = ProxyConfig(rate=1e9, burst=10**9, max_connections=args.concurrency + 8)
    serve = await start_proxy(cfg, TCPUpstream(host="127.0.0.1", port=port))
    bridge = await start_proxy(cfg, HandlerUpstream(handler=handler))

    async def resolve(host: str, p: int) -> list[str]:
        return ["127.0.0.1"]

    policy = NetPolicy(
        allow_hosts=("bench.example.test",),
        allow_ports=(port,),
        allow_private=True,
        max_requests=10**9,
        max_bytes=1 << 40,
    )
    egress = await start_egress_proxy(policy, resolver=resolve, max_connections=args.concurrency * 4)
    auth = {"Authorization": f"Bearer {serve.token}"}
    bridge_auth = {"Authorization": f"Bearer {bridge.token}"}
    n, c = args.requests, args.concurrency
    big_n = max(n // 20, 10)
    rows = [
        ("direct        small", f"http://127.0.0.1:{port}/small", n, {}, None),
        ("serve proxy   small", serve.url + "small", n, auth, None),
        ("handler bridge small", bridge.url + "small", n, bridge_auth, None),
        ("egress (HTTP) small", f"http://bench.example.test:{port}/small", n, {}, egress.url),
        ("direct        1 MiB", f"http://127.0.0.1:{port}/big", big_n, {}, None),
        ("serve proxy   1 MiB", serve.url + "big", big_n, auth, None),
        ("egress (HTTP) 1 MiB", f"http://bench.example.test:{port}/big", big_n, {}, egress.url),
    ]
    print(f"{'path':22} {'requests':>8} {'conc':>5} {'req/s':>9} {'MiB/s':>8}")
    try:
        for name, url, count, headers, proxy in rows:
            elapsed, received = await drive(url, count, c, headers, proxy)
            print(f"{name:22} {count:8d} {c:5d} {count / elapsed:9.0f} {received / elapsed / (1 << 20):8.1f}")
    finally:
        await serve.stop()
        await bridge.stop()
        await egress.stop()
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
