"""The scientific examples open from the Examples menu and show their result; a runtime's first use is in view.

Real core; the scientific runtime is whatever the cache holds (the preparation
test stands in for a first use with a slow fake so it never downloads).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction

from playground.core import Pack, Sandbox
from tests.gui.conftest import Playground, save_artifact


def example_action(playground: Playground, language: str, title: str) -> QAction:
    for menu_action in playground.window.examples_menu.actions():
        menu = menu_action.menu()
        if menu is not None and menu_action.text() == language:
            for action in menu.actions():
                if action.text() == title:
                    return action
    raise AssertionError(f"no example {title!r} under {language} in the Examples menu")


def run_example(playground: Playground, title: str, timeout: float = 300) -> str:
    example_action(playground, "python", title).trigger()
    assert playground.window.current_language() == "python"
    before = playground.controller.runs_finished
    playground.window.run_action.trigger()
    playground.wait_run(before, timeout)
    return playground.window.output.plain_text()


def test_the_chart_example_opens_from_the_menu_and_its_png_shows(playground: Playground) -> None:
    output = run_example(playground, "numpy matplotlib chart")
    summary = playground.summary()
    assert "exit 0" in summary and "matrix product" in output, (summary, output)
    files = playground.window.files
    assert (files.current_out() or "").endswith(".png"), (files.current_out(), summary)
    assert files.shown_kind() == "picture" and not files.picture.original().isNull()
    assert playground.window.tabs.currentWidget() is files  # the chart is in view
    save_artifact(playground.window, "scientific_chart_example.png")


@pytest.mark.parametrize(("title", "wanted"), [("pandas csv summary", "units"), ("sklearn fit", "accuracy")])
def test_the_other_scientific_examples_run_from_the_menu(playground: Playground, title: str, wanted: str) -> None:
    output = run_example(playground, title)
    assert "exit 0" in playground.summary() and wanted in output, (playground.summary(), output)


def test_a_first_use_is_a_visible_preparation_and_the_window_stays_live(
    playground: Playground, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared: list[str] = []

    def missing(self: Sandbox, pack: Pack) -> list[str]:
        return [] if prepared else ["the scientific runtime (test stand-in)"]

    def prepare_pack(self: Sandbox, pack: Pack, progress: Callable[[str], None]) -> list[str]:
        for step in ("downloading the runtime", "compiling it for this machine"):
            progress(step)
            time.sleep(1.2)  # a silent stretch: the seconds must still count up
        prepared.append(pack.name)
        return ["the scientific runtime"]

    monkeypatch.setattr(Sandbox, "missing", missing)
    monkeypatch.setattr(Sandbox, "prepare_pack", prepare_pack)
    gaps: list[float] = []
    slow: list[tuple[float, str]] = []
    last = [time.monotonic()]

    def beat() -> None:  # while preparing (a first scientific run itself has pauses of its own: not measured)
        now = time.monotonic()
        if not prepared:
            gaps.append(now - last[0])
            if now - last[0] > 0.025:
                slow.append((round(now - last[0], 3), playground.summary()[:60]))
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(beat)
    timer.start()
    seen: set[str] = set()
    check = QTimer()
    check.setInterval(50)
    check.timeout.connect(lambda: seen.add(playground.summary()))
    check.start()
    try:
        window = playground.window
        playground.select("python")
        window.set_code("import numpy\nprint('ready', numpy.ones(3).sum())\n")
        before = playground.controller.runs_finished
        window.run_action.trigger()
        playground.qtbot.waitUntil(lambda: "compiling" in playground.summary(), timeout=10_000)
        timer.stop()
        save_artifact(window, "scientific_first_use_preparing.png")  # a grab and a PNG: not the app's time
        last[0] = time.monotonic()
        timer.start()
        playground.wait_run(before, 120)
    finally:
        timer.stop()
        check.stop()
    assert prepared == ["python"] or prepared, prepared
    preparing = [s for s in seen if s.startswith("Preparing the runtime")]
    assert any("downloading" in s for s in preparing) and any("compiling" in s for s in preparing), seen
    assert len({s.rsplit("·", 1)[-1] for s in preparing}) >= 3, preparing  # the seconds went up while silent
    output = window.output.plain_text()
    assert "downloading the runtime" in output and "compiling it for this machine" in output, output
    assert "ready 3.0" in output and "exit 0" in playground.summary(), (output, playground.summary())
    assert len(gaps) > 100 and max(gaps) < 0.05, f"the GUI thread stalled for {max(gaps):.3f} s: {slow}"
