"""The "Limits" tab: the run's settings, i.e. the packages line (``packages_field``) above the limits panel.

The packages field's offer ("Add <name> and run again", after a run that
failed for a missing module) is shown here too, so the window switches to
this tab when it offers something.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QVBoxLayout, QWidget

from playground.app.limits_panel import LimitsPanel
from playground.app.packages_field import PackagesField


class RunSettings(QWidget):
    """``packages`` (a ``PackagesField``) above ``limits`` (a ``LimitsPanel``)."""

    def __init__(self, packages: PackagesField, limits: LimitsPanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.packages = packages
        self.limits = limits
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        inner = QVBoxLayout()
        inner.setContentsMargins(9, 0, 9, 0)
        inner.addWidget(packages)
        layout.addLayout(inner)
        layout.addWidget(line)
        layout.addWidget(limits, 1)
