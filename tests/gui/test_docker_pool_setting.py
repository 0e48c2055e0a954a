"""The Limits tab's "Warm Docker containers per language" control: shows the Docker tier's pool size, resizes
it when changed, is remembered, and the saved value applies at the next start.

Tries to break: a change that only moves the spin box (the backend keeps its
old size), a saved value that is not applied on restart, showing the size at
start being mistaken for the user's change (it must not overwrite the saved
preference).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings

from playground.app import settings as prefs_io
from playground.assembly import docker_pool_size
from tests.gui.conftest import Playground


def test_the_control_resizes_the_pool_and_is_remembered(
    playground_factory: Callable[[], Playground], settings_file: Path
) -> None:
    first = playground_factory()
    control = first.window.run_settings.pool
    assert control.isEnabled()
    assert control.value() == docker_pool_size(first.controller.sandbox) == 1, "the default is one per language"
    assert first.controller.prefs.docker_pool == -1, "showing the size at start is not a change of the user's"
    control.setValue(0)
    assert docker_pool_size(first.controller.sandbox) == 0
    control.setValue(3)
    assert docker_pool_size(first.controller.sandbox) == 3
    first.controller.save_settings()
    assert prefs_io.load(QSettings(str(settings_file), QSettings.Format.IniFormat)).docker_pool == 3

    second = playground_factory()
    assert docker_pool_size(second.controller.sandbox) == 3, "the saved size was not applied at start"
    assert second.window.run_settings.pool.value() == 3
