"""Ctrl-C in REPL sessions: how long from ``Session.interrupt()`` to the eval's result, per language.

    .venv/bin/python bench/interrupt_latency.py [-n ROUNDS] [--no-docker]

For each language and kind of busy input (a pure interpreter loop, a
sleep or child process), an eval is started, interrupted after 0.3 s, and
the time from ``interrupt()`` to the failed result is recorded; the state
is then checked to have survived (an eval that reads a variable set at
the start). Also the cost of being interruptible while nobody presses
Ctrl-C: a tight Python loop in a session (signal words armed) against the
same loop as a one-shot run (no session, no driver), side by side.

Wasm runtimes must be installed; Docker rows need a daemon and the local
images (``PLAYGROUND_IMAGE_<LANG>`` or ``playground-<lang>:local``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.docker.images import env_var
from playground.assembly import default_sandbox
from playground.core import Sandbox, Spec

#: language -> (set state, check state -> b"42\n", {kind: busy input})
CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    "python": ("x = 41", "x + 1", {"loop": "while True: pass", "sleep": "import time\ntime.sleep(60)"}),
    "javascript": ("var x = 41", "x + 1", {"loop": "for (;;) {}"}),
    "lua": ("x = 41", "x + 1", {"loop": "while true do end"}),
    "bash": ("x=41", "echo $((x + 1))", {"loop": "while :; do :; done", "sleep": "sleep 60"}),
    "node": ("var x = 41", "x + 1", {"loop": "for (;;) {}", "sleep": "require('child_process').execSync('sleep 60')"}),
}
DOCKER = ("bash", "node")
#: Times itself inside the guest, so interpreter start-up is not part of the comparison.
SPIN = (
    "import time\nt = time.perf_counter()\nn = 0\nfor i in range(5_000_000):\n    n += i\n"
    "print(time.perf_counter() - t)"
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def interrupt_rounds(sb: Sandbox, lang: str, rounds: int) -> list[str]:
    setup, check, inputs = CASES[lang]
    rows = []
    session = await sb.new_session(lang)
    try:
        assert (await session.eval(setup)).exit_code == 0
        for kind, code in inputs.items():
            took: list[float] = []
            for _ in range(rounds):
                task = asyncio.create_task(session.eval(code))
                await asyncio.sleep(0.3)
                asked = time.perf_counter()
                if not session.interrupt():
                    raise SystemExit(f"{lang} cannot be interrupted in place")
                result = await asyncio.wait_for(task, 30)
                took.append(time.perf_counter() - asked)
                assert result.exit_code != 0 and not result.restarted, (lang, kind, result)
                kept = await session.eval(check)
                assert kept.stdout == b"42\n" and not kept.restarted, (lang, kind, kept)
            rows.append(
                f"{lang:<11} {kind:<6} "
                f"{statistics.median(took) * 1000:>8.1f} {pct(took, 0.95) * 1000:>8.1f} {max(took) * 1000:>8.1f}"
            )
    finally:
        session.close()
    return rows


async def idle_cost(sb: Sandbox, rounds: int) -> str:
    """A tight loop as a one-shot run and in a session (interruptible), alternating, p50 each."""
    session = await sb.new_session("python")
    oneshot: list[float] = []
    in_session: list[float] = []
    try:
        for _ in range(rounds):
            result = await sb.run(Spec(lang="python", code=SPIN))
            assert result.exit_code == 0
            oneshot.append(float(result.stdout))
            result = await session.eval(SPIN)
            assert result.exit_code == 0
            in_session.append(float(result.stdout))
    finally:
        session.close()
    a, b = statistics.median(oneshot), statistics.median(in_session)
    return f"python 5M-step loop: one-shot run {a * 1000:.0f} ms, session eval {b * 1000:.0f} ms (ratio {b / a:.2f})"


async def main(rounds: int, docker: bool) -> None:
    for lang in DOCKER:
        os.environ.setdefault(env_var(lang), f"playground-{lang}:local")
    sb = default_sandbox()
    print(f"{'language':<11} {'kind':<6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}   (interrupt() -> result)")
    for lang in CASES:
        if lang in DOCKER and not docker:
            continue
        reason = sb.status(lang).why_not
        if reason:
            print(f"{lang:<11} skipped: {reason}")
            continue
        for row in await interrupt_rounds(sb, lang, rounds):
            print(row)
    print(await idle_cost(sb, max(3, rounds // 2)))
    sb.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--rounds", type=int, default=10)
    parser.add_argument("--no-docker", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, not args.no_docker))
