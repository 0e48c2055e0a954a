"""Python's scientific runtime: the data-science figures, side by side on Wasm, native CPython and Docker.

    python bench/scientific.py [-n RUNS]

Each task is a whole ``Sandbox.run`` (routing, VFS, our WASI, output) in one
process with warm caches, p50 over RUNS after one warm-up: ``print`` on the
light runtime (unchanged: <= 70 ms), ``import numpy`` (<= 400 ms), ``import
pandas``, a 1 MB CSV read + ``describe()`` (<= 1.5 s) and a matplotlib line
chart to PNG (<= 2 s), and ``resources/examples/sklearn_fit.py`` (a random
forest on the iris data). The same programs run under native CPython (this
interpreter, when it has numpy/pandas/matplotlib; else ``python3`` on PATH or
Debian's ``/usr/bin/python3`` with ``apt install python3-pandas python3-matplotlib``)
and on the Docker tier (the python image), when they are there; a column
that cannot run says so. No test asserts a time: the figures go into notes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playground import default_sandbox
from playground.core import DOCKER_ONLY, WASM_ONLY, Limits, Sandbox, SandboxError, Spec
from playground.resource_files import resource_path

CSV = "a,b,c,d,label\n" + "".join(f"{i},{i * 0.5:.3f},{(i * 7919) % 1000},{i % 13},k{i % 5}\n" for i in range(40_000))
TASKS = {
    "print (light runtime)": ("print('hello world')", {}),
    "import numpy": ("import numpy", {}),
    "import pandas": ("import pandas", {}),
    "1 MB CSV + describe()": (
        "import pandas as pd\nprint(pd.read_csv('/in/data.csv').describe().shape)",
        {"data.csv": CSV.encode()},
    ),
    "matplotlib chart to PNG": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "plt.plot(range(100), [i * i for i in range(100)])\nplt.savefig('/out/chart.png')",
        {},
    ),
    "scikit-learn fit (example)": (resource_path("examples", "sklearn_fit.py").read_text(), {}),
}


async def sandbox_p50(sb: Sandbox, code: str, files: dict[str, bytes], runs: int) -> str:
    spec = Spec(lang="python", code=code, files=files, limits=Limits(wall_time=120, cpu_time=120, memory=512 << 20))
    try:
        await sb.run(spec)  # warm-up (and a first use's set-up)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = await sb.run(spec)
            times.append(time.perf_counter() - started)
            if result.exit_code != 0:
                return f"exit {result.exit_code}: {result.stderr.decode()[-80:]!r}"
    except SandboxError as exc:
        return f"n/a ({str(exc)[:60]})"
    return f"{statistics.median(times) * 1000:8.0f} ms"


def native_p50(python: str, code: str, files: dict[str, bytes], runs: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        code = code.replace("/in/", f"{tmp}/").replace("/out/", f"{tmp}/")
        times = []
        for _ in range(runs + 1):
            started = time.perf_counter()
            proc = subprocess.run([python, "-c", code], capture_output=True, check=False)
            times.append(time.perf_counter() - started)
            if proc.returncode != 0:
                return "n/a (" + proc.stderr.decode().strip().splitlines()[-1][:50] + ")"
    return f"{statistics.median(times[1:]) * 1000:8.0f} ms"


def native_python() -> str:
    for candidate in (sys.executable, "python3", "/usr/bin/python3"):  # the last: Debian's, with python3-pandas
        probe = subprocess.run([candidate, "-c", "import numpy, pandas, matplotlib"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return sys.executable


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=5)
    args = parser.parse_args()
    wasm, docker = default_sandbox(policy=WASM_ONLY), default_sandbox(policy=DOCKER_ONLY)
    python = native_python()
    print(f"native CPython: {python}")
    print(f"{'task':26s} {'Wasm (ours)':>14s} {'native CPython':>16s} {'Docker (ours)':>16s}")
    for name, (code, files) in TASKS.items():
        row = [await sandbox_p50(wasm, code, files, args.runs), native_p50(python, code, files, args.runs)]
        row.append(await sandbox_p50(docker, code, files, args.runs))
        print(f"{name:26s} {row[0]:>14s} {row[1]:>16s} {row[2]:>16s}", flush=True)
    wasm.close()
    docker.close()


if __name__ == "__main__":
    asyncio.run(main())
