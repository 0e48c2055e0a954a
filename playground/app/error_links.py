"""``ErrorLinks``: the places an error names in the output pane lead to the editor (issue #17).

After a run, the output is searched for the places in the program that
the language's messages name (``core.locations``, with the pack's
patterns and the program's file name: the editor's, or the pack's
default). Each such span (``File "/work/main.py", line 3``,
``./main.go:5:2``) becomes a link: underlined, and a click puts the
editor's cursor on that line and column. The lines are marked in the
editor's gutter until the code changes or the next run starts, and the
first one is scrolled into view in the editor (the output pane already
keeps the first error line in view, see ``output_view``).

Kept apart from the output view and the editor so that neither learns
about languages: this module only reads their text and uses their
public API (plus ``CodeEditor.set_marked_lines``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QMouseEvent, QTextCharFormat, QTextCursor

from playground.app.editor import CodeEditor
from playground.app.output_view import FLUSH_MS, OutputView
from playground.core import Location, Pack, find_locations
from playground.core.locations import first_lines

#: The href scheme of a location link: ``line:N`` or ``line:N:C``.
SCHEME = "line:"


class ErrorLinks(QObject):
    """Links in ``output`` to lines of ``editor``. GUI thread only."""

    def __init__(self, output: OutputView, editor: CodeEditor) -> None:
        super().__init__(output)
        self._output = output
        self._editor = editor
        self.locations: list[Location] = []
        self._pending: tuple[Pack, str] | None = None
        viewport = output.text.viewport()
        viewport.installEventFilter(self)
        viewport.setMouseTracking(True)
        editor.document().contentsChange.connect(self._code_changed)

    def show(self, pack: Pack, program: str) -> None:
        """Link the places in ``program`` that the finished run's output names (once it is all painted)."""
        self._pending = (pack, program)
        self._when_painted()

    @property
    def pending(self) -> bool:
        """True while a finished run's output is still being painted and not linked yet."""
        return self._pending is not None

    def clear(self) -> None:
        """Forget the last run's places (a new run starts); the output pane clears its own text."""
        self._pending = None
        self.locations = []
        self._editor.set_marked_lines(())

    def go_to(self, line: int, column: int | None = None) -> None:
        """Put the editor's cursor at ``line`` (1-based) and ``column`` (1-based, or the line's start), in view."""
        block = self._editor.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            return
        cursor = QTextCursor(block)
        if column is not None:
            cursor.setPosition(block.position() + min(max(0, column - 1), max(0, block.length() - 1)))
        self._editor.setTextCursor(cursor)
        self._editor.centerCursor()
        self._editor.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- linking -----------------------------------------------------------------

    def _when_painted(self) -> None:
        if self._pending is None:
            return
        if self._output.flushing:  # the pane paints the output in slices: link once it is all there
            QTimer.singleShot(FLUSH_MS, self._when_painted)
            return
        pack, program = self._pending
        self._pending = None
        self._link(pack, program)

    def _link(self, pack: Pack, program: str) -> None:
        text = self._output.text.toPlainText()
        self.locations = find_locations(text, pack.error_locations, program)
        if not self.locations:
            return
        offsets = _Utf16Offsets(text)
        document = self._output.text.document()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        for location in self.locations:
            cursor.setPosition(offsets(location.start))
            cursor.setPosition(offsets(location.end), QTextCursor.MoveMode.KeepAnchor)
            link = QTextCharFormat()
            link.setAnchor(True)
            link.setAnchorHref(f"{SCHEME}{location.line}" + (f":{location.column}" if location.column else ""))
            link.setFontUnderline(True)
            link.setToolTip(f"Go to line {location.line} of {program}")
            cursor.mergeCharFormat(link)
        cursor.endEditBlock()
        lines = first_lines(self.locations)
        self._editor.set_marked_lines(lines)
        self._scroll_editor_to(lines[0])

    def _scroll_editor_to(self, line: int) -> None:
        """Bring ``line`` into the editor's view without moving the user's cursor."""
        block = self._editor.document().findBlockByNumber(line - 1)
        if not block.isValid():
            return
        first = self._editor.firstVisibleBlock().blockNumber()
        shown = max(1, self._editor.viewport().height() // max(1, self._editor.fontMetrics().height()))
        if not first <= line - 1 < first + shown - 1:
            self._editor.verticalScrollBar().setValue(max(0, line - 1 - shown // 3))

    def _code_changed(self, _at: int, removed: int, added: int) -> None:
        if (removed or added) and self.locations:  # the lines moved: the marks would point at the wrong ones
            self.locations = []
            self._editor.set_marked_lines(())

    # -- clicks ----------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.MouseMove, QEvent.Type.MouseButtonRelease) and isinstance(event, QMouseEvent):
            href = self._output.text.anchorAt(event.position().toPoint())
            target = parse_href(href)
            viewport = self._output.text.viewport()
            if kind == QEvent.Type.MouseMove:
                viewport.setCursor(Qt.CursorShape.PointingHandCursor if target else Qt.CursorShape.IBeamCursor)
            elif target is not None and event.button() == Qt.MouseButton.LeftButton and not self._selecting():
                self.go_to(*target)
                return True
        return super().eventFilter(watched, event)

    def _selecting(self) -> bool:
        """A drag over a link selects text; only a plain click follows it."""
        return self._output.text.textCursor().hasSelection()


def parse_href(href: str) -> tuple[int, int | None] | None:
    """``line:12`` -> (12, None), ``line:12:5`` -> (12, 5); anything else None."""
    if not href.startswith(SCHEME):
        return None
    parts = href[len(SCHEME) :].split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        return None
    if len(numbers) == 1:
        return numbers[0], None
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    return None


class _Utf16Offsets:
    """Python string index -> Qt document position (UTF-16 units: a character beyond U+FFFF counts twice)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._plain = all(ord(ch) <= 0xFFFF for ch in text)

    def __call__(self, index: int) -> int:
        if self._plain:
            return index
        return len(self._text[:index].encode("utf-16-le")) // 2


