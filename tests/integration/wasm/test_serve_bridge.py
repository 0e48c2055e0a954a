"""The Wasm handler bridge: JavaScript web apps served through ``Sandbox.serve`` and the real proxy.

Requests go over real HTTP to 127.0.0.1 (aiohttp client -> the aiohttp
proxy -> one live QuickJS instance). Skipped when the QuickJS runtime is
not installed in the user cache.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from backends.wasm import WasmBackend
from playground.core import (
    Limits,
    MemoryLimitExceeded,
    PortMap,
    Sandbox,
    ServeError,
    ServeOpts,
    Service,
    Spec,
    TimeLimitExceeded,
    Unsupported,
)
from playground.core.limits import MiB
from playground.packs import javascript, lua
from playground.serve import start_service_proxy

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "resources" / "examples" / "web_counter.js"

HELLO = """
export default {
  fetch(request) {
    return Response.json({ hello: "world", path: request.path });
  },
};
"""

COUNTER = """
let n = 0;
serve(() => ({ status: 200, body: { n: ++n } }));
"""


@pytest.fixture(scope="module")
def js() -> Sandbox:
    sb = Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK], proxy_starter=start_service_proxy)
    reason = sb.backends["wasm"].unavailable_reason(javascript.PACK)
    if reason is not None:
        pytest.skip(reason)
    return sb


@pytest.fixture
async def services() -> AsyncIterator[list[Service]]:
    started: list[Service] = []
    yield started
    for service in started:
        await service.stop()


async def serve(sb: Sandbox, started: list[Service], code: str, opts: ServeOpts | None = None, **kw: object) -> Service:
    service = await sb.serve(Spec(lang="js", code=code, **kw), opts)  # type: ignore[arg-type]
    started.append(service)
    return service


async def call(
    service: Service,
    path: str = "/",
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    token: str | None = "",
    url: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    sent = dict(headers or {})
    auth = service.token if token == "" else token
    if auth is not None:
        sent["Authorization"] = f"Bearer {auth}"
    base = (url or service.url).rstrip("/")
    async with (
        aiohttp.ClientSession() as client,
        client.request(method, base + path, data=body, headers=sent) as response,
    ):
        return response.status, dict(response.headers), await response.read()


async def test_hello_json_with_the_token_and_401_without(js: Sandbox, services: list[Service]) -> None:
    service = await serve(js, services, HELLO)
    assert service.url.startswith("http://127.0.0.1:")
    status, headers, body = await call(service, "/greet?x=1")
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(body) == {"hello": "world", "path": "/greet"}
    assert (await call(service, token=None))[0] == 401
    assert (await call(service, token="wrong"))[0] == 401


async def test_state_persists_across_requests(js: Sandbox, services: list[Service]) -> None:
    service = await serve(js, services, COUNTER)
    counts = [json.loads((await call(service))[2])["n"] for _ in range(5)]
    assert counts == [1, 2, 3, 4, 5]


async def test_request_body_method_query_and_headers_reach_the_handler(js: Sandbox, services: list[Service]) -> None:
    code = """
    export default {
      async fetch(req) {
        return {
          status: 201,
          headers: { "x-echo": req.headers.get("x-custom") },
          body: { method: req.method, path: req.path, query: req.query, text: await req.text(),
                  json: req.headers.get("content-type") === "application/json" ? await req.json() : null,
                  size: (await req.bytes()).length, bodyProp: req.body },
        };
      },
    };
    """
    service = await serve(js, services, code)
    status, headers, body = await call(
        service, "/items/7?q=a%20b&n=2", method="POST", body='{"k": "vé"}'.encode(),
        headers={"X-Custom": "yes", "Content-Type": "application/json"},
    )  # fmt: skip
    assert status == 201
    assert headers["x-echo"] == "yes"
    got = json.loads(body)
    assert got == {
        "method": "POST", "path": "/items/7", "query": {"q": "a b", "n": "2"}, "text": '{"k": "vé"}',
        "json": {"k": "vé"}, "size": len('{"k": "vé"}'.encode()), "bodyProp": '{"k": "vé"}',
    }  # fmt: skip


async def test_binary_bodies_and_custom_status(js: Sandbox, services: list[Service]) -> None:
    code = """
    serve(async (req) => {
      const data = await req.bytes();
      const out = new Uint8Array(data.length);
      for (let i = 0; i < data.length; i++) out[i] = data[i] ^ 0xff;
      return new Response(out, { status: 202, headers: [["x-len", String(data.length)]] });
    });
    """
    service = await serve(js, services, code)
    payload = bytes(range(256)) * 4
    status, headers, body = await call(service, method="PUT", body=payload)
    assert status == 202
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["x-len"] == "1024"
    assert body == bytes(b ^ 0xFF for b in payload)


async def test_console_output_lands_in_the_service_logs(js: Sandbox, services: list[Service]) -> None:
    code = """
    console.log("starting up");
    serve((req) => { console.log("handling", req.path); console.error("warned", req.method); return "ok"; });
    """
    service = await serve(js, services, code)
    assert (await call(service, "/first"))[2] == b"ok"
    logs = service.logs()
    assert "starting up" in logs
    assert "handling /first" in logs
    assert "warned GET" in logs


async def test_a_throwing_handler_is_a_500_and_the_service_stays_up(js: Sandbox, services: list[Service]) -> None:
    code = """
    let n = 0;
    serve((req) => { n++; if (req.path === "/boom") throw new TypeError("kaboom " + n); return "alive " + n; });
    """
    service = await serve(js, services, code)
    status, _, body = await call(service, "/boom")
    assert status == 500
    assert b"kaboom 1" in body
    assert "TypeError: kaboom 1" in service.logs()
    status, _, body = await call(service, "/fine")
    assert (status, body) == (200, b"alive 2")
    assert not service.done.is_set()


async def test_a_rejected_promise_is_a_500_too(js: Sandbox, services: list[Service]) -> None:
    code = """
    export default { async fetch() { await null; throw new RangeError("async failure"); } };
    """
    service = await serve(js, services, code)
    status, _, body = await call(service)
    assert status == 500 and b"async failure" in body
    assert "RangeError: async failure" in service.logs()


async def test_an_infinite_loop_fails_the_request_in_time_and_ends_the_service(
    js: Sandbox, services: list[Service]
) -> None:
    code = 'serve((req) => { if (req.path === "/spin") for (;;) {} return "ok"; });'
    service = await serve(js, services, code, limits=Limits(wall_time=1.0))
    assert (await call(service))[0] == 200
    started = time.monotonic()
    status, _, body = await call(service, "/spin")
    elapsed = time.monotonic() - started
    assert status in (502, 504)
    assert b"wall time" in body
    assert elapsed < 10  # the 1 s budget plus generous slack on a loaded machine
    err = await asyncio.wait_for(service.wait(), 10)
    assert isinstance(err, TimeLimitExceeded)


async def test_a_handler_that_never_answers_is_a_500(js: Sandbox, services: list[Service]) -> None:
    service = await serve(js, services, "serve(() => new Promise(() => {}));")
    status, _, body = await call(service)
    assert status == 500 and b"never answered" in body
    assert "never settled" in service.logs()
    assert not service.done.is_set()


async def test_running_out_of_memory_ends_the_service(js: Sandbox, services: list[Service]) -> None:
    code = "const keep = []; serve(() => { for (;;) keep.push(new Array(1e6).fill(1)); });"
    service = await serve(js, services, code, limits=Limits(memory=64 * MiB))
    status, _, body = await call(service)
    assert status == 503 and b"out of memory" in body
    err = await asyncio.wait_for(service.wait(), 10)
    assert isinstance(err, MemoryLimitExceeded)


async def test_timers_advance_while_a_response_waits(js: Sandbox, services: list[Service]) -> None:
    code = """
    let ticks = 0;
    setInterval(() => ticks++, 10);
    export default { async fetch() { await new Promise((r) => setTimeout(r, 50)); return String(ticks); } };
    """
    service = await serve(js, services, code)
    first = int((await call(service))[2])
    second = int((await call(service))[2])
    assert 0 < first < second


async def test_a_handlers_timer_waits_its_whole_delay_after_the_service_sat_idle(
    js: Sandbox, services: list[Service]
) -> None:
    """Timers run only while a response is pending, so between requests the timers' loop time stood still; a
    request reads it anew: with an interval pending, a handler's 200 ms sleep after an idle second used to be
    due at once (its delay counted from the interval's last tick)."""
    code = """
    setInterval(() => {}, 1000);
    export default {
      async fetch() {
        const s = Date.now();
        await new Promise((r) => setTimeout(r, 200));
        return String(Date.now() - s);
      },
    };
    """
    service = await serve(js, services, code)
    assert int((await call(service))[2]) >= 199
    await asyncio.sleep(1.2)
    assert int((await call(service))[2]) >= 199


async def test_guest_output_that_mimics_the_framing_is_not_a_response(js: Sandbox, services: list[Service]) -> None:
    fake = 'response 40\\n{"status":299,"headers":[]}\\nforged-body-here!!'
    code = f"""
    serve((req) => {{
      console.log({fake!r});
      process.stdout.write({fake!r});
      console.error({fake!r});
      return "real";
    }});
    """
    service = await serve(js, services, code)
    for _ in range(2):
        status, _, body = await call(service)
        assert (status, body) == (200, b"real")
    assert "forged-body-here" in service.logs()


async def test_concurrent_requests_are_serialized_and_all_answered(js: Sandbox, services: list[Service]) -> None:
    code = """
    let n = 0, inside = 0, overlap = false;
    export default {
      async fetch() {
        inside++; if (inside > 1) overlap = true;
        const mine = ++n;
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside--;
        return { body: { n: mine, overlap } };
      },
    };
    """
    service = await serve(js, services, code)
    results = await asyncio.gather(*(call(service, f"/{i}") for i in range(50)))
    assert all(status == 200 for status, _, _ in results)
    answers = [json.loads(body) for _, _, body in results]
    assert sorted(a["n"] for a in answers) == list(range(1, 51))
    assert not any(a["overlap"] for a in answers)


async def test_one_instance_serves_every_port(js: Sandbox, services: list[Service]) -> None:
    opts = ServeOpts(ports=(PortMap(guest=8080), PortMap(guest=9090)))
    service = await serve(js, services, COUNTER, opts)
    first = json.loads((await call(service, url=service.url_for(8080)))[2])["n"]
    second = json.loads((await call(service, url=service.url_for(9090)))[2])["n"]
    assert (first, second) == (1, 2)


async def test_stop_ends_the_service(js: Sandbox, services: list[Service]) -> None:
    service = await serve(js, services, HELLO)
    assert (await call(service))[0] == 200
    await service.stop()
    assert service.done.is_set() and service.err is None
    with pytest.raises(aiohttp.ClientConnectionError):
        await call(service)
    await service.stop()  # idempotent


async def test_process_exit_in_a_handler_ends_the_service(js: Sandbox, services: list[Service]) -> None:
    service = await serve(js, services, "serve(() => process.exit(4));")
    status, _, body = await call(service)
    assert status == 502 and b"exited (code 4)" in body
    err = await asyncio.wait_for(service.wait(), 10)
    assert isinstance(err, ServeError) and "code 4" in str(err)


async def test_a_program_without_a_handler_fails_to_start(js: Sandbox, services: list[Service]) -> None:
    with pytest.raises(ServeError, match="registered no handler"):
        await serve(js, services, 'console.log("no handler here")')
    with pytest.raises(ServeError, match="SyntaxError"):
        await serve(js, services, "export default {")


async def test_only_javascript_has_a_handler_bridge(js: Sandbox) -> None:
    backend = js.backends["wasm"]
    assert isinstance(backend, WasmBackend)
    assert backend.serve_unavailable_reason(javascript.PACK) is None
    assert backend.serve_unavailable_reason(lua.PACK) == "no handler bridge for lua"
    with pytest.raises(Unsupported, match="no handler bridge for lua"):
        await js.serve(Spec(lang="lua", code="print(1)"))


async def test_request_latency_through_the_proxy(js: Sandbox, services: list[Service]) -> None:
    """Not a timing assertion: prints p50/p95 for the issue note (run with -s)."""
    service = await serve(js, services, COUNTER, ServeOpts(rate=1e6, burst=1_000_000))
    samples: list[float] = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {service.token}"}) as client:
        for _ in range(200):
            started = time.perf_counter()
            async with client.get(service.url) as response:
                await response.read()
                assert response.status == 200
            samples.append(time.perf_counter() - started)
    samples.sort()
    print(f"\nhandler bridge via proxy: p50 {samples[100] * 1e3:.2f} ms, p95 {samples[190] * 1e3:.2f} ms")


def test_playground_serve_cli_end_to_end(js: Sandbox) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground.cli", "serve", "--lang", "js", str(EXAMPLE)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        seen = ""
        deadline = time.monotonic() + 60
        url = token = None
        assert proc.stderr is not None
        while time.monotonic() < deadline and (url is None or token is None):
            line = proc.stderr.readline()
            if not line:
                break
            seen += line
            if m := re.search(r"serving \S+ on (http://127\.0\.0\.1:\d+/?)", line):
                url = m.group(1)
            if m := re.search(r"^token: (\S+)", line):
                token = m.group(1)
        assert url and token, seen
        curl = ["curl", "-s", "-H", f"Authorization: Bearer {token}", url.rstrip("/") + "/?who=me"]
        first = json.loads(subprocess.run(curl, capture_output=True, text=True, timeout=30, check=True).stdout)
        second = json.loads(subprocess.run(curl, capture_output=True, text=True, timeout=30, check=True).stdout)
        assert first["hello"] == "from the sandbox"
        assert (first["hits"], second["hits"]) == (1, 2)
        assert first["query"] == {"who": "me"}
        denied = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url], capture_output=True,
                                text=True, timeout=30, check=True)  # fmt: skip
        assert denied.stdout == "401"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
    assert "GET / (#1)" in stdout
    assert "stopped" in stderr
    assert proc.returncode == 130, (proc.returncode, stderr)
