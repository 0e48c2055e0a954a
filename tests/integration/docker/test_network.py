"""``Spec.net`` on a real daemon: the guest reaches "the outside" only through the egress proxy.

Network rule: "the outside" is an aiohttp server on 127.0.0.1, reached by
test names that an injected resolver maps to 127.0.0.1 (``allow_private``
on). SSRF answers (metadata, private ranges) go to a recording connector that
must never be called. The guest uses Python's urllib (it honours the proxy
variables; Node 18's http does not) from the node image.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest
from aiohttp import web

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from backends.docker.profile import LABEL, EngineKind
from playground.core import DOCKER_ONLY, Limits, NetPolicy, Sandbox, Spec, TimeLimitExceeded
from playground.net import direct_connector
from playground.net.guard import IPAddress
from playground.packs import node

from .conftest import PACKS, TEST_LIMITS, require_image

#: Every test here must leave no network of ours behind.
pytestmark = pytest.mark.usefixtures("no_network_leaks")

NAMES = {
    "api.example.test": "127.0.0.1",
    "other.example.test": "127.0.0.1",
    "meta.example.test": "169.254.169.254",
    "intranet.example.test": "10.0.0.5",
}


class Recorder:
    """Resolver from ``NAMES`` and a connector that dials loopback only (anything else fails the test)."""

    def __init__(self) -> None:
        self.dialed: list[IPAddress] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        if host not in NAMES:
            raise OSError(f"no such test name {host}")
        return [NAMES[host]]

    async def connect(self, address: IPAddress, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        self.dialed.append(address)
        assert address.is_loopback, f"the egress proxy dialed {address}"
        return await direct_connector(address, port)


@pytest.fixture(autouse=True)
def node_image(engine: Engine) -> None:
    require_image(engine, node.PACK)


@pytest.fixture
async def outside() -> AsyncIterator[int]:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text=f"hello {request.host}")

    app = web.Application()
    app.router.add_get("/hello", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    assert site._server is not None
    yield int(site._server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]
    await runner.cleanup()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def net_sandbox(recorder: Recorder, network_policy_supported: None) -> Iterator[Sandbox]:
    backend = DockerBackend(packs=PACKS, net_resolver=recorder.resolve, net_connector=recorder.connect)
    sb = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    yield sb
    sb.close()


def fetch_all(urls: list[str], *, proxy: str = "env") -> str:
    """Node code that runs Python's urllib on each URL and prints status or error, one line each."""
    handler = "" if proxy == "env" else f"urllib.request.install_opener(urllib.request.build_opener({proxy}))\n"
    script = (
        "import os, urllib.request, urllib.error\n"
        + handler
        + f"for u in {urls!r}:\n"
        + "    try:\n"
        + "        r = urllib.request.urlopen(u, timeout=10); print(r.status, r.read().decode())\n"
        + "    except urllib.error.HTTPError as e: print(e.code)\n"
        + "    except Exception as e: print('ERR', type(e).__name__)\n"
    )
    return (
        "require('child_process').execFileSync('python3', ['-c', " + repr(script) + "], {stdio: 'inherit'})"
    )


async def test_allowed_host_works_and_denied_host_is_refused(net_sandbox: Sandbox, outside: int) -> None:
    policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(outside,), allow_private=True)
    urls = [f"http://api.example.test:{outside}/hello", f"http://other.example.test:{outside}/hello"]
    result = await net_sandbox.run(Spec(lang="node", code=fetch_all(urls), net=policy))
    assert result.stdout.decode().splitlines() == [f"200 hello api.example.test:{outside}", "403"], result.stderr
    allowed, denied = result.net_log
    assert (allowed.method, allowed.url, allowed.status_code, allowed.error) == ("GET", urls[0], 200, "")
    assert allowed.bytes_transferred > 0
    assert denied.url == urls[1] and denied.status_code == 403 and "not in allow_hosts" in denied.error


async def test_ssrf_to_metadata_and_private_ranges_is_refused_before_connecting(
    net_sandbox: Sandbox, recorder: Recorder
) -> None:
    policy = NetPolicy(allow_hosts=("*.example.test", "169.254.169.254"), allow_ports=(80,))
    urls = ["http://meta.example.test/latest/", "http://intranet.example.test/", "http://169.254.169.254/latest/"]
    result = await net_sandbox.run(Spec(lang="node", code=fetch_all(urls), net=policy))
    assert result.stdout.decode().splitlines() == ["403", "403", "403"], result.stderr
    assert recorder.dialed == []  # the guard refused every one before any connection
    assert [e.status_code for e in result.net_log] == [403, 403, 403]
    assert "169.254.169.254" in result.net_log[0].error and "10.0.0.5" in result.net_log[1].error


