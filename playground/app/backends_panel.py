"""The backends panel ("doctor" in the window): which languages run where, and why not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from playground.app.themes import LIGHT, Theme
from playground.core import Diagnostic, LanguageStatus


@dataclass(frozen=True, slots=True)
class LanguageRow:
    """A language and where it runs now, or why each backend refuses it."""

    name: str
    status: LanguageStatus


class BackendsPanel(QWidget):
    """Two lists: languages with their backend or reasons, and each backend's diagnostics."""

    refreshRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = LIGHT
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Check", "Result"])
        self.tree.setWordWrap(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.tree.setUniformRowHeights(False)
        self.tree.setColumnWidth(0, 200)
        self.tree.setAlternatingRowColors(True)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        refresh = QPushButton("Check again")
        refresh.clicked.connect(self.refreshRequested)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        layout.addWidget(refresh)

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme

    def show_status(self, languages: Sequence[LanguageRow], diagnostics: Sequence[Diagnostic]) -> None:
        self.tree.clear()
        ok, bad, warn = QBrush(QColor(self._theme.ok)), QBrush(QColor(self._theme.error)), \
            QBrush(QColor(self._theme.note))
        runnable = [row.name for row in languages if row.status.backend]
        langs = QTreeWidgetItem(self.tree, ["Languages", f"{len(runnable)} of {len(languages)} can run here"])
        for row in languages:
            backend = row.status.backend
            text = f"runs on {backend}" if backend else f"unavailable: {row.status.why_not}"
            item = QTreeWidgetItem(langs, [row.name, text])
            item.setForeground(1, ok if backend else bad)
            item.setToolTip(1, text)
        if not languages:
            QTreeWidgetItem(langs, ["(none)", "no language packs are registered in this build"])
        checks = QTreeWidgetItem(self.tree, ["Backends", ""])
        for diag in diagnostics:
            mark = "ok" if diag.ok else ("FAIL" if diag.required else "warn")
            text = f"{mark}: {diag.detail}" + (f"  — fix: {diag.hint}" if diag.hint and not diag.ok else "")
            item = QTreeWidgetItem(checks, [diag.name, text])
            item.setForeground(1, ok if diag.ok else (bad if diag.required else warn))
            item.setToolTip(1, text)
        self.tree.expandAll()
        self.note.setText(
            "Every language below runs inside a sandbox backend. A language that cannot run says why, "
            "and how to fix it where the backend knows."
        )

    def rows_text(self) -> str:
        """Everything shown, one line per row (for tests and copy-paste)."""
        lines = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is None:
                continue
            lines.append(f"{top.text(0)}: {top.text(1)}")
            children = (top.child(j) for j in range(top.childCount()))
            lines.extend(f"  {c.text(0)}: {c.text(1)}" for c in children if c is not None)
        return "\n".join(lines)
