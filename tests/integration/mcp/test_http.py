"""The streamable HTTP transport: token required, Host/Origin checked, loopback only unless asked.

Each test starts ``playground mcp --http --port 0`` (the venv's console
script, on the real default sandbox) in a subprocess and talks only to
127.0.0.1.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_support import PLAYGROUND, ROOT

pytestmark = pytest.mark.timeout(120)

TOKEN = "test-token-0123456789abcdef"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    port: int
    stderr: list[str] = field(default_factory=list)


def _start(*flags: str, env: dict[str, str] | None = None) -> Served:
    proc = subprocess.Popen(
        [str(PLAYGROUND), "mcp", "--http", "--port", "0", *flags],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stderr is not None
    lines: list[str] = []
    url = ""
    for line in proc.stderr:
        lines.append(line)
        if match := re.search(r"at (http://127\.0\.0\.1:(\d+)/mcp)", line):
            url = match.group(1)
            break
    if not url:
        proc.wait(timeout=10)
        raise AssertionError("server did not start:\n" + "".join(lines))
    served = Served(proc=proc, url=url, port=int(url.split(":")[2].split("/")[0]), stderr=lines)

    def drain() -> None:
        assert proc.stderr is not None
        for rest in proc.stderr:
            served.stderr.append(rest)

    threading.Thread(target=drain, daemon=True).start()
    return served


def _stop(served: Served) -> None:
    served.proc.terminate()
    try:
        served.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        served.proc.kill()
        served.proc.wait()
    assert served.proc.stdout is not None
    assert served.proc.stdout.read() == "", "the HTTP server wrote to stdout"


@pytest.fixture
def server() -> Iterator[Served]:
    served = _start("--token", TOKEN)
    yield served
    _stop(served)


def _post(served: Served, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(served.url, json=INIT, headers={**ACCEPT, **headers}, timeout=30)


def test_no_token_is_refused(server: Served) -> None:
    response = _post(server, {})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("auth", [f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer", f"Basic {TOKEN}", TOKEN,
                                  f"Bearer {TOKEN} {TOKEN}"])
def test_wrong_token_is_refused(server: Served, auth: str) -> None:
    assert _post(server, {"Authorization": auth}).status_code == 401


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost:{port}0", ""])
def test_foreign_host_is_refused_even_with_the_token(server: Served, host: str) -> None:
    response = _post(server, {"Authorization": f"Bearer {TOKEN}", "Host": host.format(port=server.port)})
    assert response.status_code in (400, 421)


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                                    "http://localhost:{port}.evil.example", "null"])
def test_foreign_origin_is_refused_even_with_the_token(server: Served, origin: str) -> None:
    response = _post(server, {"Authorization": f"Bearer {TOKEN}", "Origin": origin.format(port=server.port)})
    assert response.status_code == 403


def test_own_host_and_origin_with_the_token_are_accepted(server: Served) -> None:
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        response = _post(server, {"Authorization": f"Bearer {TOKEN}", "Host": host, "Origin": f"http://{host}"})
        assert response.status_code == 200, response.text


async def test_sdk_client_with_the_token_initializes_and_lists_tools(server: Served) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        tools = await client.list_tools()
        languages = await client.call_tool("list_languages", {})
    assert {t.name for t in tools.tools} == {"execute_code", "eval_session", "close_session", "list_languages"}
    assert not languages.is_error


async def test_sdk_client_without_the_token_cannot_connect(server: Served) -> None:
    with pytest.raises(BaseException):  # noqa: B017 - the SDK surfaces the 401 as an exception group
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            await client.list_tools()


def test_generated_token_is_printed_to_stderr_and_works() -> None:
    served = _start()
    try:
        text = "".join(served.stderr)
        match = re.search(r"bearer token \(send 'Authorization: Bearer <token>'\): (\S+)", text)
        assert match, text
        token = match.group(1)
        assert len(token) >= 32
        assert _post(served, {"Authorization": f"Bearer {token}"}).status_code == 200
        assert _post(served, {}).status_code == 401
    finally:
        _stop(served)


def test_token_from_the_environment() -> None:
    served = _start(env={"PLAYGROUND_MCP_TOKEN": "from-the-environment-123"})
    try:
        assert "bearer token" not in "".join(served.stderr)  # not generated, so not printed
        assert _post(served, {"Authorization": "Bearer from-the-environment-123"}).status_code == 200
    finally:
        _stop(served)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--host", "0.0.0.0"), "non-loopback"),
        (("--host", "192.0.2.1", "--token", TOKEN), "non-loopback"),
        (("--token", "short"), "at least 16"),
    ],
)
def test_bad_http_setups_are_refused(flags: tuple[str, ...], message: str) -> None:
    proc = subprocess.run([str(PLAYGROUND), "mcp", "--http", *flags], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 2 and message in proc.stderr and proc.stdout == ""
