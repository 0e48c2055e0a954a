"""Zoom the whole window for a classroom: every font, not only the editor's, by one percentage.

A projector at the back of a room needs the menus, tabs, limits and
buttons as large as the code. Qt has no window-wide zoom, so ``apply_zoom``
scales the application font (which every widget without a font of its own
inherits, dialogs included) and each font a widget set explicitly (the
monospace code panes), both from a remembered 100 % size so repeated
steps never drift. Levels are about 10 % apart at every size.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QWidget

#: Zoom levels in percent, about 10 % apart (what a room can see change), 100 being the default.
LEVELS: Final = (50, 60, 70, 80, 90, 100, 110, 120, 135, 150, 165, 180, 200, 220, 240, 265, 300)
DEFAULT: Final = 100
#: Where the 100 % point size is remembered (a dynamic property of the widget, or of the application).
BASE_PROPERTY: Final = "zoomBasePointSize"
#: ``QFont::SizeResolved`` (PySide6 does not expose the ``ResolveProperties`` enum).
_SIZE_RESOLVED: Final = 0x0002


def step(percent: int, direction: int) -> int:
    """The next level up (``direction`` > 0), down (< 0), or ``DEFAULT`` (0). Clamped to ``LEVELS``."""
    if direction == 0:
        return DEFAULT
    if direction > 0:
        return next((level for level in LEVELS if level > percent), LEVELS[-1])
    return next((level for level in reversed(LEVELS) if level < percent), LEVELS[0])


def clamp(percent: int) -> int:
    """The nearest level to a stored value (settings may hold anything)."""
    return min(LEVELS, key=lambda level: abs(level - percent))


def _scaled(font: QFont, base: float, percent: int) -> QFont:
    scaled = QFont(font)
    scaled.setPointSizeF(max(4.0, round(base * percent / 100 * 2) / 2))  # half points: crisp steps
    return scaled


def _base(holder: QWidget | QApplication, current: float) -> float:
    stored = holder.property(BASE_PROPERTY)
    if isinstance(stored, (int, float)) and stored > 0:
        return float(stored)
    holder.setProperty(BASE_PROPERTY, current)
    return current


def apply_zoom(root: QWidget, percent: int) -> None:
    """Scale the application font and every explicitly set font under ``root`` to ``percent`` of 100 %.

    GUI thread only. Idempotent for a given ``percent``. A widget's 100 %
    size is remembered the first time it is seen; call ``set_base_size``
    to change it (the code font size setting).
    """
    app = QApplication.instance()
    if isinstance(app, QApplication):
        font = app.font()
        app.setFont(_scaled(font, _base(app, font.pointSizeF()), percent))
        if app.styleSheet():  # a styled widget (the bold Run button) keeps its old size until re-polished
            app.setStyleSheet(app.styleSheet())
    for widget in [root, *root.findChildren(QWidget)]:
        if not widget.testAttribute(Qt.WidgetAttribute.WA_SetFont):
            continue
        font = widget.font()
        if not font.resolveMask() & _SIZE_RESOLVED:
            continue  # e.g. a style sheet's bold: the size still comes from the parent
        widget.setFont(_scaled(font, _base(widget, font.pointSizeF()), percent))


def set_base_size(widget: QWidget, points: float, percent: int) -> None:
    """Make ``points`` the 100 % size of ``widget``'s font and show it at ``percent``."""
    widget.setProperty(BASE_PROPERTY, float(points))
    widget.setFont(_scaled(widget.font(), float(points), percent))
