"""Light and dark themes: a Qt palette, a style sheet from ``resources/themes`` and editor colours.

Style sheets are read when a theme is applied, never at import time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from playground.app.resources import resource_path

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Theme:
    """Everything that changes between light and dark."""

    name: str
    title: str
    window: str
    base: str
    alt_base: str
    text: str
    button: str
    highlight: str
    highlight_text: str
    current_line: str
    gutter: str
    gutter_text: str
    stderr: str
    note: str
    ok: str
    error: str
    pygments_style: str


LIGHT = Theme(
    name="light", title="Light", window="#eff0f1", base="#ffffff", alt_base="#f5f5f5", text="#1d1f21",
    button="#e4e6e8", highlight="#3d7fd9", highlight_text="#ffffff", current_line="#fff8d6",
    gutter="#f0f0f0", gutter_text="#9a9a9a", stderr="#c4161c", note="#7a5c00", ok="#1e7d32",
    error="#c4161c", pygments_style="friendly",
)
DARK = Theme(
    name="dark", title="Dark", window="#25272b", base="#1b1d20", alt_base="#222428", text="#dcdfe4",
    button="#33363b", highlight="#3d7fd9", highlight_text="#ffffff", current_line="#2a2d33",
    gutter="#1f2124", gutter_text="#6b7078", stderr="#ff6b6b", note="#e5c07b", ok="#7ec699",
    error="#ff6b6b", pygments_style="monokai",
)

THEMES: dict[str, Theme] = {t.name: t for t in (LIGHT, DARK)}


def theme_named(name: str) -> Theme:
    """The theme called ``name``; unknown names fall back to light."""
    return THEMES.get(name, LIGHT)


def palette_for(theme: Theme) -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: theme.window,
        QPalette.ColorRole.WindowText: theme.text,
        QPalette.ColorRole.Base: theme.base,
        QPalette.ColorRole.AlternateBase: theme.alt_base,
        QPalette.ColorRole.Text: theme.text,
        QPalette.ColorRole.Button: theme.button,
        QPalette.ColorRole.ButtonText: theme.text,
        QPalette.ColorRole.ToolTipBase: theme.base,
        QPalette.ColorRole.ToolTipText: theme.text,
        QPalette.ColorRole.PlaceholderText: theme.gutter_text,
        QPalette.ColorRole.Highlight: theme.highlight,
        QPalette.ColorRole.HighlightedText: theme.highlight_text,
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(theme.gutter_text))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(theme.gutter_text))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor(theme.gutter_text))
    return palette


def style_sheet(theme: Theme) -> str:
    """The shared style sheet with the theme's colours filled in; empty (and logged) if it is missing."""
    path = resource_path("themes", "style.qss")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        log.warning("theme style sheet %s is missing; using the palette only", path)
        return ""
    for key in sorted(Theme.__dataclass_fields__, key=len, reverse=True):  # @gutter_text before @gutter
        text = text.replace("@" + key, str(getattr(theme, key)))
    return text


def apply_theme(app: QApplication, theme: Theme) -> None:
    """Switch the whole application to ``theme`` (Fusion style, palette, style sheet)."""
    app.setStyle("Fusion")
    app.setPalette(palette_for(theme))
    app.setStyleSheet(style_sheet(theme))
