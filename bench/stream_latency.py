"""Issue #17 figures: how soon output and typing cross the sandbox, on both tiers.

    python bench/stream_latency.py [-n LINES]

* first byte: the guest prints its wall clock (``date +%s.%N`` in bash on
  Docker; ``time.time()`` in Python on Wasm, flushed) every 200 ms, on
  stdout and stderr in turn; the latency is the host's ``time.time()`` when
  the line reaches ``on_output`` minus the printed time (both tiers share
  the host's clock). Also whether the lines arrived in the order written.
* keyboard: the host writes a line to the run's ``InputStream`` and waits
  for the guest's echo of it (``read``/``input()`` then print): the
  round trip, typing to screen.

Docker images come from ``PLAYGROUND_IMAGE_BASH`` or ``playground-bash:local``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.docker import DockerBackend
from backends.wasm import WasmBackend
from playground.core import DOCKER_ONLY, WASM_ONLY, InputStream, Limits, Sandbox, Spec, Stream
from playground.packs import bash, python

CLOCK = {
    "bash": 'for i in $(seq {n}); do if [ $((i % 2)) = 0 ]; then date +%s.%N >&2; else date +%s.%N; fi; '
            "sleep 0.2; done",
    "python": "import sys, time\nfor i in range({n}):\n    out = sys.stderr if i % 2 else sys.stdout\n"
              "    print(f'{{time.time():.6f}}', file=out, flush=True)\n    time.sleep(0.2)\n",
}  # fmt: skip
ECHO = {
    "bash": "while read -r line; do echo \"got $line\"; done",
    "python": "while True:\n    try:\n        line = input()\n    except EOFError:\n        break\n"
              "    print('got', line, flush=True)\n",
}  # fmt: skip


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"


async def first_byte(sb: Sandbox, lang: str, n: int) -> None:
    arrivals: list[tuple[float, Stream, bytes]] = []

    def on_output(stream: Stream, data: bytes) -> None:
        arrivals.append((time.time(), stream, data))

    await sb.run(Spec(lang=lang, code=CLOCK[lang].format(n=n), limits=Limits(wall_time=60)), on_output=on_output)
    latencies: list[float] = []
    order: list[float] = []
    for at, _, data in arrivals:
        for line in data.decode().split():
            latencies.append(at - float(line))
            order.append(float(line))
    print(f"  first byte ({lang}, {len(latencies)} lines): {ms(latencies)}; "
          f"in written order: {order == sorted(order)}")  # fmt: skip


async def keyboard(sb: Sandbox, lang: str, n: int) -> None:
    stream = InputStream()
    got = threading.Event()
    trips: list[float] = []

    def on_output(kind: Stream, data: bytes) -> None:
        if b"got" in data:
            got.set()

    def typist() -> None:
        time.sleep(1.0)  # let the runtime start
        for i in range(n):
            got.clear()
            started = time.monotonic()
            stream.write(f"line {i}\n".encode())
            if got.wait(10):
                trips.append(time.monotonic() - started)
            time.sleep(0.05)
        stream.close()

    thread = threading.Thread(target=typist)
    thread.start()
    await sb.run(Spec(lang=lang, code=ECHO[lang], limits=Limits(wall_time=60)), on_output=on_output, input=stream)
    thread.join()
    print(f"  keyboard round trip ({lang}, {len(trips)} lines): {ms(trips)}")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=20)
    n = parser.parse_args().n
    os.environ.setdefault("PLAYGROUND_IMAGE_BASH", "playground-bash:local")
    with Sandbox(backends=[DockerBackend(packs=[bash.PACK])], packs=[bash.PACK], policy=DOCKER_ONLY) as sb:
        print("docker:")
        await first_byte(sb, "bash", n)
        await keyboard(sb, "bash", n)
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK], policy=WASM_ONLY) as sb:
        print("wasm:")
        await first_byte(sb, "python", n)
        await keyboard(sb, "python", n)


if __name__ == "__main__":
    asyncio.run(main())
