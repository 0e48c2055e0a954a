"""Issue #17: a Python program's lines reach the user as they are printed, in order with its errors.

CPython block-buffers stdout when it is not a terminal, and to the runtime
our pipe is not one: ``print("step1"); time.sleep(3)`` showed step1 only at
the end, and the lines printed before a traceback came after it. The boot
script makes stdout line-buffered, as in a terminal.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Spec, Stream
from playground.packs import python
from tests.integration.wasm.conftest import need_runtime

Arrival = tuple[float, Stream, bytes]


@pytest.fixture(scope="module")
def real() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK]) as sb:
        yield sb


async def run_recorded(sb: Sandbox, code: str) -> tuple[list[Arrival], bytes]:
    arrivals: list[Arrival] = []

    def on_output(stream: Stream, data: bytes) -> None:
        arrivals.append((time.monotonic(), stream, data))

    need_runtime(sb, "python")
    result = await sb.run(Spec(lang="python", code=code, limits=Limits(wall_time=20.0)), on_output=on_output)
    return arrivals, result.stdout


def lines(arrivals: list[Arrival]) -> list[tuple[str, str]]:
    joined: dict[Stream, bytes] = {}
    seen: list[tuple[str, str]] = []
    for _, stream, data in arrivals:
        joined[stream] = joined.get(stream, b"") + data
        *whole, joined[stream] = joined[stream].split(b"\n")
        seen += [(stream.name, line.decode()) for line in whole]
    return seen


async def test_a_line_printed_before_a_sleep_arrives_before_the_sleep_ends(real: Sandbox) -> None:
    arrivals, stdout = await run_recorded(real, 'import time\nprint("step1")\ntime.sleep(2)\nprint("step2")\n')
    assert stdout == b"step1\nstep2\n"
    at = {data: when for when, _, data in arrivals}
    assert at[b"step2\n"] - at[b"step1\n"] > 1.5, "step1 waited for the sleep to end"


async def test_lines_printed_before_a_traceback_come_before_it(real: Sandbox) -> None:
    code = 'import sys\nprint("one")\nprint("two", file=sys.stderr)\nprint("three", end="")\nraise ValueError("four")\n'
    arrivals, _ = await run_recorded(real, code)
    seen = lines(arrivals)
    assert seen[:2] == [("STDOUT", "one"), ("STDERR", "two")]
    three = next(i for i, (_, _, data) in enumerate(arrivals) if b"three" in data)
    traceback = next(i for i, (_, _, data) in enumerate(arrivals) if b"Traceback" in data)
    assert three < traceback, arrivals  # the unfinished line was flushed before the traceback
    assert b"".join(d for _, s, d in arrivals if s is Stream.STDOUT) == b"one\nthree"
    assert seen[-1] == ("STDERR", "ValueError: four")
