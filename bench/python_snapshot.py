"""Python one-shot start: the snapshot path vs a cold start vs native ``python3 -c``, side by side (issue #18).

    python bench/python_snapshot.py [-n RUNS]

All three run interleaved in one process, so machine load hits them
alike: ``Sandbox.run`` of ``print(1)`` from the snapshot (the default
path), the same through a copy of the pack without a snapshot (today's
cold start: ``_start`` with the data segments copied), and the native
interpreter as a process (``subprocess.run``). Programs: ``print(1)``,
``from typing import List`` (what HumanEval prompts start with), and
``import json`` / ``import statistics``, which start from the stdlib
snapshot (``python_snapshot.STDLIB_PRELOAD``), and ``import asyncio``, which
starts from the asyncio snapshot (``ASYNCIO_PRELOAD``): for those, a fourth
column runs them through a copy of the pack with only its plain snapshot
(how they ran before it). Also: the captures (each snapshot's one-off cost,
not counting the code module's first compile), sequential runs per
second, and the image sizes. Target: the snapshot's p50 at or below the
native process's.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from backends.wasm.artifacts import cache_root
from playground.core import Limits, Pack, Sandbox, Spec
from playground.packs import python

#: The system's interpreter (a pyenv shim on PATH would time a shell script too).
NATIVE = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if Path(p).is_file()), None) or (
    shutil.which("python3") or sys.executable
)


def cold_pack() -> Pack:
    assert python.PACK.wasm is not None
    cold = dataclasses.replace(python.PACK.wasm, snapshot=None, import_snapshots=())
    return dataclasses.replace(python.PACK, wasm=cold)


def plain_pack() -> Pack:
    """The pack with its plain snapshot only: no program starts from an import snapshot."""
    assert python.PACK.wasm is not None
    return dataclasses.replace(python.PACK, wasm=dataclasses.replace(python.PACK.wasm, import_snapshots=()))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def capture_times() -> list[tuple[str, float, int]]:
    """Per snapshot: seconds to capture it into a fresh cache (loading the compiled code included), its image size."""
    assert python.PACK.wasm is not None
    found = []
    asyncio_snap, stdlib = python.PACK.wasm.import_snapshots
    for label, snap in (("plain", python.PACK.wasm.snapshot), ("stdlib", stdlib), ("asyncio", asyncio_snap)):
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp)
            for shared in ("artifacts", "modules"):
                (cache / shared).symlink_to(cache_root() / shared)
            backend = WasmBackend(cache_dir=cache)
            _ = backend.modules  # the engine, built before the clock starts
            started = time.perf_counter()
            got = backend.snapshots.image(python.PACK, None, snap)
            elapsed = time.perf_counter() - started
            assert got is not None, backend.snapshots.failure(python.PACK.wasm, snap)
            found.append((label, elapsed, got[1].memory.length))
    return found


async def main(runs: int) -> None:
    backend = WasmBackend()
    reason = backend.unavailable_reason(python.PACK)
    if reason is not None:
        sys.exit(reason)
    limits = Limits(wall_time=30.0)
    snap = Sandbox(backends=[backend], packs=[python.PACK], default_limits=limits)
    plain = Sandbox(backends=[backend], packs=[plain_pack()], default_limits=limits)
    cold = Sandbox(backends=[backend], packs=[cold_pack()], default_limits=limits)
    programs = {
        "print(1)": "print(1)", "from typing import List": "from typing import List\nprint(1)",
        "import json": "import json\nprint(1)", "import statistics": "import statistics\nprint(1)",
        "import asyncio": "import asyncio\nprint(1)",
    }  # fmt: skip
    for sb in (snap, plain, cold):  # warm-up: compile or load everything once
        for code in programs.values():
            await sb.run(Spec(lang="python", code=code))
    print(f"python3 = {NATIVE}; {runs} runs each, interleaved; p50 / p95 / min in ms")
    for label, code in programs.items():
        sandboxes = [("snapshot Sandbox.run", snap), ("cold Sandbox.run", cold)]
        if label.startswith("import "):  # these start from an import snapshot: also as they did before it
            sandboxes.insert(1, ("plain snapshot only", plain))
        times: dict[str, list[float]] = {name: [] for name, _ in sandboxes}
        times["native python3 -c"] = []
        for _ in range(runs):
            for name, sb in sandboxes:
                started = time.perf_counter()
                result = await sb.run(Spec(lang="python", code=code))
                times[name].append(time.perf_counter() - started)
                assert result.exit_code == 0 and result.stdout == b"1\n", result.stderr
            started = time.perf_counter()
            subprocess.run([NATIVE, "-c", code], check=True, capture_output=True)
            times["native python3 -c"].append(time.perf_counter() - started)
        native = statistics.median(times["native python3 -c"])
        print(f"\n{label}")
        for name, values in times.items():
            p50 = statistics.median(values)
            print(f"  {name:22s} {1e3 * p50:7.1f} {1e3 * pct(values, 0.95):7.1f} {1e3 * min(values):7.1f}"
                  f"   {p50 / native:5.2f}x native")  # fmt: skip
    for name, sb in (("snapshot", snap), ("cold", cold)):
        count = max(50, runs * 5)
        started = time.perf_counter()
        for _ in range(count):
            await sb.run(Spec(lang="python", code="print(1)"))
        print(f"\nsequential {name} runs: {count / (time.perf_counter() - started):.1f} runs/s", end="")
    for label, seconds, size in capture_times():
        print(f"\n{label} snapshot: capture {seconds:.2f} s (code already compiled); image {size / 2**20:.1f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=21)
    asyncio.run(main(parser.parse_args().runs))
