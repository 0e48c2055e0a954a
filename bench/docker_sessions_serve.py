"""Docker tier: REPL session start and eval latency (bash, node), and serve time to first response.

    .venv/bin/python bench/docker_sessions_serve.py          # 50 evals per language, 5 serves

Images: ``PLAYGROUND_IMAGE_<LANG>`` or ``playground-<lang>:local``. Needs a
daemon. The serve client talks only to the proxy on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp

from backends.docker import DockerBackend
from backends.docker.images import env_var
from playground.core import DOCKER_ONLY, Sandbox, ServeOpts, Spec
from playground.packs import bash, node
from playground.serve import start_service_proxy

EVALS = {"bash": ("n=0", "n=$((n + 1)); echo $n"), "node": ("let n = 0", "++n")}
SERVER = "require('http').createServer((q, s) => s.end('ok')).listen(8080)"


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=50, help="evals per language")
    parser.add_argument("--serves", type=int, default=5)
    args = parser.parse_args()
    for pack in (bash.PACK, node.PACK):
        os.environ.setdefault(env_var(pack.name), f"playground-{pack.name}:local")
    backend = DockerBackend()
    sandbox = Sandbox(
        backends=[backend], packs=[bash.PACK, node.PACK], policy=DOCKER_ONLY, proxy_starter=start_service_proxy
    )
    try:
        for lang, (setup, step) in EVALS.items():
            started = time.perf_counter()
            session = await sandbox.new_session(lang)
            start = time.perf_counter() - started
            await session.eval(setup)
            times = []
            for _ in range(args.n):
                t0 = time.perf_counter()
                await session.eval(step)
                times.append(time.perf_counter() - t0)
            session.close()
            print(
                f"session {lang}: start {start * 1000:.0f} ms; eval p50 {statistics.median(times) * 1000:.1f} ms, "
                f"p95 {pct(times, 0.95) * 1000:.1f} ms ({args.n} evals)"
            )
        firsts = []
        async with aiohttp.ClientSession() as client:
            for _ in range(args.serves):
                t0 = time.perf_counter()
                service = await sandbox.serve(Spec(lang="node", code=SERVER), ServeOpts(ttl=60))
                async with client.get(service.url, headers={"Authorization": f"Bearer {service.token}"}) as r:
                    assert r.status == 200
                firsts.append(time.perf_counter() - t0)
                await service.stop()
        print(
            f"serve node: first response p50 {statistics.median(firsts) * 1000:.0f} ms, "
            f"max {max(firsts) * 1000:.0f} ms ({args.serves} services, start to first 200 through the proxy)"
        )
    finally:
        sandbox.close()


if __name__ == "__main__":
    asyncio.run(main())
