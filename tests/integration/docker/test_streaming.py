"""Issue #17: a container's output reaches the caller as it is written, stdout and stderr in order.

Before, every stdout line waited in the trailer splitter (it held back the
last ``len(marker) - 1`` bytes, longer than most lines) until more output or
the end of the run: ``echo step1; sleep 5`` showed step1 after 5 s, after
stderr written later. Timing bounds here are generous (the measured first
byte latency is a few milliseconds, see bench/docker_stream_latency.py); what
is asserted is that a line arrives long before the sleep that follows it
ends, and that the streams keep their order.
"""

from __future__ import annotations

import time

import pytest

from backends.docker.engine import Engine
from playground.core import Limits, Sandbox, Spec, Stream
from playground.packs import bash, node, python

from .conftest import require_image

Arrival = tuple[float, Stream, bytes]


def recorder() -> tuple[list[Arrival], object]:
    arrivals: list[Arrival] = []

    def on_output(stream: Stream, data: bytes) -> None:
        arrivals.append((time.time(), stream, data))

    return arrivals, on_output


@pytest.fixture(autouse=True)
def images(engine: Engine) -> None:
    require_image(engine, bash.PACK)


async def test_a_line_arrives_before_the_sleep_after_it_ends(sandbox: Sandbox) -> None:
    arrivals, on_output = recorder()
    code = "date +%s.%N; sleep 3; echo step2"
    result = await sandbox.run(Spec(lang="bash", code=code), on_output=on_output)  # type: ignore[arg-type]
    assert result.exit_code == 0
    written = float(result.stdout.split(b"\n")[0])  # the guest's clock is the host's
    first, step2 = arrivals[0], next(a for a in arrivals if b"step2" in a[2])
    assert first[1] is Stream.STDOUT and first[2].startswith(result.stdout.split(b"\n")[0])
    assert first[0] - written < 1.0, f"first byte {first[0] - written:.3f}s after it was written"
    assert step2[0] - first[0] > 2.0, "the line printed before the sleep came with the one after it"


async def test_node_output_streams_too(sandbox: Sandbox, engine: Engine) -> None:
    require_image(engine, node.PACK)
    arrivals, on_output = recorder()
    code = "console.log('step1'); setTimeout(() => console.log('step2'), 2500);"
    result = await sandbox.run(Spec(lang="node", code=code), on_output=on_output)  # type: ignore[arg-type]
    assert result.stdout == b"step1\nstep2\n"
    times = {data.strip(): at for at, _, data in arrivals}
    assert times[b"step2"] - times[b"step1"] > 2.0


async def test_stdout_and_stderr_keep_their_order(sandbox: Sandbox) -> None:
    arrivals, on_output = recorder()
    # The two streams are two pipes the daemon reads apart: writes a few microseconds apart may swap
    # (as they may in a terminal); what must hold is the order at the pace of a program and a reader.
    code = 'echo starting; sleep 0.1; for i in 1 2 3; do echo "err $i" >&2; sleep 0.1; echo "out $i"; sleep 0.1; done\n'
    await sandbox.run(Spec(lang="bash", code=code), on_output=on_output)  # type: ignore[arg-type]
    seen = [(stream.name, line) for _, stream, data in arrivals for line in data.decode().splitlines()]
    assert seen == [
        ("STDOUT", "starting"),
        ("STDERR", "err 1"), ("STDOUT", "out 1"),
        ("STDERR", "err 2"), ("STDOUT", "out 2"),
        ("STDERR", "err 3"), ("STDOUT", "out 3"),
    ]  # fmt: skip


async def test_a_flood_arrives_whole_in_large_chunks(sandbox: Sandbox) -> None:
    arrivals, on_output = recorder()
    code = "head -c 1048576 /dev/zero | tr '\\0' x"
    spec = Spec(lang="bash", code=code, limits=Limits(max_output=2 << 20, wall_time=30))
    result = await sandbox.run(spec, on_output=on_output)  # type: ignore[arg-type]
    assert result.stdout == b"x" * (1 << 20)
    assert sum(len(data) for _, _, data in arrivals) == 1 << 20
    assert len(arrivals) <= 512, f"{len(arrivals)} chunks for 1 MiB"


async def test_python_output_streams_and_keeps_its_order(sandbox: Sandbox, engine: Engine) -> None:
    """CPython block-buffers a pipe: the pack runs it unbuffered (``-u``), as a terminal would show it."""
    require_image(engine, python.PACK)
    arrivals, on_output = recorder()
    # Two pipes the engine reads apart: writes microseconds apart may swap (test_stdout_and_stderr_keep_their_order),
    # so the streams take turns at a program's pace.
    code = (
        'import sys, time\nprint("step1")\ntime.sleep(2)\nprint("step2", file=sys.stderr)\ntime.sleep(0.1)\n'
        'print("step3")\n'
    )
    result = await sandbox.run(Spec(lang="python", code=code), on_output=on_output)  # type: ignore[arg-type]
    assert result.stdout == b"step1\nstep3\n"
    seen = [data.strip() for _, _, data in arrivals if data.strip()]
    assert seen == [b"step1", b"step2", b"step3"], arrivals
    at = {data.strip(): when for when, _, data in reversed(arrivals)}  # the first arrival of each
    assert at[b"step2"] - at[b"step1"] > 1.5, "step1 waited for the sleep to end"
