"""``CodeEditor``: a plain-text editor with line numbers, current-line highlight and soft tabs.

Drag a file onto it to open it (``fileDropped``); the window decides what
opening means. Ctrl+Enter and Escape are left to the window's actions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QFontDatabase,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from playground.app.themes import LIGHT, Theme

MIN_FONT, MAX_FONT = 6, 48


def monospace_font(size: int) -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    font.setPointSize(size)
    return font


class _LineNumbers(QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_gutter(event)


class CodeEditor(QPlainTextEdit):
    """The code editor. GUI thread only."""

    fileDropped = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._indent = 4
        self._theme = LIGHT
        self._marked: frozenset[int] = frozenset()
        self._gutter = _LineNumbers(self)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(monospace_font(11))
        self.setAcceptDrops(True)
        self.setObjectName("editor")
        self.blockCountChanged.connect(self._update_margins)
        self.updateRequest.connect(self._scroll_gutter)
        self.cursorPositionChanged.connect(self._highlight_current_line)
        self._update_margins()
        self._highlight_current_line()

    # -- settings ---------------------------------------------------------

    def set_indent(self, spaces: int) -> None:
        self._indent = spaces
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * spaces)

    @property
    def indent(self) -> int:
        return self._indent

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._highlight_current_line()
        self._gutter.update()

    def set_font_size(self, size: int) -> None:
        size = max(MIN_FONT, min(MAX_FONT, size))
        self.setFont(monospace_font(size))
        self.set_indent(self._indent)
        self._update_margins()

    def font_size(self) -> int:
        return self.font().pointSize()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # zoom sets the font directly: keep tabs and gutter in step
            self.set_indent(self._indent)
            self._update_margins()

    # -- gutter -----------------------------------------------------------

    def set_marked_lines(self, lines: Iterable[int]) -> None:
        """Mark these 1-based lines in the gutter (an error names them, see ``error_links``); () clears."""
        self._marked = frozenset(lines)
        self._gutter.update()

    def marked_lines(self) -> frozenset[int]:
        return self._marked

    def gutter_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_margins(self, *_: object) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_margins()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        area = self.contentsRect()
        self._gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), QColor(self._theme.gutter))
        painter.setPen(QColor(self._theme.gutter_text))
        painter.setFont(self.font())
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        width = self._gutter.width() - 6
        current = self.textCursor().blockNumber()
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                font = painter.font()
                marked = number + 1 in self._marked
                font.setBold(number == current or marked)
                painter.setFont(font)
                if marked:  # a line an error names: a bar at the gutter's edge and the number in the error colour
                    painter.fillRect(0, top, 4, height, QColor(self._theme.error))
                    painter.setPen(QColor(self._theme.error))
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number + 1))
                if marked:
                    painter.setPen(QColor(self._theme.gutter_text))
            block = block.next()
            top = bottom
            number += 1
        painter.end()

    def _highlight_current_line(self) -> None:
        selection = QTextEdit.ExtraSelection()
        selection.format.setBackground(QColor(self._theme.current_line))
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        cursor = self.textCursor()
        cursor.clearSelection()
        selection.cursor = cursor
        self.setExtraSelections([selection])
        self._gutter.update()

    # -- keys ---------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and mods & Qt.KeyboardModifier.ControlModifier:
            event.ignore()  # Run: handled by the window's action
            return
        if key == Qt.Key.Key_Tab and not mods & ~Qt.KeyboardModifier.KeypadModifier:
            self._indent_or_insert()
            return
        if key == Qt.Key.Key_Backtab:
            self._dedent()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & ~Qt.KeyboardModifier.KeypadModifier:
            self._newline_keeping_indent()
            return
        super().keyPressEvent(event)

    def _indent_or_insert(self) -> None:
        cursor = self.textCursor()
        if cursor.hasSelection() and "\u2029" in cursor.selectedText():
            self._for_selected_lines(lambda c: c.insertText(" " * self._indent))
            return
        column = cursor.positionInBlock()
        cursor.insertText(" " * (self._indent - column % self._indent))

    def _dedent(self) -> None:
        def dedent(c: QTextCursor) -> None:
            text = c.block().text()
            remove = min(self._indent, len(text) - len(text.lstrip(" ")))
            if remove:
                c.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, remove)
                c.removeSelectedText()

        self._for_selected_lines(dedent)

    def _for_selected_lines(self, edit: Callable[[QTextCursor], None]) -> None:
        cursor = self.textCursor()
        document = self.document()
        first = document.findBlock(cursor.selectionStart()).blockNumber()
        last = document.findBlock(cursor.selectionEnd()).blockNumber()
        cursor.beginEditBlock()
        for number in range(first, last + 1):
            line = QTextCursor(document.findBlockByNumber(number))
            edit(line)
        cursor.endEditBlock()

    def _newline_keeping_indent(self) -> None:
        cursor = self.textCursor()
        text = cursor.block().text()[: cursor.positionInBlock()]
        indent = len(text) - len(text.lstrip(" "))
        if text.rstrip().endswith((":", "{", "(", "[")) or text.rstrip().endswith((" do", " then")):
            indent += self._indent
        cursor.insertText("\n" + " " * indent)
        self.ensureCursorVisible()

    # -- drag and drop ------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragEnterEvent) -> None:  # type: ignore[override]
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            event.acceptProposedAction()
            self.fileDropped.emit(urls[0].toLocalFile())
        else:
            super().dropEvent(event)