async def test_max_requests(net_sandbox: Sandbox, outside: int) -> None:
    policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(outside,), max_requests=2, allow_private=True)
    url = f"http://api.example.test:{outside}/hello"
    result = await net_sandbox.run(Spec(lang="node", code=fetch_all([url, url, url]), net=policy))
    assert [line.split()[0] for line in result.stdout.decode().splitlines()] == ["200", "200", "429"]
    assert [e.status_code for e in result.net_log] == [200, 200, 429]
    assert "max_requests" in result.net_log[2].error


async def test_the_proxy_needs_the_run_token(net_sandbox: Sandbox, outside: int) -> None:
    """Without the credentials from HTTP_PROXY (another guest's view) the proxy answers 407."""
    policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(outside,), allow_private=True)
    no_creds = "urllib.request.ProxyHandler({'http': 'http://' + os.environ['HTTP_PROXY'].split('@')[1]})"
    code = fetch_all([f"http://api.example.test:{outside}/hello"], proxy=no_creds)
    result = await net_sandbox.run(Spec(lang="node", code=code, net=policy))
    assert result.stdout == b"407\n", result.stderr
    assert [e.status_code for e in result.net_log] == [407]


async def test_bypassing_the_proxy_reaches_nothing(net_sandbox: Sandbox, outside: int) -> None:
    """A direct connection to the test server (bound to the host's loopback) is impossible from the guest."""
    policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(outside,), allow_private=True)
    code = (
        "const gw = new URL(process.env.HTTP_PROXY).hostname; const net = require('net');"
        f"for (const h of ['127.0.0.1', gw]) {{ const s = net.connect({outside}, h);"
        " s.on('connect', () => { console.log(h === gw ? 'gw' : h, 'connected'); s.destroy(); });"
        " s.on('error', e => console.log(h === gw ? 'gw' : h, e.code)); }"
    )
    result = await net_sandbox.run(Spec(lang="node", code=code, net=policy))
    assert sorted(result.stdout.decode().splitlines()) == ["127.0.0.1 ECONNREFUSED", "gw ECONNREFUSED"]
    assert result.net_log == ()


async def test_limit_error_keeps_the_net_log(net_sandbox: Sandbox, outside: int) -> None:
    policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(outside,), allow_private=True)
    code = fetch_all([f"http://api.example.test:{outside}/hello"]) + "; for (;;) {}"
    with pytest.raises(TimeLimitExceeded) as info:
        await net_sandbox.run(Spec(lang="node", code=code, net=policy, limits=Limits(wall_time=3)))
    assert info.value.result is not None
    assert [e.status_code for e in info.value.result.net_log] == [200]


async def test_cancel_removes_the_network(net_sandbox: Sandbox, engine: Engine, outside: int) -> None:
    policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(outside,), allow_private=True)
    before = {n.id for n in engine.networks(label=LABEL)}
    task = asyncio.create_task(net_sandbox.run(Spec(lang="node", code="setTimeout(() => {}, 60000)", net=policy)))
    deadline = time.monotonic() + 20
    while not {n.id for n in engine.networks(label=LABEL)} - before:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert {n.id for n in engine.networks(label=LABEL)} == before


async def test_no_policy_keeps_network_mode_none(sandbox: Sandbox, engine: Engine, engine_kind: EngineKind) -> None:
    code = (
        "console.log(require('fs').readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2).filter(Boolean)"
        ".map(l => l.split(':')[0].trim()).join())"
    )
    result = await sandbox.run(Spec(lang="node", code=code))
    assert result.stdout == b"lo\n" and result.net_log == ()
    if engine_kind is EngineKind.PODMAN:
        return  # network policies are refused there (test_podman.py)
    with_policy = await sandbox.run(Spec(lang="node", code=code, net=NetPolicy(allow_hosts=("x.test",))))
    assert sorted(with_policy.stdout.decode().strip().split(",")) == ["eth0", "lo"]
