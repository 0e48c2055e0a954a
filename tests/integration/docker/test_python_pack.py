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
