"""A result that lands after the window was deleted never reaches it.

pytest-qt deletes a test's window before the fixtures shut its controller
down, and a quitting app may too; CI once saw a Docker probe's answer land
on a deleted language box. The window's tasks end with the window.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import shiboken6
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from playground.app.tasks import BackgroundTasks
from playground.assembly import default_sandbox
from tests.gui.conftest import make_playground


def delete_now(widget: QWidget, qtbot: QtBot) -> None:
    """Close and delete ``widget`` as pytest-qt does after a test (deleteLater, then process events)."""
    widget.close()
    widget.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(widget), timeout=5_000)


def test_a_route_probe_that_answers_after_the_window_is_gone_changes_nothing(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, settings_file: Path
) -> None:
    pg = make_playground(qtbot, settings_file, default_sandbox(), closed_by_qtbot=False)
    answer, asked = threading.Event(), threading.Event()
    real_reasons = pg.controller.routes.reasons

    def slow_reasons(language: str) -> dict[str, str | None]:
        asked.set()
        answer.wait(10)
        return real_reasons(language)

    pg.controller.routes.reasons = slow_reasons  # type: ignore[method-assign]
    pg.controller.choose_backend("wasm")  # starts a refresh that probes off the GUI thread
    qtbot.waitUntil(asked.is_set, timeout=5_000)  # the refresh's thread is asking
    with qtbot.captureExceptions() as errors:
        delete_now(pg.window, qtbot)
        assert pg.controller._tasks.orphaned
        answer.set()
        qtbot.wait(300)  # the probe's thread hands its answer to the loop
    assert not errors, errors
    pg.wait(pg.controller.shutdown())


def test_a_deleted_owner_cancels_its_tasks_and_refuses_new_ones(qtbot: QtBot, qloop: asyncio.AbstractEventLoop) -> None:
    owner = QWidget()
    tasks = BackgroundTasks(owner=owner)
    gate: asyncio.Future[None] = qloop.create_future()
    steps: list[str] = []

    async def waits() -> None:
        steps.append("started")
        await gate
        steps.append("went on")  # must never happen: the owner is gone

    async def never() -> None:
        steps.append("a task spawned after deletion ran")

    first = tasks.spawn(waits())
    qtbot.waitUntil(lambda: steps == ["started"], timeout=2_000)
    delete_now(owner, qtbot)
    if not gate.done():  # cancelling the task cancelled what it awaited
        gate.set_result(None)
    late = tasks.spawn(never())
    qtbot.waitUntil(lambda: first.done() and late.done(), timeout=2_000)
    assert first.cancelled() and late.cancelled()
    assert steps == ["started"]


def test_an_error_in_a_deleted_windows_clean_up_is_logged_not_raised(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, caplog: object
) -> None:
    owner = QWidget()
    label = QWidget(owner)
    tasks = BackgroundTasks(owner=owner)
    gate: asyncio.Future[None] = qloop.create_future()

    async def cleans_up_on_a_widget() -> None:
        try:
            await gate
        finally:
            label.setEnabled(True)  # the widget is gone: RuntimeError

    task = tasks.spawn(cleans_up_on_a_widget())
    qtbot.wait(50)
    with qtbot.captureExceptions() as errors:
        delete_now(owner, qtbot)
        qtbot.waitUntil(task.done, timeout=2_000)
    assert not errors, errors
    assert isinstance(task.exception(), RuntimeError)
    assert "deleted window" in caplog.text  # type: ignore[attr-defined]
