"""Warm pool vs fresh containers vs ``docker run --rm``: a trivial program's latency, p50/p95, one run.

Sides, interleaved in blocks so machine noise hits all of them alike:

* ``fresh``: ``DockerBackend(pool_size=0)``, a container created per run (the path before the pool);
* ``pooled, ready``: ``pool_size=1``, each run starts once the pool has its container prepared
  again (a user who runs code every few seconds);
* ``pooled, back-to-back``: ``pool_size=1``, the next run right after the last (the refill may still
  be under way: the run waits for it);
* ``docker run --rm`` with the same hardening flags (``docker_coldstart.hardened_flags``).

Also printed: the memory a parked container uses (its cgroup, from the daemon's stats).

    .venv/bin/python bench/docker_pool.py            # bash, 20 runs per side
    .venv/bin/python bench/docker_pool.py -n 30 --lang node
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docker_coldstart import PROGRAMS, docker_run, hardened_flags, percentile

from backends.docker import DockerBackend
from backends.docker.images import env_var
from playground.core import DOCKER_ONLY, Sandbox, Spec

#: Runs per side in one block before the next side's block.
BLOCK = 5


async def wait_prepared(backend: DockerBackend, lang: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while backend.pool_status().prepared.get(lang, 0) < 1:
        if time.monotonic() > deadline:
            raise SystemExit("the pool never prepared a container")
        await asyncio.sleep(0.01)


async def timed(sandbox: Sandbox, lang: str, code: str) -> float:
    started = time.perf_counter()
    result = await sandbox.run(Spec(lang=lang, code=code))
    elapsed = time.perf_counter() - started
    assert result.stdout == b"hi\n", result
    return elapsed


async def measure(lang: str, code: str, image: str, argv: list[str], n: int) -> dict[str, list[float]]:
    pack = PROGRAMS[lang][0]
    fresh_backend = DockerBackend(packs=[pack], pool_size=0)
    pooled_backend = DockerBackend(packs=[pack], pool_size=1)
    fresh = Sandbox(backends=[fresh_backend], packs=[pack], policy=DOCKER_ONLY)
    pooled = Sandbox(backends=[pooled_backend], packs=[pack], policy=DOCKER_ONLY)
    times: dict[str, list[float]] = {k: [] for k in ("fresh", "ready", "back", "docker")}
    try:
        await fresh.run(Spec(lang=lang, code=code))  # connect, look the image up, and fill the pool once
        await pooled.run(Spec(lang=lang, code=code))
        flags = hardened_flags()
        while len(times["fresh"]) < n:
            k = min(BLOCK, n - len(times["fresh"]))
            for _ in range(k):
                times["fresh"].append(await timed(fresh, lang, code))
            for _ in range(k):
                await wait_prepared(pooled_backend, lang)
                await asyncio.sleep(0.2)  # the refill's own work has settled
                times["ready"].append(await timed(pooled, lang, code))
            await wait_prepared(pooled_backend, lang)
            for _ in range(k):
                times["back"].append(await timed(pooled, lang, code))
            times["docker"] += await asyncio.to_thread(docker_run, image, argv, flags, k)
        await wait_prepared(pooled_backend, lang)
        await asyncio.sleep(0.5)
        memory = pooled_backend._warm.idle_memory()
        prepared_now = sum(pooled_backend.pool_status().prepared.values())
    finally:
        started = time.perf_counter()
        pooled.close()  # closes its backend: the pool removes its prepared container
        close_s = time.perf_counter() - started
        fresh.close()
    print(f"idle memory of one prepared container (cgroup): {memory / (1 << 20):.1f} MiB" if memory else "no memory")
    print(f"close() of the pooled backend with {prepared_now} prepared container(s): {close_s * 1000:.0f} ms")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20, help="runs per side (default 20)")
    parser.add_argument("--lang", choices=sorted(PROGRAMS), default="bash")
    args = parser.parse_args()
    pack, code, argv = PROGRAMS[args.lang]
    image = os.environ.get(env_var(pack.name)) or f"playground-{pack.name}:local"
    os.environ[env_var(pack.name)] = image
    docker_run(image, argv, ["--network", "none"], 1)
    times = asyncio.run(measure(args.lang, code, image, argv, args.n))
    names = {
        "fresh": "ours, fresh container (pool 0)",
        "ready": "ours, pooled (prepared, ready)",
        "back": "ours, pooled (back-to-back)",
        "docker": "docker run --rm (same hardening)",
    }
    print(f"{args.lang} on {image}, {args.n} runs per side, interleaved in blocks of {BLOCK}")
    print(f"{'':36} {'p50':>8} {'p95':>8} {'mean':>8}")
    for key, name in names.items():
        t = times[key]
        print(f"{name:36} {percentile(t, 0.5) * 1000:7.0f}ms {percentile(t, 0.95) * 1000:7.0f}ms "
              f"{statistics.fmean(t) * 1000:7.0f}ms")  # fmt: skip
    docker_p50 = percentile(times["docker"], 0.5)
    for key in ("fresh", "ready", "back"):
        print(f"ratio {names[key]} / docker run --rm: p50 {percentile(times[key], 0.5) / docker_p50:.2f}x")


if __name__ == "__main__":
    main()
