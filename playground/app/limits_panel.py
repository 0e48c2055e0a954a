"""The limits panel: one field per ``Limits`` field, defaults shown, values parsed and validated.

An empty field means "the default" (shown as the placeholder). Titles, unit
hints and parsers come from the core's ``LIMIT_INFO``, the table the CLI's
flags and the MCP tools are made from, so ``64M`` and ``500ms`` mean what
they mean on the command line; ``unlimited`` lifts a
limit explicitly. ``parse_limits`` is the pure part the controller uses to
refuse a bad value, with its reason, before a run starts.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from playground.app.run_summary import AnyLimits, limit_value
from playground.core import DEFAULT_LIMITS, LIMIT_FIELDS, LIMIT_INFO, InvalidLimits, Limits, ResolvedLimits


def _hint(field: str) -> str:
    info = LIMIT_INFO[field]
    return f"{info.hint} ({info.note})" if info.note else info.hint


def _layer(defaults: AnyLimits) -> Limits:
    return defaults.as_limits() if isinstance(defaults, ResolvedLimits) else defaults


def field_errors(texts: Mapping[str, str], defaults: AnyLimits = DEFAULT_LIMITS) -> dict[str, str]:
    """Why each field is refused (empty when every value is fine)."""
    errors: dict[str, str] = {}
    for field in LIMIT_FIELDS:
        text = texts.get(field, "").strip()
        if not text:
            continue
        try:
            value = LIMIT_INFO[field].parse(text)
            _layer(defaults).merged(Limits(**{field: value})).validate()  # type: ignore[arg-type]
        except (ValueError, InvalidLimits) as exc:
            errors[field] = str(exc)
    return errors


def parse_limits(texts: Mapping[str, str], defaults: AnyLimits = DEFAULT_LIMITS) -> ResolvedLimits:
    """The overrides typed into the panel, merged with ``defaults`` and validated.

    Raises:
        InvalidLimits: a field does not parse or is out of range; the message
            names the field as the panel shows it and says why.
    """
    errors = field_errors(texts, defaults)
    if errors:
        field, why = next(iter(errors.items()))
        raise InvalidLimits(f"{LIMIT_INFO[field].title}: {why}")
    overrides = {f: LIMIT_INFO[f].parse(texts[f].strip()) for f in LIMIT_FIELDS if texts.get(f, "").strip()}
    return _layer(defaults).merged(Limits(**overrides)).validate()  # type: ignore[arg-type]


def typed_limits(texts: Mapping[str, str], defaults: AnyLimits = DEFAULT_LIMITS) -> Limits:
    """Only the values typed into the panel (checked over ``defaults`` as ``parse_limits`` does).

    What a run or a session is given: the core merges them over the
    defaults of the runtime the program runs on, which may be a variant's
    (the scientific Python's memory), not the language's that the panel shows.

    Raises:
        InvalidLimits: as ``parse_limits``.
    """
    parse_limits(texts, defaults)
    typed = {f: LIMIT_INFO[f].parse(texts[f].strip()) for f in LIMIT_FIELDS if texts.get(f, "").strip()}
    return Limits(**typed)  # type: ignore[arg-type]


class LimitsPanel(QWidget):
    """Editable limits with the defaults as placeholders, live validation and a reset button."""

    changed = Signal()

    def __init__(self, defaults: AnyLimits = DEFAULT_LIMITS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._defaults = defaults
        self.fields: dict[str, QLineEdit] = {}
        self._errors: dict[str, QLabel] = {}
        form = QFormLayout()
        for field in LIMIT_FIELDS:
            edit = QLineEdit()
            edit.setObjectName(f"limit_{field}")
            edit.setPlaceholderText(f"{limit_value(defaults, field)} (default)")
            edit.setToolTip(f"{LIMIT_INFO[field].title} — {_hint(field)}; empty = default")
            edit.textChanged.connect(self._revalidate)
            error = QLabel()
            error.setObjectName("error")
            error.setWordWrap(True)
            error.hide()
            box = QVBoxLayout()
            box.setSpacing(1)
            box.addWidget(edit)
            hint = QLabel(_hint(field))
            hint.setObjectName("hint")
            box.addWidget(hint)
            box.addWidget(error)
            form.addRow(LIMIT_INFO[field].title, box)
            self.fields[field] = edit
            self._errors[field] = error
        self.reset_button = QPushButton("Reset to defaults")
        self.reset_button.clicked.connect(self.reset)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.reset_button)
        layout.addStretch(1)

    def set_defaults(self, defaults: AnyLimits, others: Mapping[str, AnyLimits] | None = None) -> None:
        """Show ``defaults`` (the language's: a compiler gets more memory) as placeholders; check against them.

        ``others``: the defaults of the language's other runtimes by name (its variants: the scientific
        Python has more memory), shown beside a field where they differ; a run gets its runtime's.
        """
        self._defaults = defaults
        for field, edit in self.fields.items():
            shown = limit_value(defaults, field)
            beside = [f"{name}: {value}" for name, other in (others or {}).items()
                      if (value := limit_value(other, field)) != shown]  # fmt: skip
            edit.setPlaceholderText(f"{shown} (default{'; ' + ', '.join(beside) if beside else ''})")
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
