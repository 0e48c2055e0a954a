"""Syntax highlighting with pygments, lexed on a worker thread and debounced.

A full pygments lex of a 2,000-line file costs 40-300 ms (notes/qt.md), far
too much for the GUI thread. So edits restart a short debounce timer; when
it fires, a snapshot of the text is lexed on a one-thread pool and the
per-line spans come back through a queued signal. ``highlightBlock`` (which
Qt calls on the GUI thread for every changed line) only looks spans up:
by line number when the line is unchanged since the lex, else by the
line's text, so typing keeps its colours while the next lex is pending.
After a lex only the lines whose colours actually changed are repainted,
a slice per event-loop turn.

Threads: the worker touches nothing but the text snapshot and pygments;
formats and the document belong to the GUI thread.
"""

from __future__ import annotations

import logging
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.styles import get_style_by_name  # type: ignore[import-untyped]
from pygments.token import Token, _TokenType  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextBlock, QTextCharFormat, QTextDocument

log = logging.getLogger(__name__)

#: Wait this long after the last keystroke before lexing again.
DEBOUNCE_MS = 120
#: Lines recoloured per event-loop turn (a first colouring of a 3,000-line file would otherwise block ~300 ms).
REPAINT_SLICE = 120

Span = tuple[int, int, _TokenType]  # start, length (UTF-16 units), token type
Line = tuple[str, tuple[Span, ...]]


def make_lexer(name: str) -> Lexer:
    """A pygments lexer that keeps the text exactly as given (positions must match the document)."""
    options = {"stripnl": False, "stripall": False, "ensurenl": False}
    try:
        return get_lexer_by_name(name, **options)
    except ClassNotFound:
        return get_lexer_by_name("text", **options)


def lex_lines(lexer: Lexer, text: str) -> list[Line]:
    """Split pygments tokens into per-line spans. Pure; runs on the worker thread."""
    wide = not text.isascii() and any(ord(c) > 0xFFFF for c in text)

    def units(s: str) -> int:
        return len(s.encode("utf-16-le")) // 2 if wide else len(s)

    lines: list[Line] = []
    spans: list[Span] = []
    column = 0
    line_text: list[str] = []
    for _, ttype, value in lexer.get_tokens_unprocessed(text):
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append(("".join(line_text), tuple(spans)))
                spans, line_text, column = [], [], 0
            if part:
                width = units(part)
                if ttype is not Token.Text and ttype is not Token.Text.Whitespace:
                    spans.append((column, width, ttype))
                column += width
                line_text.append(part)
    lines.append(("".join(line_text), tuple(spans)))
    return lines


class _Relay(QObject):
    """Carries a finished lex from the worker thread to the GUI thread (queued signal)."""

    lexed = Signal(int, object)


class Highlighter(QSyntaxHighlighter):
    """Colours a ``QTextDocument`` with a pygments lexer and style; see the module docstring."""

    def __init__(self, document: QTextDocument, *, language_lexer: str = "text", style: str = "default") -> None:
        super().__init__(document)
        self._lexer_name = language_lexer
        self._style_name = style
        self._formats: dict[_TokenType, QTextCharFormat | None] = {}
        self._lines: list[Line] = []
        self._by_text: dict[str, tuple[Span, ...]] = {}
        self._revision = 0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pygments")
        self._relay = _Relay()
        self._relay.lexed.connect(self._on_lexed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._lex_now)
        self._stale: deque[int] = deque()  # line numbers still to recolour
        self._slicer = QTimer(self)
        self._slicer.setSingleShot(True)
        self._slicer.setInterval(0)
        self._slicer.timeout.connect(self._repaint_some)
        document.contentsChange.connect(self._on_change)
        self.lex_count = 0
        self._timer.start()

    # -- configuration (GUI thread) -------------------------------------------

    def set_lexer(self, name: str) -> None:
        """Switch language: lex again right away."""
        if name != self._lexer_name:
            self._lexer_name = name
            self._timer.start(0)

    def set_style(self, name: str) -> None:
        """Switch the pygments style (theme change): recolour everything once."""
        if name != self._style_name:
            self._style_name = name
            self._formats.clear()
            self.rehighlight()

    def close(self) -> None:
        """Stop lexing. Idempotent."""
        self._timer.stop()
        self._slicer.stop()
        self._stale.clear()
        self._revision += 1
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- lexing -----------------------------------------------------------------

    def _on_change(self, position: int, removed: int, added: int) -> None:
        if removed or added:
            self._timer.start(DEBOUNCE_MS)

    def _lex_now(self) -> None:
        document = self.document()
        if document is None:
            return
        self._revision += 1
        revision, text, name = self._revision, document.toPlainText(), self._lexer_name
        relay = self._relay

        def work() -> None:
            try:
                lines = lex_lines(make_lexer(name), text)
            except Exception:
                log.exception("lexing with %s failed", name)
                return
            relay.lexed.emit(revision, lines)

        try:
            self._pool.submit(work)
        except RuntimeError:  # shut down
            return

    def _on_lexed(self, revision: int, lines: list[Line]) -> None:
        if revision != self._revision:
            return  # a newer lex is on its way
        self.lex_count += 1
        document = self.document()
        if document is None:
            return
        new_by_text = dict(lines)
        texts = document.toPlainText().split("\n")  # one call; walking QTextBlocks from Python is slow
        if len(texts) != document.blockCount():  # a U+2028 inside a line: fall back to the blocks
            texts = [document.findBlockByNumber(i).text() for i in range(document.blockCount())]
        stale = [
            i for i, text in enumerate(texts)
            if self._lookup(i, text) != self._spans_in(lines, new_by_text, i, text)
        ]
        self._lines, self._by_text = lines, new_by_text
        self._stale = deque(stale)
        self._repaint_some()

    def _repaint_some(self) -> None:
        """Recolour the next ``REPAINT_SLICE`` stale lines; yield to the event loop between slices."""
        document = self.document()
        for _ in range(min(REPAINT_SLICE, len(self._stale))):
            block = document.findBlockByNumber(self._stale.popleft()) if document is not None else QTextBlock()
            if block.isValid():
                self.rehighlightBlock(block)
        if self._stale:
            self._slicer.start()

    # -- painting (GUI thread) -----------------------------------------------------

    @staticmethod
    def _spans_in(lines: list[Line], by_text: dict[str, tuple[Span, ...]], index: int, text: str
                  ) -> tuple[Span, ...]:
        if index < len(lines) and lines[index][0] == text:
            return lines[index][1]
        return by_text.get(text, ())

    def _lookup(self, index: int, text: str) -> tuple[Span, ...]:
        return self._spans_in(self._lines, self._by_text, index, text)

    def highlightBlock(self, text: str) -> None:
        for start, length, ttype in self._lookup(self.currentBlock().blockNumber(), text):
            fmt = self._format(ttype)
            if fmt is not None:
                self.setFormat(start, length, fmt)

    def _format(self, ttype: _TokenType) -> QTextCharFormat | None:
        if ttype in self._formats:
            return self._formats[ttype]
        try:
            style = get_style_by_name(self._style_name)
        except ClassNotFound:
            style = get_style_by_name("default")
        info: dict[str, Any] = style.style_for_token(ttype)
        fmt: QTextCharFormat | None = None
        if info.get("color") or info.get("bold") or info.get("italic"):
            fmt = QTextCharFormat()
            if info.get("color"):
                fmt.setForeground(QColor("#" + info["color"]))
            if info.get("bold"):
                fmt.setFontWeight(QFont.Weight.Bold)
            if info.get("italic"):
                fmt.setFontItalic(True)
        self._formats[ttype] = fmt
        return fmt

