"""The "Limits" tab: the run's settings, i.e. the packages line (``packages_field``) above the limits panel,
and below them the Docker tier's warm containers (``pool``: prepared per language used; 0 turns them off).

The packages field's offer ("Add <name> and run again", after a run that
failed for a missing module) is shown here too, so the window switches to
this tab when it offers something.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QFrame, QLabel, QSpinBox, QVBoxLayout, QWidget

from playground.app.limits_panel import LimitsPanel
from playground.app.packages_field import PackagesField

#: The most prepared containers per language the control offers (as ``playground --docker-pool``).
MAX_POOL = 16


class RunSettings(QWidget):
    """``packages`` (a ``PackagesField``) above ``limits`` (a ``LimitsPanel``), then ``pool`` (a spin box)."""

    #: The user set the warm pool size.
    poolChanged = Signal(int)

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
        self.pool = QSpinBox()
        self.pool.setObjectName("dockerPool")
        self.pool.setRange(0, MAX_POOL)
        self.pool.setToolTip(
            "Docker containers kept created and started per language you have run, each used by one run "
            "and then removed, so a run skips that work. 0 turns this off. Only runs with the default "
            "options use them; Podman declines them."
        )
        self.pool_note = QLabel("")
        self.pool_note.setWordWrap(True)
        pool_row = QFormLayout()
        pool_row.setContentsMargins(9, 0, 9, 6)
        pool_row.addRow("Warm Docker containers per language:", self.pool)
        pool_row.addRow(self.pool_note)
        layout.addLayout(pool_row)
        self.pool.valueChanged.connect(self._pool_changed)
        self._showing = False
        self.show_pool(None)

    def show_pool(self, size: int | None) -> None:
        """Show the current size without reporting it as the user's change (None: no Docker tier here)."""
        self._showing = True
        try:
            self.pool.setEnabled(size is not None)
            self.pool.setValue(0 if size is None else size)
            self.pool_note.setText("" if size is not None else "No Docker tier in this build.")
        finally:
            self._showing = False

    def _pool_changed(self, value: int) -> None:
        if not self._showing:
            self.poolChanged.emit(value)
