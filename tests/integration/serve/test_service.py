"""``Sandbox.serve``: the core's orchestration of a guest server and its proxies.

The guest here is scripted (a fake serve backend: an in-process handler or
a plain asyncio TCP server on 127.0.0.1); the proxy in front of it is the
real aiohttp one. Real guests are tested with their backends.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from playground.core import (
    AuthMode,
    Headers,
    Outcome,
    Pack,
    PortMap,
    Sandbox,
    ServeError,
    ServeOpts,
    ServeRequest,
    ServiceNotReady,
    Spec,
    TCPAddress,
    TCPReady,
    Unsupported,
    Upstream,
    WasmSpec,
)
from playground.serve import start_service_proxy
from tests.fake_backend import FakeBackend

PACK = Pack(name="web", wasm=WasmSpec(module=None))


class FakeGuest:
    def __init__(self, request: ServeRequest, mode: str) -> None:
        self.request = request
        self.mode = mode
        self.exited: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.stops = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> None:
        if self.mode == "tcp":
            self.server = await asyncio.start_server(self._serve_tcp, "127.0.0.1", 0)

    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = b"tcp guest"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    async def handle(self, method: str, path: str, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
        self.request.logs.write_stdout(f"{method} {path}\n".encode())
        if path == "/crash":
            self.exited.set_result(Outcome(exit_code=3))
        names = {k.lower() for k, _ in headers}
        return 200, [("Content-Type", "text/plain")], f"handler saw auth={'authorization' in names}".encode()

    def upstream(self, guest_port: int) -> Upstream:
        if self.mode == "tcp":
            assert self.server is not None
            return TCPAddress("127.0.0.1", self.server.sockets[0].getsockname()[1])
        if self.mode == "dead":
            return TCPAddress("127.0.0.1", 9)  # discard port: nothing listens there
        return self.handle

    async def wait(self) -> Outcome:
        return await self.exited

    async def stop(self) -> None:
        self.stops += 1
        if self.server is not None:
            self.server.close()
        if not self.exited.done():
            self.exited.cancel()


class FakeServeBackend(FakeBackend):
    def __init__(self, mode: str = "handler") -> None:
        super().__init__("wasm")
        self.mode = mode
        self.guests: list[FakeGuest] = []

    def serve_unavailable_reason(self, pack: Pack) -> str | None:
        return None

    async def serve(self, request: ServeRequest) -> FakeGuest:
        guest = FakeGuest(request, self.mode)
        await guest.start()
        self.guests.append(guest)
        return guest


async def get(url: str, token: str | None = None, path: str = "") -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as client, client.get(url.rstrip("/") + path, headers=headers) as response:
        return response.status, await response.text()


async def test_handler_service_with_token() -> None:
    backend = FakeServeBackend()
    sb = Sandbox(backends=[backend], packs=[PACK], proxy_starter=start_service_proxy)
    async with await sb.serve(Spec(lang="web", code="app"), ServeOpts(ports=(PortMap(guest=80),))) as service:
        assert service.url.startswith("http://127.0.0.1:")
        assert service.token and len(service.token) >= 43
        assert service.url_for(80) == service.url
        assert service.addr(80).startswith("127.0.0.1:")
        assert await get(service.url, service.token, "/hello") == (200, "handler saw auth=False")
        assert (await get(service.url, None))[0] == 401
        assert (await get(service.url, "wrong"))[0] == 401
        assert "GET /hello" in service.logs()
        assert "/hello" in service.recent_logs()
        with pytest.raises(ServeError):
            service.url_for(81)
    assert service.done.is_set() and service.err is None
    assert backend.guests[0].stops == 1
    await service.stop()
    assert backend.guests[0].stops == 1


async def test_tcp_upstream_service() -> None:
    sb = Sandbox(backends=[FakeServeBackend("tcp")], packs=[PACK], proxy_starter=start_service_proxy)
    service = await sb.serve(Spec(lang="web", code="app"))
    try:
        assert await get(service.url, service.token) == (200, "tcp guest")
    finally:
        await service.stop()


async def test_guest_exit_ends_the_service_with_err() -> None:
    backend = FakeServeBackend()
    sb = Sandbox(backends=[backend], packs=[PACK], proxy_starter=start_service_proxy)
    service = await sb.serve(Spec(lang="web", code="app"))
    await get(service.url, service.token, "/crash")
    err = await asyncio.wait_for(service.wait(), 5)
    assert isinstance(err, ServeError) and "code 3" in str(err)
    assert backend.guests[0].stops == 1
    with pytest.raises(aiohttp.ClientConnectionError):
        await get(service.url, service.token)


async def test_ttl_stops_the_service() -> None:
    backend = FakeServeBackend()
    sb = Sandbox(backends=[backend], packs=[PACK], proxy_starter=start_service_proxy)
    service = await sb.serve(Spec(lang="web", code="app"), ServeOpts(ttl=0.3))
    assert await asyncio.wait_for(service.wait(), 5) is None
    assert backend.guests[0].stops == 1


async def test_readiness_failure_stops_the_guest_and_hands_out_nothing() -> None:
    backend = FakeServeBackend("dead")
    sb = Sandbox(backends=[backend], packs=[PACK], proxy_starter=start_service_proxy)
    with pytest.raises(ServiceNotReady):
        await sb.serve(Spec(lang="web", code="app"), ServeOpts(ready=TCPReady(timeout=0.3)))
    assert backend.guests[0].stops == 1


async def test_no_auth_must_be_asked_for() -> None:
    sb = Sandbox(backends=[FakeServeBackend()], packs=[PACK], proxy_starter=start_service_proxy)
    async with await sb.serve(Spec(lang="web", code="app"), ServeOpts(auth=AuthMode.NONE)) as service:
        assert service.token is None
        assert (await get(service.url))[0] == 200


async def test_backend_without_serve_is_unsupported() -> None:
    sb = Sandbox(backends=[FakeBackend("wasm")], packs=[PACK])
    with pytest.raises(Unsupported, match="serve"):
        await sb.serve(Spec(lang="web", code="app"))


@pytest.mark.parametrize(
    "kwargs",
    [{"ports": ()}, {"ports": (PortMap(guest=80), PortMap(guest=80))}, {"bind": "localhost"}, {"ttl": 0},
     {"auth": AuthMode.NONE, "token": "abc"}, {"max_connections": 0}, {"rate": -1}],
)
def test_bad_serve_opts(kwargs: dict[str, object]) -> None:
    from playground.core import InvalidServeOptions

    with pytest.raises(InvalidServeOptions):
        ServeOpts(**kwargs)  # type: ignore[arg-type]


async def test_a_sandbox_without_a_proxy_cannot_serve_and_starts_nothing() -> None:
    """The core imports no proxy: serving needs one handed in (``default_sandbox`` does)."""
    backend = FakeServeBackend()
    sb = Sandbox(backends=[backend], packs=[PACK])
    with pytest.raises(Unsupported, match="proxy_starter"):
        await sb.serve(Spec(lang="web", code="app"))
    assert backend.guests == []


def test_the_default_sandbox_is_handed_the_serve_proxy() -> None:
    from playground import assembly

    sb = assembly.default_sandbox()
    try:
        assert sb._proxy_starter is assembly.serve_proxy
        assert sb.with_policy(sb.policy)._proxy_starter is assembly.serve_proxy
    finally:
        sb.close()
