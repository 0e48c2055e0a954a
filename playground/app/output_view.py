"""``OutputView``: a run's live output, stdout and stderr told apart, plus a one-line summary.

Output arrives in an ``OutputBuffer`` filled by the guest's worker thread;
a timer on the GUI thread drains it every ``FLUSH_MS`` and inserts one
batch per tick, so a flood is painted in bounded slices and the event loop
never stalls. The batch size adapts so that a tick's insert takes about
``TARGET_MS`` on this machine. Lines longer than ``LONG_LINE`` are broken for
display (laying out one huge line is quadratic in Qt); the display as a
whole stops at ``DISPLAY_CAP`` characters with a note.

The first error line of a run (its first stderr output) is never scrolled
away by following the output: following stops where that line would
leave the top of the pane, and when a run fails the pane scrolls back to
it, because the first error is usually the one that explains the rest.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from playground.app.editor import monospace_font
from playground.app.output_buffer import OutputBuffer
from playground.app.text_styles import formats_for, recolour
from playground.app.themes import LIGHT, Theme
from playground.core import Stream

FLUSH_MS = 40
TARGET_MS = 6.0
MIN_BATCH, FIRST_BATCH, MAX_BATCH = 8 * 1024, 32 * 1024, 128 * 1024
LONG_LINE = 2000
DISPLAY_CAP = 8 * 1024 * 1024
#: Lines of output kept above the first error line when the pane scrolls to it.
CONTEXT_LINES = 1


class OutputView(QWidget):
    """Summary line above a read-only text pane. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Press Ctrl+Enter or F5 to run.")
        self.summary.setObjectName("runSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = QPlainTextEdit()
        self.text.setObjectName("output")
        self.text.setReadOnly(True)
        self.text.setUndoRedoEnabled(False)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setFont(monospace_font(11))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.text, 1)
        self._buffer: OutputBuffer | None = None
        self._column = 0
        self._shown = 0
        self._capped = False
        self._batch = FIRST_BATCH
        self._first_error: int | None = None
        self._pinned = False
        self._reveal_pending = False
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
        self._formats: dict[Stream | None, QTextCharFormat] = {}
        self.set_theme(LIGHT)

    def set_theme(self, theme: Theme) -> None:
        formats = formats_for(theme)
        self._formats = {Stream.STDOUT: formats["stdout"], Stream.STDERR: formats["stderr"], None: formats["note"]}
        recolour(self.text.document(), theme)

    def set_font_size(self, size: int) -> None:
        self.text.setFont(monospace_font(size))

    # -- a run --------------------------------------------------------------

    def begin(self, buffer: OutputBuffer, summary: str) -> None:
        """Clear the pane and start painting ``buffer`` as it fills."""
        self._buffer = buffer
        self._column = 0
        self._shown = 0
        self._capped = False
        self._first_error = None
        self._pinned = False
        self._reveal_pending = False
        self.text.clear()
        self.set_summary(summary)
        self._timer.start()

    def set_summary(self, html: str) -> None:
        self.summary.setText(html)

    @property
    def flushing(self) -> bool:
        """True while output of the current run may still be painted."""
        return self._timer.isActive()

    def plain_text(self) -> str:
        return self.text.toPlainText()

    @property
    def first_error(self) -> int | None:
        """Document position where the run's first stderr output starts (None: no error output yet)."""
        return self._first_error

    def reveal_first_error(self) -> None:
        """The run failed: scroll its first error line into view, now or once the output is painted."""
        if self._timer.isActive():
            self._reveal_pending = True
        else:
            self._reveal()

    def error_line_visible(self) -> bool:
        """True when the first error line is inside the visible part of the pane (or there is none)."""
        if self._first_error is None:
            return True
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(min(self._first_error, self.text.document().characterCount() - 1))
        rect = self.text.cursorRect(cursor)
        return rect.top() >= 0 and rect.bottom() <= self.text.viewport().height()

    def _reveal(self) -> None:
        self._reveal_pending = False
        if self._first_error is not None and not self.error_line_visible():
            self._scroll_to_error()

    def _scroll_to_error(self) -> None:
        """Put the first error line at the top of the pane, with ``CONTEXT_LINES`` of output above it."""
        assert self._first_error is not None
        document = self.text.document()
        block = document.findBlock(self._first_error)
        line = 0
        layout = block.layout()
        if layout is not None and layout.lineCount() > 0:
            line = max(0, layout.lineForTextPosition(self._first_error - block.position()).lineNumber())
        bar = self.text.verticalScrollBar()
        bar.setValue(max(0, block.firstLineNumber() + line - CONTEXT_LINES))
        if not self.error_line_visible():  # line numbers of blocks not laid out yet are estimates
            cursor = QTextCursor(document)
            cursor.setPosition(self._first_error)
            self.text.setTextCursor(cursor)
            self.text.ensureCursorVisible()

    def flush(self) -> None:
        """Paint the next slice of queued output (the timer calls this)."""
        buffer = self._buffer
        if buffer is None:
            self._timer.stop()
            return
        started = time.perf_counter()
        pieces = buffer.drain(self._batch)
        if pieces:
            bar = self.text.verticalScrollBar()
            follow = bar.value() >= bar.maximum() - 4
            cursor = QTextCursor(self.text.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.beginEditBlock()
            for piece in pieces:
                if piece.stream is None:
                    text = ("" if self._column == 0 else "\n") + piece.text + "\n"
                    self._column = 0
                elif self._capped:
                    continue
                else:
                    text = self._break_long_lines(piece.text)
                    if self._shown + len(text) > DISPLAY_CAP:
                        text = text[: max(0, DISPLAY_CAP - self._shown)]
                        self._capped = True
                    self._shown += len(text)
                    if piece.stream is Stream.STDERR and self._first_error is None and text:
                        self._first_error = cursor.position()
                cursor.insertText(text, self._formats[piece.stream])
                if self._capped and piece.stream is not None:
                    cursor.insertText("\n[display limit reached: further output is not shown]\n", self._formats[None])
            cursor.endEditBlock()
            if follow:
                bar.setValue(bar.maximum())
                if self._first_error is not None and not self._pinned and not self.error_line_visible():
                    self._pinned = True  # following stops at the first error; scrolling down resumes it
                    self._scroll_to_error()
            self._adapt(sum(len(p.text) for p in pieces), (time.perf_counter() - started) * 1000)
        if buffer.done:
            self._timer.stop()
            self._buffer = None
            if self._reveal_pending:
                self._reveal()

    def _adapt(self, size: int, took_ms: float) -> None:
        """Grow the batch while inserts are quick, shrink it when one took too long."""
        if took_ms > 1.5 * TARGET_MS:
            self._batch = max(MIN_BATCH, self._batch // 2)
        elif took_ms < TARGET_MS / 2 and size >= self._batch:
            self._batch = min(MAX_BATCH, self._batch * 2)

    def _break_long_lines(self, text: str) -> str:
        out: list[str] = []
        for i, line in enumerate(text.split("\n")):
            if i:
                out.append("\n")
                self._column = 0
            rest = line
            while self._column + len(rest) > LONG_LINE:
                cut = LONG_LINE - self._column
                out.append(rest[:cut])
                out.append("\n")
                rest = rest[cut:]
                self._column = 0
            out.append(rest)
            self._column += len(rest)
        return "".join(out)
