"""The reverse proxy against a real aiohttp upstream on 127.0.0.1 and against an in-process handler.

Every socket here stays on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from playground.serve import (
    AuthMode,
    HandlerUpstream,
    Headers,
    HTTPReady,
    ProxyConfig,
    RunningProxy,
    ServiceNotReady,
    StopReason,
    TCPReady,
    TCPUpstream,
    start_proxy,
)


class Upstream:
    """A small guest-like web app on 127.0.0.1."""

    def __init__(self) -> None:
        self.runner: web.AppRunner | None = None
        self.port = 0
        self.seen: list[dict[str, str]] = []

    async def start(self, port: int = 0) -> None:
        app = web.Application()
        app.router.add_route("*", "/echo", self.echo)
        app.router.add_get("/big", self.big)
        app.router.add_get("/stream", self.stream)
        app.router.add_get("/slow", self.slow)
        app.router.add_get("/status/{code}", self.status)
        app.router.add_get("/hop", self.hop)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    @property
    def target(self) -> TCPUpstream:
        return TCPUpstream(host="127.0.0.1", port=self.port)

    async def echo(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = dict(request.headers)
        self.seen.append(headers)
        return web.json_response(
            {"method": request.method, "path_qs": request.path_qs, "headers": headers, "body": body.decode()}
        )

    async def big(self, request: web.Request) -> web.Response:
        return web.Response(body=b"b" * 5000)

    async def stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for _ in range(50):
            await response.write(b"s" * 1000)
            await asyncio.sleep(0.001)
        await response.write_eof()
        return response

    async def slow(self, request: web.Request) -> web.Response:
        await asyncio.sleep(1.5)
        return web.Response(text="late")

    async def status(self, request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="s")

    async def hop(self, request: web.Request) -> web.Response:
        return web.Response(text="h", headers={"Connection": "X-Private", "X-Private": "1", "X-Public": "2"})


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    up = Upstream()
    await up.start()
    try:
        yield up
    finally:
        await up.stop()


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def auth(proxy: RunningProxy) -> dict[str, str]:
    assert proxy.token
    return {"Authorization": f"Bearer {proxy.token}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def raw_request(proxy: RunningProxy, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), 10)
    finally:
        writer.close()


# -- auth ---------------------------------------------------------------------------------------------------------


async def test_auth_missing_wrong_right(
    upstream: Upstream, client: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        nonlocal calls
        calls += 1
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    async with await start_proxy(ProxyConfig(), upstream.target) as proxy:
        assert proxy.token and len(proxy.token) == 43
        assert proxy.url == f"http://127.0.0.1:{proxy.port}/" and proxy.addr == f"127.0.0.1:{proxy.port}"
        async with client.get(proxy.url + "echo") as r:
            assert r.status == 401 and r.headers["WWW-Authenticate"] == 'Bearer realm="playground"'
        async with client.get(proxy.url + "echo", headers={"Authorization": "Bearer nope"}) as r:
            assert r.status == 401 and 'error="invalid_token"' in r.headers["WWW-Authenticate"]
        assert calls == 1  # the missing token never reached a compare; the wrong one did, in constant time
        async with client.get(proxy.url + "echo?x=1", headers=auth(proxy)) as r:
            assert r.status == 200
            seen = await r.json()
        assert calls == 2
        assert seen["path_qs"] == "/echo?x=1"
        assert "Authorization" not in seen["headers"]  # the proxy's token is stripped
        assert seen["headers"]["X-Forwarded-For"] == "127.0.0.1"
        assert seen["headers"]["X-Forwarded-Host"] == seen["headers"]["Host"] == f"127.0.0.1:{proxy.port}"
        assert len(upstream.seen) == 1  # refused requests never reached the upstream
        logs = "\n".join(proxy.recent_logs())
        assert proxy.token not in logs and "auth missing" in logs and "auth invalid" in logs


async def test_configured_token_and_no_auth(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(token="my-token"), upstream.target) as proxy:
        assert proxy.token == "my-token"
        async with client.get(proxy.url + "echo", headers={"Authorization": "Bearer my-token"}) as r:
            assert r.status == 200
    other = await start_proxy(ProxyConfig(), upstream.target)
    third = await start_proxy(ProxyConfig(), upstream.target)
    assert other.token != third.token
    await other.stop()
    await third.stop()
    async with await start_proxy(ProxyConfig(auth=AuthMode.NONE), upstream.target) as proxy:
        assert proxy.token is None
        async with client.get(proxy.url + "echo", headers={"Authorization": "Basic app-own"}) as r:
            assert r.status == 200
            assert (await r.json())["headers"]["Authorization"] == "Basic app-own"  # not ours: passed on


# -- host, headers ------------------------------------------------------------------------------------------------


async def test_host_header_check(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(), upstream.target) as proxy:
        for host, status in [
            ("evil.test", 421),
            (f"evil.test:{proxy.port}", 421),
            (f"127.0.0.1:{proxy.port + 1}", 421),
            (f"localhost:{proxy.port}", 200),
            (f"[::1]:{proxy.port}", 200),
        ]:
            async with client.get(proxy.url + "echo", headers={**auth(proxy), "Host": host}) as r:
                assert r.status == status, host


async def test_hop_by_hop_and_forwarded_headers(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(), upstream.target) as proxy:
        headers = {
            **auth(proxy),
            "Connection": "keep-alive, X-Secret",
            "X-Secret": "s",
            "Keep-Alive": "timeout=5",
            "Proxy-Authorization": "Basic x",
            "TE": "trailers",
            "X-Forwarded-For": "6.6.6.6",
            "Forwarded": "for=6.6.6.6",
            "X-Kept": "yes",
        }
        async with client.get(proxy.url + "echo", headers=headers) as r:
            seen = (await r.json())["headers"]
        for gone in ["X-Secret", "Keep-Alive", "Proxy-Authorization", "TE", "Forwarded"]:
            assert gone not in seen, gone
        assert seen["X-Forwarded-For"] == "127.0.0.1" and seen["X-Kept"] == "yes"
        async with client.get(proxy.url + "hop", headers=auth(proxy)) as r:
            assert r.headers.get("X-Public") == "2" and "X-Private" not in r.headers


async def test_header_cap(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(max_header_bytes=1024), upstream.target) as proxy:
        async with client.get(proxy.url + "echo", headers={**auth(proxy), "X-Fill": "a" * 600}) as r:
            assert r.status == 200
        many = {f"X-H{i}": "v" * 60 for i in range(20)}  # each line fits, the total does not
        async with client.get(proxy.url + "echo", headers={**auth(proxy), **many}) as r:
            assert r.status == 431
        # one line longer than the cap is stopped by the parser, also with 431
        blob = await raw_request(
            proxy, f"GET /echo HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nX-Big: {'a' * 5000}\r\n\r\n".encode()
        )
        assert blob.split(b"\r\n")[0].endswith(b" 431 Request Header Fields Too Large")
        assert len(upstream.seen) == 1


# -- rate, body, connections --------------------------------------------------------------------------------------


async def test_rate_limit(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(rate=0.5, burst=3), upstream.target) as proxy:
        statuses = []
        for _ in range(5):
            async with client.get(proxy.url + "echo", headers=auth(proxy)) as r:
                statuses.append(r.status)
                if r.status == 429:
                    assert int(r.headers["Retry-After"]) >= 1
        assert statuses == [200, 200, 200, 429, 429]


async def test_body_cap(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(max_request_body=1000), upstream.target) as proxy:
        async with client.post(proxy.url + "echo", headers=auth(proxy), data=b"x" * 1000) as r:
            assert r.status == 200 and (await r.json())["body"] == "x" * 1000
        async with client.post(proxy.url + "echo", headers=auth(proxy), data=b"x" * 1001) as r:
            assert r.status == 413

        async def chunks(n: int) -> AsyncIterator[bytes]:
            for _ in range(n):
                yield b"y" * 100
                await asyncio.sleep(0)

        async with client.post(proxy.url + "echo", headers=auth(proxy), data=chunks(5)) as r:
            assert r.status == 200 and (await r.json())["body"] == "y" * 500
        async with client.post(proxy.url + "echo", headers=auth(proxy), data=chunks(50)) as r:
            assert r.status == 413
        # a huge announced body is refused before a byte of it is read
        blob = await raw_request(
            proxy,
            f"POST /echo HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nAuthorization: Bearer {proxy.token}\r\n"
            f"Content-Length: 999999999\r\n\r\n".encode(),
        )
        assert blob.startswith(b"HTTP/1.1 413")


async def test_expect_continue(upstream: Upstream) -> None:
    async with await start_proxy(ProxyConfig(), upstream.target) as proxy:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(
            f"POST /echo HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nAuthorization: Bearer {proxy.token}\r\n"
            "Content-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n".encode()
        )
        assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)).startswith(b"HTTP/1.1 100")
        writer.write(b"hello")
        rest = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        assert rest.startswith(b"HTTP/1.1 200") and b'"body": "hello"' in rest


async def test_max_connections(upstream: Upstream) -> None:
    async with await start_proxy(ProxyConfig(max_connections=2), upstream.target) as proxy:
        held = [await asyncio.open_connection("127.0.0.1", proxy.port) for _ in range(2)]
        await asyncio.sleep(0.05)
        blob = await raw_request(proxy, f"GET /echo HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\n\r\n".encode())
        assert blob.startswith(b"HTTP/1.1 503")
        for _, w in held:
            w.close()
        await asyncio.sleep(0.1)
        blob = await raw_request(
            proxy,
            f"GET /echo HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\nAuthorization: Bearer {proxy.token}\r\n"
            "Connection: close\r\n\r\n".encode(),
        )
        assert blob.startswith(b"HTTP/1.1 200")


async def test_many_concurrent_clients(upstream: Upstream) -> None:
    cfg = ProxyConfig(rate=10_000, burst=10_000, max_connections=64)
    async with (
        await start_proxy(cfg, upstream.target) as proxy,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=50)) as session,
    ):

        async def one(i: int) -> int:
            async with session.post(proxy.url + f"echo?i={i}", headers=auth(proxy), data=str(i)) as r:
                body = await r.json()
                assert body["body"] == str(i)
                return r.status

        statuses = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(200))), 60)
        assert statuses == [200] * 200
        assert proxy.requests == 200


# -- response caps, timeouts, upstream failure --------------------------------------------------------------------


async def test_response_cap(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(max_response_body=2000), upstream.target) as proxy:
        async with client.get(proxy.url + "big", headers=auth(proxy)) as r:
            assert r.status == 502  # announced length over the cap: refused before sending
        with pytest.raises(aiohttp.ClientPayloadError):
            async with client.get(proxy.url + "stream", headers=auth(proxy)) as r:
                assert r.status == 200
                await r.read()  # streamed: cut after 2000 bytes
        assert any("response cap" in line for line in proxy.recent_logs())


async def test_streaming_passes_through(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    async with await start_proxy(ProxyConfig(), upstream.target) as proxy:
        async with client.get(proxy.url + "stream", headers=auth(proxy)) as r:
            assert r.status == 200 and len(await r.read()) == 50_000
        async with client.get(proxy.url + "status/302", headers=auth(proxy), allow_redirects=False) as r:
            assert r.status == 302
        async with client.head(proxy.url + "big", headers=auth(proxy)) as r:
            assert r.status == 200 and r.headers["Content-Length"] == "5000"


async def test_idle_timeout_on_upstream(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    proxy = await start_proxy(ProxyConfig(idle_timeout=0.3), upstream.target)
    async with proxy, client.get(proxy.url + "slow", headers=auth(proxy)) as r:
        assert r.status == 504


async def test_upstream_crash_is_502_and_reported(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    errors: list[BaseException] = []
    proxy = await start_proxy(ProxyConfig(), upstream.target, on_upstream_error=errors.append)
    async with client.get(proxy.url + "echo", headers=auth(proxy)) as r:
        assert r.status == 200
    await upstream.stop()  # the guest dies
    async with client.get(proxy.url + "echo", headers=auth(proxy)) as r:
        assert r.status == 502
    assert errors and isinstance(errors[0], (aiohttp.ClientError, OSError))
    # the core decides the guest is gone and fails the service
    await proxy.fail(RuntimeError("guest exited with code 1"))
    assert proxy.done.is_set() and proxy.reason is StopReason.FAILED
    assert isinstance(proxy.error, RuntimeError)
    await proxy.stop()  # a later stop changes nothing
    assert proxy.reason is StopReason.FAILED
    assert await proxy.wait() is StopReason.FAILED


# -- lifecycle ----------------------------------------------------------------------------------------------------


async def test_ttl_expiry(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    proxy = await start_proxy(ProxyConfig(ttl=0.3), upstream.target)
    async with client.get(proxy.url + "echo", headers=auth(proxy)) as r:
        assert r.status == 200
    assert await asyncio.wait_for(proxy.wait(), 5) is StopReason.TTL_EXPIRED
    assert proxy.done.is_set() and proxy.error is None
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", proxy.port)
    assert any("TTL" in line for line in proxy.recent_logs())
    await proxy.stop()
    assert proxy.reason is StopReason.TTL_EXPIRED


async def test_stop_idempotent_and_cuts_in_flight() -> None:
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def stuck(method: str, path_qs: str, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
        entered.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 200, [], b""

    proxy = await start_proxy(ProxyConfig(), HandlerUpstream(handler=stuck))
    async with aiohttp.ClientSession() as session:
        pending = asyncio.ensure_future(session.get(proxy.url + "x", headers=auth(proxy)))
        await asyncio.wait_for(entered.wait(), 5)
        await asyncio.wait_for(asyncio.gather(proxy.stop(), proxy.stop()), 5)
        assert proxy.done.is_set() and proxy.reason is StopReason.STOPPED
        assert cancelled.is_set()  # the in-flight call was cancelled, not abandoned
        with pytest.raises(aiohttp.ClientError):
            resp = await asyncio.wait_for(pending, 5)
            resp.release()
    await proxy.stop()
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", proxy.port)


async def test_stop_survives_caller_cancellation(upstream: Upstream) -> None:
    proxy = await start_proxy(ProxyConfig(), upstream.target)
    task = asyncio.ensure_future(proxy.stop())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.wait_for(proxy.done.wait(), 5)
    assert proxy.reason is StopReason.STOPPED


async def test_fixed_port_and_recent_logs(upstream: Upstream, client: aiohttp.ClientSession) -> None:
    port = free_port()
    async with await start_proxy(ProxyConfig(port=port, log_lines=3), upstream.target) as proxy:
        assert proxy.port == port
        for _ in range(5):
            async with client.get(proxy.url + "echo", headers=auth(proxy)) as r:
                assert r.status == 200
        lines = proxy.recent_logs()
        assert len(lines) == 3 and all('"GET /echo" 200' in line for line in lines)
        assert len(proxy.recent_logs(1)) == 1


# -- readiness ----------------------------------------------------------------------------------------------------


async def test_readiness_failure_is_clear() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(ServiceNotReady, match=rf"127\.0\.0\.1:{port} not ready after 0\.5s \(TCP connect") as info:
        await start_proxy(ProxyConfig(ready=TCPReady(timeout=0.5)), TCPUpstream(host="127.0.0.1", port=port))
    assert info.value.target == f"127.0.0.1:{port}" and info.value.last_error


async def test_http_readiness_status(upstream: Upstream) -> None:
    with pytest.raises(ServiceNotReady, match="HTTP status 500"):
        await start_proxy(ProxyConfig(ready=HTTPReady(path="/status/500", timeout=0.5)), upstream.target)
    async with await start_proxy(ProxyConfig(ready=HTTPReady(path="/status/301", timeout=2)), upstream.target):
        pass


async def test_readiness_waits_for_a_slow_start(client: aiohttp.ClientSession) -> None:
    port = free_port()
    late = Upstream()

    async def start_later() -> None:
        await asyncio.sleep(0.4)
        await late.start(port)

    starter = asyncio.ensure_future(start_later())
    try:
        proxy = await start_proxy(
            ProxyConfig(ready=HTTPReady(path="/echo", timeout=10)), TCPUpstream(host="127.0.0.1", port=port)
        )
        async with proxy, client.get(proxy.url + "echo", headers=auth(proxy)) as r:
            assert r.status == 200
    finally:
        await starter
        await late.stop()


# -- in-process handler upstream ----------------------------------------------------------------------------------


async def test_handler_upstream(client: aiohttp.ClientSession) -> None:
    calls: list[tuple[str, str, Headers, bytes]] = []

    async def handler(method: str, path_qs: str, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
        calls.append((method, path_qs, headers, body))
        return 201, [("X-Guest", "1"), ("Connection", "close"), ("Content-Length", "999")], b"made:" + body

    async with await start_proxy(
        ProxyConfig(ready=HTTPReady(path="/health", timeout=2)), HandlerUpstream(handler=handler)
    ) as proxy:
        assert calls[0][:2] == ("GET", "/health")  # the readiness probe
        url = URL(proxy.url + "items?a=%2F", encoded=True)
        async with client.post(url, headers=auth(proxy), data=b"thing") as r:
            assert r.status == 201 and await r.read() == b"made:thing" and r.headers["X-Guest"] == "1"
        method, path_qs, headers, body = calls[-1]
        assert (method, path_qs, body) == ("POST", "/items?a=%2F", b"thing")
        names = {k.lower() for k, _ in headers}
        assert "authorization" not in names and dict(headers)["X-Forwarded-For"] == "127.0.0.1"
        async with client.post(proxy.url + "x", headers=auth(proxy)) as r:
            assert r.status == 201


async def test_handler_failures(client: aiohttp.ClientSession) -> None:
    errors: list[BaseException] = []
    mode = "ok"

    async def handler(method: str, path_qs: str, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
        if mode == "raise":
            raise RuntimeError("guest trapped")
        if mode == "hang":
            await asyncio.sleep(10)
        if mode == "bad":
            return 42, [], b""
        if mode == "big":
            return 200, [], b"z" * 5000
        return 200, [], b"ok"

    cfg = ProxyConfig(idle_timeout=0.3, max_response_body=1000, max_request_body=100)
    async with await start_proxy(cfg, HandlerUpstream(handler=handler), on_upstream_error=errors.append) as proxy:
        for mode, status in [("ok", 200), ("raise", 502), ("hang", 504), ("bad", 502), ("big", 502)]:
            async with client.get(proxy.url, headers=auth(proxy)) as r:
                assert r.status == status, mode
        async with client.post(proxy.url, headers=auth(proxy), data=b"q" * 101) as r:
            assert r.status == 413
    assert [type(e).__name__ for e in errors] == ["RuntimeError", "TimeoutError", "TypeError"]


async def test_handler_concurrency(client: aiohttp.ClientSession) -> None:
    async def handler(method: str, path_qs: str, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
        await asyncio.sleep(0.001)
        return 200, [("Content-Type", "application/json")], json.dumps({"p": path_qs}).encode()

    cfg = ProxyConfig(rate=10_000, burst=10_000)
    async with (
        await start_proxy(cfg, HandlerUpstream(handler=handler)) as proxy,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=50)) as session,
    ):

        async def one(i: int) -> None:
            async with session.get(proxy.url + f"n/{i}", headers=auth(proxy)) as r:
                assert (await r.json()) == {"p": f"/n/{i}"}

        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(200))), 60)


async def test_bad_arguments() -> None:
    from playground.serve import InvalidServeOptions

    with pytest.raises(InvalidServeOptions):
        await start_proxy({"bind": "127.0.0.1"}, TCPUpstream(host="127.0.0.1", port=1))  # type: ignore[arg-type]
    with pytest.raises(InvalidServeOptions):
        await start_proxy(ProxyConfig(), ("127.0.0.1", 1))  # type: ignore[arg-type]
