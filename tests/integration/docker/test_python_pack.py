"""CPython on the Docker tier: plain runs, and a stdlib http.server served through the proxy."""

from __future__ import annotations

import aiohttp

from backends.docker.engine import Engine
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
