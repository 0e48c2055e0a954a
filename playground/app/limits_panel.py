"""The limits panel: one field per ``Limits`` field, defaults shown, values parsed and validated.

An empty field means "the default" (shown as the placeholder). Values are
parsed with the core's ``parse_size`` / ``parse_duration`` so ``64M`` and
``500ms`` mean what they mean on the command line; ``unlimited`` lifts a
limit explicitly. ``parse_limits`` is the pure part the controller uses to
refuse a bad value, with its reason, before a run starts.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from playground.app.run_summary import LIMIT_TITLES, limit_value
from playground.core import (
    DEFAULT_LIMITS,
    LIMIT_FIELDS,
    UNLIMITED,
    InvalidLimits,
    Limits,
    Unlimited,
    parse_duration,
    parse_size,
)

_UNITS = {
    "memory": "size: 64M, 1G, unlimited",
    "wall_time": "duration: 5s, 500ms, 2m",
    "cpu_time": "duration: 5s, 500ms, 2m",
    "max_output": "size: 512K, 4M",
    "fs_quota": "size: 16M, 1G",
    "max_files": "count (incl. /in /work /out)",
    "max_procs": "count",
}


def parse_count(text: str) -> int | Unlimited:
    """A whole number or ``unlimited``.

    Raises:
        ValueError: anything else.
    """
    cleaned = text.strip().lower()
    if cleaned in ("unlimited", "inf", "none"):
        return UNLIMITED
    try:
        return int(cleaned.replace("_", ""))
    except ValueError:
        raise ValueError(f"not a whole number: {text!r} (expected e.g. 256, unlimited)") from None


def parse_field(field: str, text: str) -> int | float | Unlimited:
    """Parse one field's text with the unit rules of its kind.

    Raises:
        ValueError: the text is not a value of that kind.
    """
    if field in ("wall_time", "cpu_time"):
        return parse_duration(text)
    if field in ("memory", "max_output", "fs_quota"):
        return parse_size(text)
    return parse_count(text)


def field_errors(texts: Mapping[str, str], defaults: Limits = DEFAULT_LIMITS) -> dict[str, str]:
    """Why each field is refused (empty when every value is fine)."""
    errors: dict[str, str] = {}
    for field in LIMIT_FIELDS:
        text = texts.get(field, "").strip()
        if not text:
            continue
        try:
            value = parse_field(field, text)
            defaults.merged(Limits(**{field: value})).validate()  # type: ignore[arg-type]
        except (ValueError, InvalidLimits) as exc:
            errors[field] = str(exc)
    return errors


def parse_limits(texts: Mapping[str, str], defaults: Limits = DEFAULT_LIMITS) -> Limits:
    """The overrides typed into the panel, merged with ``defaults`` and validated.

    Raises:
        InvalidLimits: a field does not parse or is out of range; the message
            names the field as the panel shows it and says why.
    """
    errors = field_errors(texts, defaults)
    if errors:
        field, why = next(iter(errors.items()))
        raise InvalidLimits(f"{LIMIT_TITLES[field]}: {why}")
    overrides = {f: parse_field(f, texts[f].strip()) for f in LIMIT_FIELDS if texts.get(f, "").strip()}
    return defaults.merged(Limits(**overrides)).validate()  # type: ignore[arg-type]


class LimitsPanel(QWidget):
    """Editable limits with the defaults as placeholders, live validation and a reset button."""

    changed = Signal()

    def __init__(self, defaults: Limits = DEFAULT_LIMITS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._defaults = defaults
        self.fields: dict[str, QLineEdit] = {}
        self._errors: dict[str, QLabel] = {}
        form = QFormLayout()
        for field in LIMIT_FIELDS:
            edit = QLineEdit()
            edit.setObjectName(f"limit_{field}")
            edit.setPlaceholderText(f"{limit_value(defaults, field)} (default)")
            edit.setToolTip(f"{LIMIT_TITLES[field]} — {_UNITS[field]}; empty = default")
            edit.textChanged.connect(self._revalidate)
            error = QLabel()
            error.setObjectName("error")
            error.setWordWrap(True)
            error.hide()
            box = QVBoxLayout()
            box.setSpacing(1)
            box.addWidget(edit)
            hint = QLabel(_UNITS[field])
            hint.setObjectName("hint")
            box.addWidget(hint)
            box.addWidget(error)
            form.addRow(LIMIT_TITLES[field], box)
            self.fields[field] = edit
            self._errors[field] = error
        self.reset_button = QPushButton("Reset to defaults")
        self.reset_button.clicked.connect(self.reset)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.reset_button)
        layout.addStretch(1)

    def set_defaults(self, defaults: Limits) -> None:
        """Show ``defaults`` (the language's: a compiler gets more memory) as placeholders; check against them."""
        self._defaults = defaults
        for field, edit in self.fields.items():
            edit.setPlaceholderText(f"{limit_value(defaults, field)} (default)")
        self._revalidate()

    def texts(self) -> dict[str, str]:
        """What is typed, per field (empty strings mean "default")."""
        return {field: edit.text() for field, edit in self.fields.items()}

    def set_texts(self, texts: Mapping[str, str]) -> None:
        for field, edit in self.fields.items():
            edit.setText(texts.get(field, ""))

    def reset(self) -> None:
        """Back to the defaults (every field empty)."""
        self.set_texts({})

    def error_text(self, field: str) -> str:
        label = self._errors[field]
        return label.text() if not label.isHidden() else ""

    def _revalidate(self) -> None:
        errors = field_errors(self.texts(), self._defaults)
        for field, edit in self.fields.items():
            label = self._errors[field]
            why = errors.get(field, "")
            label.setText(why)
            label.setVisible(bool(why))
            edit.setProperty("invalid", bool(why))
            edit.style().unpolish(edit)
            edit.style().polish(edit)
        self.changed.emit()
