"""A Docker endpoint that accepts and never answers (issue #19): the window stays responsive, Wasm runs unaffected.

The Docker tier learns what it can run on threads of its own
(``SlowAvailability``); nothing on the GUI thread waits for the daemon.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import shiboken6
from pytestqt.qtbot import QtBot

from playground.assembly import default_sandbox
from tests.gui.conftest import Playground, make_playground
from tests.gui.test_responsiveness import MAX_GAP, GapMeter


@pytest.fixture
def silent_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "silent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(16)  # accepts (the kernel does), never reads, never answers
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    try:
        yield path
    finally:
        server.close()


def test_a_daemon_that_never_answers_freezes_nothing(
    qtbot: QtBot, qloop: object, settings_file: Path, silent_daemon: Path
) -> None:
    started = time.perf_counter()
    playground: Playground = make_playground(qtbot, settings_file, default_sandbox())
    opened = time.perf_counter() - started
    meter = GapMeter()
    try:
        with meter.measuring():
            output = playground.run_code("python", "print(6 * 7)", timeout=120)
            assert "42" in output and "wasm" in playground.summary()
            playground.select("bash")  # Docker only: the status says it is checking, then why not
            qtbot.waitUntil(lambda: "does not answer" in playground.window.language_status.text(), timeout=30_000)
            playground.window.show_tab("backends")
            qtbot.waitUntil(lambda: "docker" in playground.window.backends.rows_text(), timeout=30_000)
    finally:
        if shiboken6.isValid(playground.window):
            playground.window.close()
        playground.wait(playground.controller.shutdown())
    # Opening the window asks the daemon nothing on the GUI thread: less than one probe's timeout (2 s), which
    # asking it there used to add.
    assert opened < 1.9, opened
    assert meter.max_own_gap < MAX_GAP, meter.slow
