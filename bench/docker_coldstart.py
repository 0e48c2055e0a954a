"""Cold start of the Docker tier: our hardened run vs ``docker run --rm`` on the same image.

Each side runs the same trivial program N times, one after another, and we
print p50/p95 and the ratio ours/docker-run (target: <= 1.2x). Two
``docker run`` baselines are shown: plain (``--network none`` only) and
with the same hardening flags as ours (read-only, cap-drop, tmpfs mounts,
limits, init), which is the fair comparison.

    .venv/bin/python bench/docker_coldstart.py            # bash, 20 runs each
    .venv/bin/python bench/docker_coldstart.py -n 30 --lang node

Images: ``PLAYGROUND_IMAGE_<LANG>`` or ``playground-<lang>:local``
(``packaging/images/build.sh``). Needs a daemon (``packaging/docker_daemon.sh start``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends.docker import DockerBackend
from backends.docker.images import env_var
from playground.core import DEFAULT_LIMITS, DOCKER_ONLY, Sandbox, Spec
from playground.packs import bash, node

PROGRAMS = {
    "bash": (bash.PACK, "echo hi", ["bash", "-c", "echo hi"]),
    "node": (node.PACK, 'console.log("hi")', ["node", "-e", 'console.log("hi")']),
}


def hardened_flags() -> list[str]:
    limits = DEFAULT_LIMITS
    quota = f"size={limits.fs_quota}"
    return [
        "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--network", "none",
        "--ipc", "none", "--init", "-u", "65534:65534", "-m", str(limits.memory),
        "--memory-swap", str(limits.memory), "--pids-limit", str(int(limits.max_procs or 64) + 2),
        "--cpus", "1", "--log-driver", "none",
        "--tmpfs", f"/work:{quota},uid=65534,gid=65534", "--tmpfs", f"/out:{quota},uid=65534,gid=65534",
        "--tmpfs", f"/in:{quota},uid=65534,gid=65534", "--tmpfs", f"/tmp:{quota}",
    ]  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def docker_run(image: str, argv: list[str], flags: list[str], n: int) -> list[float]:
    cli = shutil.which("docker")
    if cli is None:
        raise SystemExit("the docker CLI is needed for the baseline")
    times = []
    for _ in range(n):
        started = time.perf_counter()
        proc = subprocess.run([cli, "run", "--rm", *flags, image, *argv], capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        if proc.returncode != 0 or proc.stdout.strip() != b"hi":
            raise SystemExit(f"docker run failed: {proc.stderr.decode()}")
    return times


async def ours(lang: str, code: str, n: int) -> list[float]:
    pack = PROGRAMS[lang][0]
    sandbox = Sandbox(backends=[DockerBackend(packs=[pack])], packs=[pack], policy=DOCKER_ONLY)
    await sandbox.run(Spec(lang=lang, code=code))  # connect and look the image up once
    times = []
    for _ in range(n):
        started = time.perf_counter()
        result = await sandbox.run(Spec(lang=lang, code=code))
        times.append(time.perf_counter() - started)
        assert result.stdout == b"hi\n", result
    sandbox.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20, help="runs per side (default 20)")
    parser.add_argument("--lang", choices=sorted(PROGRAMS), default="bash")
    args = parser.parse_args()
    pack, code, argv = PROGRAMS[args.lang]
    image = os.environ.get(env_var(pack.name)) or f"playground-{pack.name}:local"
    os.environ[env_var(pack.name)] = image

    # interleave warm-up so neither side pays the first-use costs
    docker_run(image, argv, ["--network", "none"], 1)
    rows = [
        ("ours (hardened, /in + /out)", asyncio.run(ours(args.lang, code, args.n))),
        ("docker run --rm (plain)", docker_run(image, argv, ["--network", "none"], args.n)),
        ("docker run --rm (same hardening)", docker_run(image, argv, hardened_flags(), args.n)),
    ]
    print(f"cold start, {args.lang} on {image}, {args.n} runs each, sequential")
    print(f"{'':36} {'p50':>8} {'p95':>8} {'mean':>8}")
    for name, times in rows:
        p50, p95, mean = percentile(times, 0.5), percentile(times, 0.95), statistics.fmean(times)
        print(f"{name:36} {p50 * 1000:7.0f}ms {p95 * 1000:7.0f}ms {mean * 1000:7.0f}ms")
    ours_p50 = percentile(rows[0][1], 0.5)
    for name, times in rows[1:]:
        print(f"ratio ours / {name}: p50 {ours_p50 / percentile(times, 0.5):.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
