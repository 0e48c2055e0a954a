"""The window's actions and menus: File, Run, Examples, View, Help.

Every command with a shortcut is a ``QAction`` on the window (window-wide
shortcuts) and in a menu, which is what the Help > Keyboard Shortcuts
dialog reads, so adding a command here is all it takes to document it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from playground.app.themes import THEMES

#: Zoom in: Ctrl+= and Ctrl++, with or without Shift (a US keyboard sends Ctrl+Shift+= for "Ctrl +").
ZOOM_IN_KEYS = ("Ctrl+=", "Ctrl++", "Ctrl+Shift+=", "Ctrl+Shift++")
TAB_NAMES = ("Limits", "Files", "REPL", "Backends", "Service")

Keys = Sequence[QKeySequence | QKeySequence.StandardKey | str]


@dataclass(slots=True)
class Actions:
    """The window's commands (the controller connects to these through the window)."""

    new: QAction
    open: QAction
    save: QAction
    save_as: QAction
    add_inputs: QAction
    quit: QAction
    run: QAction
    stop: QAction
    serve: QAction
    examples_menu: QMenu
    theme_group: QActionGroup
    themes: dict[str, QAction]
    zoom_in: QAction
    zoom_out: QAction
    zoom_reset: QAction
    show_tab: list[QAction]
    shortcuts: QAction
    about: QAction


def _action(window: QMainWindow, text: str, keys: Keys = (), menu: QMenu | None = None) -> QAction:
    action = QAction(text, window)
    sequences: list[QKeySequence] = []
    for key in keys:  # a platform may map a standard key to nothing, or to a key listed already
        sequence = QKeySequence(key)
        if not sequence.isEmpty() and sequence not in sequences:
            sequences.append(sequence)
    if sequences:
        action.setShortcuts(sequences)
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    window.addAction(action)
    if menu is not None:
        menu.addAction(action)
    return action


def build_menus(window: QMainWindow) -> Actions:
    """Create the actions and the menu bar of ``window`` (once)."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    new = _action(window, "&New", [QKeySequence.StandardKey.New], file_menu)
    open_ = _action(window, "&Open…", [QKeySequence.StandardKey.Open], file_menu)
    save = _action(window, "&Save", [QKeySequence.StandardKey.Save], file_menu)
    save_as = _action(window, "Save &As…", [QKeySequence.StandardKey.SaveAs], file_menu)
    file_menu.addSeparator()
    add_inputs = _action(window, "Add Files for the Program…", [], file_menu)
    file_menu.addSeparator()
    quit_ = _action(window, "&Quit", [QKeySequence.StandardKey.Quit, "Ctrl+Q"], file_menu)
    quit_.triggered.connect(window.close)

    run_menu = bar.addMenu("&Run")
    run = _action(window, "&Run", ["Ctrl+Return", "Ctrl+Enter", "F5"], run_menu)
    stop = _action(window, "&Stop", ["Escape"], run_menu)
    stop.setEnabled(False)
    run_menu.addSeparator()
    serve = _action(window, "Ser&ve as a Web App", ["Ctrl+Shift+Return", "Ctrl+Shift+Enter"], run_menu)
    serve.setToolTip("Run the program as a server in the sandbox and open it in the Service tab")

    examples_menu = bar.addMenu("&Examples")

    view_menu = bar.addMenu("&View")
    theme_group = QActionGroup(window)
    themes: dict[str, QAction] = {}
    for theme in THEMES.values():
        action = _action(window, f"{theme.title} theme", [], view_menu)
        action.setCheckable(True)
        action.setData(theme.name)
        theme_group.addAction(action)
        themes[theme.name] = action
    view_menu.addSeparator()
    zoom_in = _action(window, "Zoom &In", ZOOM_IN_KEYS, view_menu)
    zoom_out = _action(window, "Zoom &Out", ["Ctrl+-"], view_menu)
    zoom_reset = _action(window, "&Reset Zoom", ["Ctrl+0"], view_menu)
    view_menu.addSeparator()
    show_tab = [_action(window, f"Show {name}", [f"Alt+{i + 1}"], view_menu) for i, name in enumerate(TAB_NAMES)]

    help_menu = bar.addMenu("&Help")
    shortcuts = _action(window, "&Keyboard Shortcuts", ["F1"], help_menu)
    about = _action(window, "&About Sandbox Playground", [], help_menu)
    return Actions(new=new, open=open_, save=save, save_as=save_as, add_inputs=add_inputs, quit=quit_, run=run,
                   stop=stop, serve=serve, examples_menu=examples_menu, theme_group=theme_group, themes=themes,
                   zoom_in=zoom_in, zoom_out=zoom_out, zoom_reset=zoom_reset, show_tab=show_tab,
                   shortcuts=shortcuts, about=about)
