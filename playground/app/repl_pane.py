"""The REPL pane: one transcript and history per language, multi-line input, output streamed live.

Enter submits, Shift+Enter inserts a newline, Up/Down walk the history when
the cursor is on the first/last line. While an eval runs the input is its
keyboard (issue #17): Enter sends the typed line to the eval's stdin
(``input()`` in the code), echoed into the transcript, and Ctrl+D is end of
input; such lines are not code and stay out of the history. The controller owns the sessions and
calls the setters; the pane only shows and collects text. An eval's output
arrives in an ``OutputBuffer`` (filled on the guest's worker thread) that a
timer on the GUI thread drains every ``FLUSH_MS``, so output appears while
the eval still runs and a flood is painted in slices.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
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
from playground.app.output_buffer import OutputBuffer
from playground.app.text_styles import formats_for, recolour
from playground.app.themes import LIGHT, Theme
from playground.core import InputStream, Stream

#: At most this many characters of one entry (or of one eval's output) are shown.
MAX_SHOWN = 64 * 1024
FLUSH_MS = 40
#: Characters drained per tick (the transcript is capped per eval, so this stays cheap).
BATCH = 16 * 1024
IDLE_HINT = "Enter runs · Shift+Enter new line · ↑/↓ history · Esc interrupts"
RUNNING_HINT = "Running: a line typed here goes to its input() (Enter sends, Ctrl+D ends input, Esc interrupts)"
_KINDS = {Stream.STDOUT: "stdout", Stream.STDERR: "stderr", None: "note"}


class ReplInput(QPlainTextEdit):
    """Multi-line input with history. ``submitted`` carries the code."""

    submitted = Signal(str)
    interruptRequested = Signal()  # Escape while an eval runs
    lineEntered = Signal(str)  # Enter while the input is the running eval's keyboard
    endOfInput = Signal()  # Ctrl+D while the input is the running eval's keyboard

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history: list[str] = []
        self._index = 0
        self._draft = ""
        #: True while an eval runs with a keyboard: Enter sends a line to it instead of submitting code.
        self.line_mode = False
        self.setPlaceholderText(IDLE_HINT)
        self._fit_height()
        self.setTabChangesFocus(False)

    def set_history(self, history: list[str]) -> None:
        self.history = history
        self._index = len(history)

    def _fit_height(self) -> None:
        """Room for about five lines in the current font (zoom changes it)."""
        self.setMaximumHeight(self.fontMetrics().lineSpacing() * 5 + 14)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_height()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        cursor = self.textCursor()
        if key == Qt.Key.Key_Escape:
            self.interruptRequested.emit()
            return
        if self.line_mode:
            if key == Qt.Key.Key_D and mods & Qt.KeyboardModifier.ControlModifier:
                self.endOfInput.emit()
                return
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & Qt.KeyboardModifier.ShiftModifier:
                text = self.toPlainText()
                self.clear()
                self.lineEntered.emit(text)
                return
            super().keyPressEvent(event)
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
        self._stream: OutputBuffer | None = None
        self._stream_document: QTextDocument | None = None
        self._last_kind = ""
        self._streamed = 0
        self._stream_capped = False
        self._keyboard: InputStream | None = None
        self._echo: OutputBuffer | None = None
        self.input.lineEntered.connect(self.send_line)
        self.input.endOfInput.connect(self.end_input)
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
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
        """``busy`` False also paints what is left of the eval's output: idle means the transcript is complete."""
        if not busy:
            self._detach_keyboard()
            self._drain_all()
        self._busy = busy
        self.input.setReadOnly(busy and self._keyboard is None)
        self.reset_button.setEnabled(self._available and not busy)

    # -- the running eval's keyboard ---------------------------------------------

    def attach_keyboard(self, keyboard: InputStream, echo: OutputBuffer) -> None:
        """While the eval runs, lines typed in the input go to ``keyboard``, echoed into ``echo``."""
        self._keyboard, self._echo = keyboard, echo
        self.input.line_mode = True
        self.input.setReadOnly(False)
        self.input.setPlaceholderText(RUNNING_HINT)

    def _detach_keyboard(self) -> None:
        if self._keyboard is not None:
            self._keyboard.close()
        self._keyboard = self._echo = None
        self.input.line_mode = False
        self.input.setPlaceholderText(IDLE_HINT)
        self.input.setReadOnly(self._busy)

    @property
    def keyboard(self) -> InputStream | None:
        """The running eval's keyboard (None when idle)."""
        return self._keyboard

    def send_line(self, text: str) -> None:
        """Enter during an eval: ``text`` and a newline go to its stdin and are echoed (never blocks)."""
        keyboard = self._keyboard
        if keyboard is None or keyboard.closed:
            return
        data = (text + "\n").encode("utf-8")
        keyboard.write(data)
        if self._echo is not None:
            self._echo.write(Stream.STDOUT, data)  # where a terminal shows what was typed

    def end_input(self) -> None:
        """Ctrl+D during an eval: what is typed goes without a newline, then end of file."""
        keyboard = self._keyboard
        if keyboard is None or keyboard.closed:
            return
        text = self.input.toPlainText()
        if text:
            data = text.encode("utf-8")
            keyboard.write(data)
            if self._echo is not None:
                self._echo.write(Stream.STDOUT, data)
            self.input.clear()
        keyboard.close()

    def set_available(self, available: bool) -> None:
        self._available = available
        self.input.setEnabled(available)
        self.reset_button.setEnabled(available and not self._busy)

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    def append(self, text: str, kind: str) -> None:
        """Add ``text`` (kind: code, stdout, stderr or note) to the visible transcript, on a line of its own.

        Output still queued from a stream is painted first, so entries keep their order.
        """
        self._drain_all()
        if not text.strip("\n"):
            return
        if len(text) > MAX_SHOWN:
            text = text[:MAX_SHOWN] + f"\n[… {len(text) - MAX_SHOWN} more characters not shown]"
        if kind == "code":
            text = "\n".join((">>> " if i == 0 else "... ") + line for i, line in enumerate(text.split("\n")))
        cursor = self._end_cursor()
        if cursor.block().text():  # every entry starts on a line of its own
            cursor.insertText("\n")
        cursor.insertText(text.rstrip("\n"), self._formats[kind])
        self._scroll_to_end()

    # -- streamed output ------------------------------------------------------

    def stream(self, buffer: OutputBuffer) -> None:
        """Paint ``buffer`` as it fills (one eval's output and notes) until it is finished and drained."""
        self._drain_all()
        self._stream = buffer
        self._stream_document = self.transcript.document()  # stays this language's, even if the user switches
        self._streamed = 0
        self._stream_capped = False
        self._last_kind = ""
        self._timer.start()

    @property
    def streaming(self) -> bool:
        return self._stream is not None

    def flush(self, budget: int = BATCH) -> None:
        """Paint the next slice of the stream (the timer calls this)."""
        buffer, document = self._stream, self._stream_document
        if buffer is None or document is None:
            self._timer.stop()
            return
        pieces = buffer.drain(budget)
        if pieces:
            cursor = QTextCursor(document)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.beginEditBlock()
            for piece in pieces:
                text = piece.text
                if piece.stream is not None:
                    if self._stream_capped:
                        continue
                    if self._streamed + len(text) > MAX_SHOWN:
                        text = text[: MAX_SHOWN - self._streamed] + "\n[… further output of this eval not shown]"
                        self._stream_capped = True
                    self._streamed += len(piece.text)
                else:
                    text = text.rstrip("\n")
                # Output starts below the code, a note on a line of its own; later output continues the line.
                if cursor.block().text() and (piece.stream is None or self._last_kind in ("", "note")):
                    cursor.insertText("\n")
                cursor.insertText(text, self._formats[_KINDS[piece.stream]])
                self._last_kind = _KINDS[piece.stream]
            cursor.endEditBlock()
            if document is self.transcript.document():
                self._scroll_to_end()
        if buffer.done:
            self._timer.stop()
            self._stream = self._stream_document = None

    def _drain_all(self) -> None:
        while self._stream is not None:
            self.flush(budget=1 << 30)

    def _end_cursor(self) -> QTextCursor:
        cursor = QTextCursor(self.transcript.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _scroll_to_end(self) -> None:
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())
