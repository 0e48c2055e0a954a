"""JavaScript timers on the Wasm tier wait on the real clock, as Node's do.

They ran on a virtual clock before: every delay passed at once, so a
countdown printed all its lines together and ``Date.now()`` inside a
callback showed no time gone by. The order and the waits against Node's
own are in ``tests/integration/node_compat/timers.js``; here: what a wait
does to the run around it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import CPUTimeLimitExceeded, Limits, Sandbox, Spec, TimeLimitExceeded
from playground.core.output import Stream
from playground.packs import javascript
from tests.integration.wasm.conftest import need_runtime


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[javascript.PACK], default_limits=Limits(wall_time=30.0)) as sandbox:
        need_runtime(sandbox, "javascript")
        yield sandbox


async def test_what_was_printed_shows_before_a_timer_is_waited_for(sb: Sandbox) -> None:
    """A countdown's lines arrive as they are printed, each a delay after the last, not all at the end."""
    arrived: list[tuple[float, bytes]] = []

    def listen(stream: Stream, data: bytes) -> None:
        arrived.append((time.monotonic(), data))

    code = (
        "const sleep = (ms) => new Promise((r) => setTimeout(r, ms));\n"
        "(async () => { for (const n of [3, 2, 1]) { console.log(n); await sleep(300); } console.log('go'); })();\n"
    )
    started = time.monotonic()
    result = await sb.run(Spec(lang="javascript", code=code), on_output=listen)
    assert result.stdout == b"3\n2\n1\ngo\n"
    assert time.monotonic() - started >= 0.9
    lines = [(at, line) for at, data in arrived for line in data.splitlines()]
    assert [line for _, line in lines] == [b"3", b"2", b"1", b"go"]
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(lines)]
    assert all(gap >= 0.25 for gap in gaps), gaps


async def test_a_run_waiting_for_a_timer_meets_the_wall_time_limit_not_the_cpu_limit(sb: Sandbox) -> None:
    """The wait sleeps: it spends no CPU time, and the wall-time limit stops it where it stands."""
    code = "console.log('set'); setTimeout(() => console.log('never'), 60000);"
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as caught:
        await sb.run(Spec(lang="javascript", code=code, limits=Limits(wall_time=1.5, cpu_time=0.5)))
    assert not isinstance(caught.value, CPUTimeLimitExceeded)
    assert time.monotonic() - started < 5
    assert caught.value.result is not None and caught.value.result.stdout == b"set\n"


async def test_an_interval_keeps_its_period_and_a_cleared_timer_never_fires(sb: Sandbox) -> None:
    code = (
        "const started = Date.now(), at = [];\n"
        "const never = setTimeout(() => console.log('never'), 100); clearTimeout(never);\n"
        "const iv = setInterval(() => {\n"
        "  at.push(Date.now() - started);\n"
        "  if (at.length === 4) clearInterval(iv);\n"
        "}, 100);\n"
        "process.on('exit', () => console.log(JSON.stringify(at)));\n"
    )
    result = await sb.run(Spec(lang="javascript", code=code))
    times = [int(t) for t in result.stdout.decode().strip("[]\n").split(",")]
    assert len(times) == 4 and all(t >= 100 * (i + 1) - 1 for i, t in enumerate(times)), times
    assert b"never" not in result.stdout
