"""The GUI's packages field: pure-Python packages from PyPI for the next run, and the one-click "add it".

``PackagesField`` is a line of requirements (``python-slugify humanize==4.9``,
spaces or commas between them) checked as they are typed with the core's
rules (``core.requirements``), so a bad entry is refused before a run,
where it is typed. Its ``packages()`` go into the run's ``Spec.packages``;
the core fetches and checks them before the program starts (the progress
lines say so) and a refusal (native code) is the run's error message.

When a run fails with ``ModuleNotFoundError`` for a module that no runtime
of the language has, ``suggest_package`` names the PyPI package to offer
and ``offer`` shows one button: "Add <name> and run again". Clicking it
adds the name to the field and emits ``add_and_run``, which the window
connects to Run. A module that another runtime has (numpy: the scientific
runtime) is not offered: importing it by name already picks that runtime.

How the window uses it (three hooks): put a ``PackagesField`` where the
run's settings are, pass ``field.packages()`` as ``Spec.packages`` when it
builds the run's spec, and after a failed run call
``field.offer(suggest_package(sandbox, spec, result))``.
"""

from __future__ import annotations

import re
import sys

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from playground.core import InvalidSpec, Result, Sandbox, Spec, UnknownLanguage, variants
from playground.core.requirements import MAX_PACKAGES, check_requirement, parse_requirement

__all__ = ["PackagesField", "parse_packages", "suggest_package"]


def parse_packages(text: str) -> list[str]:
    """The requirements typed in the field (spaces or commas between them).

    Raises:
        InvalidSpec: one is not a plain PyPI name with an optional ``==``/``>=`` version, or too many.
    """
    found = [check_requirement(item) for item in re.split(r"[\s,]+", text.strip()) if item]
    if len(found) > MAX_PACKAGES:
        raise InvalidSpec(f"at most {MAX_PACKAGES} packages per run")
    return found


def suggest_package(sandbox: Sandbox, spec: Spec, result: Result | None) -> str | None:
    """The PyPI package to offer after a failed run, or None (nothing to offer).

    Only for a language that takes packages, a ``ModuleNotFoundError`` for
    a module no runtime of it has and that is not one of Python's standard
    modules (a runtime that lacks one says so: ``Sandbox.hint``; PyPI's
    ``multiprocessing`` is a Python 2 backport), and a package the run did
    not ask for.
    """
    if result is None or result.exit_code == 0:
        return None
    module = variants.missing_module(result.stderr)
    try:
        pack = sandbox.pack(spec.lang)
    except UnknownLanguage:
        return None
    if module is None or not pack.caps.packages or module in sys.stdlib_module_names:
        return None
    if any(module in v.provides for v in (pack.wasm.variants if pack.wasm is not None else ())):
        return None
    name = variants.pypi_name(module)
    asked = {parse_requirement(p).name for p in spec.packages}
    return None if parse_requirement(name).name in asked else name


class PackagesField(QWidget):
    """The packages line, its live check, and the one-click offer after a failed run."""

    changed = Signal()
    #: The user clicked "Add <name> and run again": the name is in the field now; run again.
    add_and_run = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit()
        self.edit.setObjectName("packages")
        self.edit.setPlaceholderText("PyPI packages for Python, e.g. python-slugify humanize==4.9")
        self.edit.setToolTip(
            "Pure-Python packages from PyPI added to the run with their dependencies: fetched and checked on this "
            "machine before the run, read-only for the program, which still has no network. Packages with native "
            "code are refused (numpy, pandas, matplotlib ... are there when the program imports them)."
        )
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.hide()
        self.offer_button = QPushButton()
        self.offer_button.setObjectName("addPackage")
        self.offer_button.hide()
        self._offered = ""
        row = QHBoxLayout()
        row.addWidget(QLabel("Packages:"))
        row.addWidget(self.edit, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(self.offer_button)
        self.edit.textChanged.connect(self._revalidate)
        self.offer_button.clicked.connect(self._accept_offer)

    def packages(self) -> list[str]:
        """The requirements for the next run.

        Raises:
            InvalidSpec: what is typed is not a list of requirements (the field shows why, too).
        """
        return parse_packages(self.edit.text())

    def add(self, name: str) -> None:
        """Add ``name`` to the field unless it is there already (by its normalised name)."""
        current = parse_packages(self.edit.text()) if not self.error_text() else []
        if parse_requirement(name).name not in {parse_requirement(p).name for p in current}:
            text = self.edit.text().strip()
            self.edit.setText(f"{text} {name}".strip())

    def offer(self, name: str | None) -> None:
        """Show "Add <name> and run again" (None hides it)."""
        self._offered = name or ""
        self.offer_button.setText(f"Add package {name} and run again" if name else "")
        self.offer_button.setToolTip(f"Adds {name} from PyPI to the packages field and runs the program again"
                                     if name else "")
        self.offer_button.setVisible(bool(name))

    def error_text(self) -> str:
        return self.error.text() if not self.error.isHidden() else ""

    def _accept_offer(self) -> None:
        name = self._offered
        self.offer(None)
        if name:
            self.add(name)
            self.add_and_run.emit(name)

    def _revalidate(self) -> None:
        try:
            parse_packages(self.edit.text())
        except InvalidSpec as exc:
            self.error.setText(str(exc))
            self.error.show()
        else:
            self.error.clear()
            self.error.hide()
        self.changed.emit()
