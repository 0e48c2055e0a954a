"""Character formats for guest output and REPL transcripts, tagged so a theme change can recolour them.

Every run of text carries its kind (stdout, stderr, note, code) as a user
property; ``recolour`` walks a document once and gives each run the new
theme's format, so text written under the light theme stays readable
after switching to dark.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

from playground.app.themes import Theme

_KIND = int(QTextFormat.Property.UserProperty) + 1
KINDS = ("stdout", "stderr", "note", "code")


def text_format(kind: str, theme: Theme) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setProperty(_KIND, kind)
    colour = {"stdout": theme.text, "stderr": theme.stderr, "note": theme.note, "code": theme.highlight}[kind]
    fmt.setForeground(QColor(colour))
    if kind in ("note", "code"):
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(kind == "note")
    return fmt


def formats_for(theme: Theme) -> dict[str, QTextCharFormat]:
    return {kind: text_format(kind, theme) for kind in KINDS}


def recolour(document: QTextDocument, theme: Theme) -> None:
    """Give every tagged run in ``document`` its format under ``theme``. GUI thread; rare (theme switch)."""
    formats = formats_for(theme)
    runs: list[tuple[int, int, str]] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            kind = fragment.charFormat().property(_KIND)
            if kind in formats:
                runs.append((fragment.position(), fragment.length(), str(kind)))
            it += 1
        block = block.next()
    if not runs:
        return
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    for position, length, kind in runs:
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.setCharFormat(formats[kind])
    cursor.endEditBlock()
