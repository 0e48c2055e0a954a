"""The window keeps painting while a guest floods output or spins until its timeout.

A 10 ms QTimer records the time between its ticks; the largest gap is the
longest the event loop was blocked (plus at most one interval). The figure
is printed (run with -s to see it) and must stay under 50 ms.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QTimer

from tests.gui.conftest import Playground

MAX_GAP = 0.050

FLOOD_JS = 'const line = "x".repeat(63);\nfor (let i = 0; i < 16384; i++) console.log(line);\n'  # 1 MiB
FLOOD_PY = "import sys\nline = 'y' * 63 + '\\n'\nfor i in range(16384):\n    sys.stdout.write(line)\n"


class GapMeter:
    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.slow: list[tuple[int, float]] = []
        self.gc_pauses: list[tuple[int, float, int]] = []
        self._start = self._last = time.perf_counter()
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        if now - self._last > 0.025:
            self.slow.append((round((now - self._start) * 1000), round((now - self._last) * 1000, 1)))
        self._last = now

    @contextmanager
    def measuring(self) -> Iterator[GapMeter]:
        self._start = self._last = time.perf_counter()
        gc_started = [0.0]

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                gc_started[0] = time.perf_counter()
            else:
                took = (time.perf_counter() - gc_started[0]) * 1000
                if took > 2:
                    self.gc_pauses.append((round((gc_started[0] - self._start) * 1000), round(took, 1),
                                           info["generation"]))

        gc.callbacks.append(on_gc)
        self._timer.start()
        try:
            yield self
        finally:
            self._timer.stop()
            gc.callbacks.remove(on_gc)

    @property
    def max_gap(self) -> float:
        return max(self.gaps, default=0.0)


def measure(playground: Playground, language: str, code: str, label: str) -> GapMeter:
    playground.select(language)
    playground.window.set_code(code)
    playground.qtbot.wait(300)  # let the highlighter's debounced lex settle first
    meter = GapMeter()
    before = playground.controller.runs_finished
    with meter.measuring():
        playground.controller.run()
        playground.wait_run(before, timeout=120)
    load = os.getloadavg()[0]
    print(f"\n{label}: max event-loop gap {meter.max_gap * 1000:.1f} ms over {len(meter.gaps)} ticks "
          f"(load average {load:.1f} on {os.cpu_count()} CPUs); "
          f"{playground.summary()}\n  gaps over 25 ms (at ms, gap ms): {meter.slow}; GC pauses over 2 ms "
          f"(at ms, ms, generation): {meter.gc_pauses}")
    return meter


def test_flood_of_one_mib_does_not_freeze_the_window(playground: Playground) -> None:
    playground.window.set_limit_texts({"max_output": "2M"})
    playground.run_code("javascript", "console.log('warm-up')")  # first use compiles the runtime
    meter = measure(playground, "javascript", FLOOD_JS, "1 MiB flood (javascript)")
    shown = playground.window.output.plain_text()
    assert shown.count("x" * 63) == 16384, playground.summary()
    assert meter.max_gap < MAX_GAP


def test_python_flood_does_not_freeze_the_window(playground: Playground) -> None:
    playground.window.set_limit_texts({"max_output": "2M"})
    playground.run_code("python", "print('warm-up')", timeout=120)
    meter = measure(playground, "python", FLOOD_PY, "1 MiB flood (python)")
    assert playground.window.output.plain_text().count("y" * 63) == 16384, playground.summary()
    assert meter.max_gap < MAX_GAP


def test_flood_past_the_output_limit_is_marked_truncated(playground: Playground) -> None:
    playground.window.set_limit_texts({"max_output": "256K"})
    meter = measure(playground, "javascript", FLOOD_JS, "flood past a 256K output limit")
    assert "output limit (256K) was reached" in playground.summary()
    assert "[output truncated at 262144 bytes]" in playground.window.output.plain_text()
    assert meter.max_gap < MAX_GAP


def test_spin_until_timeout_does_not_freeze_the_window(playground: Playground) -> None:
    playground.window.set_limit_texts({"wall_time": "2s"})
    playground.run_code("javascript", "console.log('warm-up')")
    meter = measure(playground, "javascript", "for (;;) {}\n", "spin until a 2s timeout (javascript)")
    assert "wall time limit (2s) was reached" in playground.summary()
    assert meter.max_gap < MAX_GAP


def test_one_huge_line_does_not_freeze_the_window(playground: Playground) -> None:
    playground.window.set_limit_texts({"max_output": "2M"})
    playground.run_code("javascript", "console.log('warm-up')")
    code = 'const chunk = "z".repeat(1024);\nlet s = "";\nfor (let i = 0; i < 1024; i++) s += chunk;\nconsole.log(s);\n'
    meter = measure(playground, "javascript", code, "one 1 MiB line (javascript)")
    assert playground.window.output.plain_text().count("z") == 1 << 20, playground.summary()
    assert meter.max_gap < MAX_GAP
