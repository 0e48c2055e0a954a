"""The backend selector beside the language: Auto / WebAssembly / Docker, remembered per language (real core)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt

from playground.app import settings as prefs_io
from playground.app.backend_choice import BackendChoice
from playground.app.service_controller import Phase
from tests.gui.conftest import Playground, save_artifact


def entry(choice: BackendChoice, key: str) -> tuple[bool, str, str]:
    """(enabled, text, tooltip) of the entry for ``key``."""
    index = choice.findData(key)
    item = choice.model().item(index)  # type: ignore[attr-defined]
    return item.isEnabled(), choice.itemText(index), str(choice.itemData(index, Qt.ItemDataRole.ToolTipRole))


def pick(playground: Playground, key: str) -> None:
    choice = playground.window.backend_choice
    choice.setCurrentIndex(choice.findData(key))  # as a click in the list does: emits ``chosen``


def test_choosing_docker_runs_python_on_docker(playground: Playground, settings_file: Path) -> None:
    window, controller = playground.window, playground.controller
    playground.select("python")
    pick(playground, "docker")
    playground.qtbot.waitUntil(lambda: "runs on docker" in window.language_status.text(), timeout=20_000)
    output = playground.run_code("python", "import numpy; print(numpy.__version__)", timeout=180)
    summary = playground.summary()
    assert "on docker" in summary and "exit 0" in summary, (summary, output)
    assert output.strip()[:1].isdigit(), output
    assert controller.last_result is not None and controller.last_result.backend == "docker"
    save_artifact(window, "backend_choice_docker.png")

    # remembered for Python only: JavaScript stays on Auto (Wasm), and Python is Docker again after a restart
    playground.select("javascript")
    assert window.backend_choice.choice() == "auto"
    controller.save_settings()
    assert prefs_io.load(QSettings(str(settings_file), QSettings.Format.IniFormat)).backends == {"python": "docker"}
    playground.select("python")
    assert window.backend_choice.choice() == "docker"

    pick(playground, "auto")
    output = playground.run_code("python", "print('back on auto')")
    assert "on wasm" in playground.summary(), playground.summary()


def test_an_entry_that_cannot_run_the_language_is_disabled_and_says_why(playground: Playground) -> None:
    choice = playground.window.backend_choice
    playground.select("lua")
    playground.qtbot.waitUntil(lambda: not entry(choice, "docker")[0], timeout=20_000)
    _, text, tip = entry(choice, "docker")
    assert "unavailable" in text and "lua has no Docker image" in tip
    assert entry(choice, "wasm")[0] and entry(choice, "auto")[0]
    choice.showPopup()
    popup = choice.view().window()
    playground.qtbot.waitExposed(popup)
    save_artifact(popup, "backend_choice_unavailable.png")
    choice.hidePopup()
    playground.select("java")
    playground.qtbot.waitUntil(lambda: not entry(choice, "wasm")[0], timeout=20_000)
    assert "java has no WebAssembly runtime" in entry(choice, "wasm")[2]
    assert entry(choice, "docker")[0]


def test_the_choice_is_restored_at_start(playground_factory: Callable[[], Playground], settings_file: Path) -> None:
    store = QSettings(str(settings_file), QSettings.Format.IniFormat)
    prefs = prefs_io.Preferences(language="python", backends={"python": "docker"})
    prefs_io.save(store, prefs)
    playground = playground_factory()
    assert playground.window.backend_choice.choice() == "docker"
    playground.qtbot.waitUntil(lambda: "runs on docker" in playground.window.language_status.text(), timeout=20_000)


def test_the_repl_and_serve_follow_the_backend_choice(playground: Playground) -> None:
    from tests.gui.test_repl import submit

    window, controller = playground.window, playground.controller
    playground.select("python")
    window.show_tab("repl")
    submit(playground, "x = 'kept'; import sys; sys.platform")
    assert "'wasi'" in window.repl.transcript_text() and "running on wasm" in window.repl.status.text()
    pick(playground, "docker")
    playground.qtbot.waitUntil(lambda: "runs on docker" in window.language_status.text(), timeout=20_000)
    # Python has no REPL driver on Docker: the pane says so at once instead of running on Wasm behind the choice
    assert "No REPL" in window.repl.status.text() and "docker" in window.repl.status.text(), window.repl.status.text()
    assert not window.repl.input.isEnabled()
    server = ("import http.server\nhttp.server.HTTPServer(('0.0.0.0', 8080), "
              "http.server.SimpleHTTPRequestHandler).serve_forever()\n")
    controller.service.start("python", server)  # Serve, with the window's port (8080)
    service = controller.service
    playground.qtbot.waitUntil(lambda: service.phase is not Phase.STARTING, timeout=90_000)
    assert service.phase is Phase.SERVING and service.service is not None, window.service.status_text()
    assert service.service.backend == "docker"
    ended = service.services_ended
    service.stop()
    playground.qtbot.waitUntil(lambda: service.services_ended > ended, timeout=30_000)
    pick(playground, "auto")
    assert window.repl.input.isEnabled()
    submit(playground, "x")  # back on Auto: the Wasm session kept its state
    assert window.repl.transcript_text().rstrip().endswith("'kept'"), window.repl.transcript_text()
