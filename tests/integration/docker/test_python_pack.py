"""CPython on the Docker tier: plain runs, and a stdlib http.server served through the proxy."""

from __future__ import annotations

import aiohttp
import pytest

from backends.docker.engine import Engine
from backends.docker.profile import EngineKind
from playground.core import Limits, PortMap, Sandbox, ServeOpts, Spec
from playground.packs import python

from .conftest import require_image

SERVER = """
import http.server, socketserver

class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = f"python says hi at {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

with socketserver.TCPServer(("0.0.0.0", 8000), Hello) as server:
    print("serving", flush=True)
    server.serve_forever()
"""


MULTIPROCESSING = """
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

def square(n):
    return n * n

if __name__ == "__main__":
    with mp.Pool(2) as pool:
        print("pool", pool.map(square, range(5)))
    with ProcessPoolExecutor(2) as ex:
        print("executor", list(ex.map(square, [7, 8])))
    queue, lock = mp.Queue(), mp.Lock()
    with lock:
        worker = mp.Process(target=queue.put, args=("from a child",))
        worker.start()
        print("queue", queue.get(timeout=10))
        worker.join()
"""


async def test_multiprocessing_works(engine: Engine, sandbox: Sandbox) -> None:
    """Pool, ProcessPoolExecutor, Queue and Lock need POSIX semaphores (``/dev/shm``): the Wasm tier's hint
    for ``multiprocessing`` sends programs here."""
    require_image(engine, python.PACK)
    result = await sandbox.run(Spec(lang="python", code=MULTIPROCESSING, limits=Limits(wall_time=60)))
    assert result.backend == "docker"
    assert result.stdout == b"pool [0, 1, 4, 9, 16]\nexecutor [49, 64]\nqueue from a child\n", result.stderr
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "case",
    [
        ("import turtle\nturtle.forward(10)", b"no display name", python.NO_WINDOW),
        ("import tkinter\ntkinter.Tk()", b"no display name", python.NO_WINDOW),
        ("import curses\ncurses.initscr()", b"_curses.error: setupterm", python.NO_TERMINAL),
    ],
    ids=["turtle", "tkinter", "curses"],
)
async def test_a_window_or_a_terminal_fails_here_too_and_the_hint_says_so(
    engine: Engine, engine_kind: EngineKind, sandbox: Sandbox, case: tuple[str, bytes, str]
) -> None:
    """The Wasm tier's hint no longer sends these programs here: the container has no display and no
    terminal either (``Pack.nowhere``); the hint says that on this tier too."""
    require_image(engine, python.PACK)
    code, error, hint = case
    if engine_kind is EngineKind.PODMAN and b"curses" in error:
        pytest.skip("Podman gives every container TERM=xterm: curses starts, drawing escape codes into the output")
    spec = Spec(lang="python", code=code)
    result = await sandbox.run(spec)
    assert result.backend == "docker" and result.exit_code == 1 and error in result.stderr, result.stderr[-2000:]
    assert sandbox.hint(spec, result) == hint


async def test_python_runs_in_a_container(engine: Engine, sandbox: Sandbox) -> None:
    require_image(engine, python.PACK)
    result = await sandbox.run(Spec(lang="python", code="import sys, os\nprint(sys.version_info[0], os.getuid())"))
    assert result.backend == "docker"
    assert result.stdout == b"3 65534\n", result.stderr


async def test_python_http_server_behind_the_proxy(engine: Engine, sandbox: Sandbox) -> None:
    require_image(engine, python.PACK)
    opts = ServeOpts(ports=(PortMap(guest=8000),), ttl=60)
    service = await sandbox.serve(Spec(lang="python", code=SERVER, limits=Limits(wall_time=30.0)), opts)
    try:
        headers = {"Authorization": f"Bearer {service.token}"}
        async with aiohttp.ClientSession() as client:
            async with client.get(service.url + "hello", headers=headers) as response:
                assert response.status == 200
                assert await response.text() == "python says hi at /hello"
            async with client.get(service.url) as response:
                assert response.status == 401
        assert "serving" in service.logs()
    finally:
        await service.stop()
