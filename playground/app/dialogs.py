"""The window's dialogs: the unsaved-changes prompt, file pickers, keyboard shortcuts and About.

The shortcuts dialog is generated from the menu bar's actions each time it
opens, so it shows the shortcuts that actually work and cannot go stale.
Each dialog is a function returning the user's answer (None when
cancelled) or a widget the caller shows; none holds state.
"""

from __future__ import annotations

import enum
import html
import importlib.metadata
from dataclasses import dataclass

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QMenu,
    QMenuBar,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)


class Answer(enum.Enum):
    """What to do with unsaved changes."""

    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


def unsaved_prompt(parent: QWidget, name: str, doing: str) -> QMessageBox:
    """The Save / Discard / Cancel box (not shown yet). Escape and closing it mean Cancel."""
    buttons = QMessageBox.StandardButton
    box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes", f"{name} has changes that are not saved.",
                      buttons.Save | buttons.Discard | buttons.Cancel, parent)
    box.setObjectName("unsavedPrompt")
    box.setInformativeText(f"Save them before {doing}?")
    box.button(buttons.Discard).setText("Discard changes")
    box.setDefaultButton(buttons.Save)
    box.setEscapeButton(buttons.Cancel)
    return box


def ask_unsaved(parent: QWidget, name: str, doing: str) -> Answer:
    """Ask (modal) what to do with ``name``'s unsaved changes before ``doing`` ("quitting")."""
    box = unsaved_prompt(parent, name, doing)
    box.exec()
    clicked = box.standardButton(box.clickedButton())  # the escape button when closed otherwise
    box.deleteLater()
    if clicked == QMessageBox.StandardButton.Save:
        return Answer.SAVE
    if clicked == QMessageBox.StandardButton.Discard:
        return Answer.DISCARD
    return Answer.CANCEL


def ask_open_path(parent: QWidget) -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Open a file")
    return path or None


def ask_save_path(parent: QWidget, suggested: str = "") -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, "Save as", suggested)
    return path or None


# -- keyboard shortcuts --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShortcutRow:
    """One command with its keys as the user types them (``Ctrl+Return``)."""

    menu: str
    command: str
    keys: tuple[str, ...]


#: Keys of the REPL input, which are not menu commands (``repl_pane.ReplInput`` handles them).
REPL_KEYS = [
    ShortcutRow("REPL input", "Run the input", ("Return",)),
    ShortcutRow("REPL input", "New line", ("Shift+Return",)),
    ShortcutRow("REPL input", "Previous / next input", ("Up", "Down")),
    ShortcutRow("REPL input", "Interrupt", ("Esc",)),
    ShortcutRow("REPL input", "While an input runs: send a line to its input()", ("Return",)),
    ShortcutRow("REPL input", "While an input runs: end of input", ("Ctrl+D",)),
]


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")


def shortcut_rows(menubar: QMenuBar) -> list[ShortcutRow]:
    """Every action with a shortcut, in menu order, read from the live menus."""
    rows: list[ShortcutRow] = []

    def walk(menu: QMenu, title: str) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{title} > {_plain(sub.title())}")
            elif not action.isSeparator():
                keys = tuple(s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts()
                             if not s.isEmpty())
                if keys:
                    rows.append(ShortcutRow(title, _plain(action.text()), keys))

    for top in menubar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, _plain(menu.title()))
    return rows


class ShortcutsDialog(QDialog):
    """The keyboard shortcuts, grouped by menu (built from the actions when it is created)."""

    def __init__(self, menubar: QMenuBar, extra: list[ShortcutRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard Shortcuts")
        self.rows = shortcut_rows(menubar) + extra
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Command", "Keys"])
        self.tree.setRootIsDecorated(False)
        groups: dict[str, QTreeWidgetItem] = {}
        for row in self.rows:
            group = groups.get(row.menu)
            if group is None:
                group = groups[row.menu] = QTreeWidgetItem(self.tree, [row.menu])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFirstColumnSpanned(True)
            QTreeWidgetItem(group, [row.command, ",   ".join(row.keys)])
        self.tree.expandAll()
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)
        self.resize(self.fontMetrics().horizontalAdvance("x") * 95, self.fontMetrics().height() * 34)

    def text(self) -> str:
        """The table as plain text, one ``menu | command | keys`` line per row (tests, screen readers)."""
        return "\n".join(f"{r.menu} | {r.command} | {' or '.join(r.keys)}" for r in self.rows)


def about_box(parent: QWidget) -> QMessageBox:
    """The About box (not shown yet)."""
    try:
        version = importlib.metadata.version("sandbox-playground")
    except importlib.metadata.PackageNotFoundError:
        version = "(not installed)"
    box = QMessageBox(parent)
    box.setObjectName("aboutBox")
    box.setWindowTitle("About Sandbox Playground")
    box.setIconPixmap(parent.windowIcon().pixmap(64, 64))
    box.setText(f"<h3>Sandbox Playground {html.escape(version)}</h3>")
    box.setInformativeText(
        "Run untrusted or AI-generated code on your own machine without it touching the machine: "
        "in WebAssembly (wasmtime) or in a hardened container. No network, no host files and no "
        "environment variables unless you allow them; every limit is enforced and reported.<br><br>"
        "MIT licence. Press F1 for the keyboard shortcuts."
    )
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    return box

