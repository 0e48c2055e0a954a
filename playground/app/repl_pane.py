"""The REPL pane: one transcript and history per language, multi-line input.

Enter submits, Shift+Enter inserts a newline, Up/Down walk the history when
the cursor is on the first/last line. The controller owns the sessions and
calls ``show_*``; the pane only shows and collects text.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextDocumentLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from playground.app.editor import monospace_font
from playground.app.text_styles import formats_for, recolour
from playground.app.themes import LIGHT, Theme

MAX_SHOWN = 64 * 1024


class ReplInput(QPlainTextEdit):
    """Multi-line input with history. ``submitted`` carries the code."""

    submitted = Signal(str)
    interruptRequested = Signal()  # Escape while an eval runs

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history: list[str] = []
        self._index = 0
        self._draft = ""
        self.setPlaceholderText("Enter runs · Shift+Enter new line · ↑/↓ history · Esc interrupts")
        self.setMaximumHeight(110)
        self.setTabChangesFocus(False)

    def set_history(self, history: list[str]) -> None:
        self.history = history
        self._index = len(history)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        cursor = self.textCursor()
        if key == Qt.Key.Key_Escape:
            self.interruptRequested.emit()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if mods & Qt.KeyboardModifier.ShiftModifier:
                cursor.insertText("\n")
                return
            if not mods & Qt.KeyboardModifier.ControlModifier:
                self._submit()
                return
        if key == Qt.Key.Key_Up and cursor.blockNumber() == 0 and self.history:
            self._walk(-1)
            return
        if key == Qt.Key.Key_Down and cursor.blockNumber() == self.blockCount() - 1 and self._index < len(self.history):
            self._walk(1)
            return
        super().keyPressEvent(event)

    def _submit(self) -> None:
        code = self.toPlainText()
        if not code.strip():
            return
        if not self.history or self.history[-1] != code:
            self.history.append(code)
        self._index = len(self.history)
        self._draft = ""
        self.clear()
        self.submitted.emit(code)

    def _walk(self, step: int) -> None:
        if self._index == len(self.history):
            self._draft = self.toPlainText()
        self._index = max(0, min(len(self.history), self._index + step))
        text = self.history[self._index] if self._index < len(self.history) else self._draft
        self.setPlainText(text)
        self.moveCursor(QTextCursor.MoveOperation.End)


class ReplPane(QWidget):
    """Transcript above input; a language's transcript and history survive switching away."""

    resetRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("REPL")
        self.status = QLabel("")
        self.status.setObjectName("languageStatus")
        self.status.setWordWrap(True)
        self.reset_button = QPushButton("Reset session")
        self.reset_button.clicked.connect(self.resetRequested)
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addWidget(self.status, 1)
        header.addWidget(self.reset_button)
        self.transcript = QPlainTextEdit()
        self.transcript.setReadOnly(True)
        self.transcript.setUndoRedoEnabled(False)
        self.input = ReplInput()
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.input)
        self._busy = False
        self._available = True
        self._documents: dict[str, QTextDocument] = {}
        self._histories: dict[str, list[str]] = {}
        self._formats: dict[str, QTextCharFormat] = {}
        self.set_theme(LIGHT)
        self.set_font_size(11)

    def set_theme(self, theme: Theme) -> None:
        self._formats = formats_for(theme)
        for document in self._documents.values():
            recolour(document, theme)

    def set_font_size(self, size: int) -> None:
        self.transcript.setFont(monospace_font(size))
        self.input.setFont(monospace_font(size))

    def switch_language(self, language: str) -> None:
        """Show ``language``'s transcript and history (created empty the first time)."""
        document = self._documents.get(language)
        if document is None:
            document = QTextDocument(self)
            document.setDocumentLayout(QPlainTextDocumentLayout(document))
            self._documents[language] = document
            self._histories[language] = []
        self.transcript.setDocument(document)
        self.transcript.setFont(self.input.font())
        self.input.set_history(self._histories[language])
        self.title.setText(f"<b>{language}</b> REPL")

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.input.setReadOnly(busy)
        self.reset_button.setEnabled(self._available and not busy)

    def set_available(self, available: bool) -> None:
        self._available = available
        self.input.setEnabled(available)
        self.reset_button.setEnabled(available and not self._busy)

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    def append(self, text: str, kind: str) -> None:
        """Add ``text`` (kind: code, stdout, stderr or note) to the visible transcript."""
        if not text.strip("\n"):
            return
        if len(text) > MAX_SHOWN:
            text = text[:MAX_SHOWN] + f"\n[… {len(text) - MAX_SHOWN} more characters not shown]"
        if kind == "code":
            text = "\n".join((">>> " if i == 0 else "... ") + line for i, line in enumerate(text.split("\n")))
        cursor = QTextCursor(self.transcript.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if cursor.block().text():  # every entry starts on a line of its own
            cursor.insertText("\n")
        cursor.insertText(text.rstrip("\n"), self._formats[kind])
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())
