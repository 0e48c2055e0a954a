"""Where the current language runs: Auto, WebAssembly or Docker, as the CLI's ``--policy`` chooses.

``BackendChoice`` is the small selector beside the language. Its entries
map to the core's policies (``CHOICES``): Auto is ``PREFER_WASM``,
WebAssembly ``WASM_ONLY``, Docker ``DOCKER_ONLY``. An entry that cannot run
the language here is disabled and says why (the backend's reason, from
``Sandbox.status``), in its tooltip and in the selector's. ``Routes`` keeps
one sandbox per policy, all sharing the window's backends, and works out
those reasons (``reasons`` may probe the Docker daemon: call it off the
GUI thread). The choice is remembered per language in the preferences.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget

from playground.core import Sandbox
from playground.core.policy import DOCKER_ONLY, PREFER_WASM, WASM_ONLY, Policy

#: key -> (label, policy); "auto" is the default and is not saved.
CHOICES: dict[str, tuple[str, Policy]] = {
    "auto": ("Auto", PREFER_WASM),
    "wasm": ("WebAssembly", WASM_ONLY),
    "docker": ("Docker", DOCKER_ONLY),
}
AUTO = "auto"


class Routes:
    """One sandbox per choice, sharing ``base``'s backends (``base`` itself for Auto when its policy is the default)."""

    def __init__(self, base: Sandbox) -> None:
        self._by_choice: dict[str, Sandbox] = {}
        for key, (_, policy) in CHOICES.items():
            self._by_choice[key] = base if base.policy == policy else base.with_policy(policy)

    def sandbox_for(self, choice: str) -> Sandbox:
        """The sandbox routed by ``choice`` (an unknown key: Auto's)."""
        return self._by_choice.get(choice, self._by_choice[AUTO])

    def reasons(self, language: str) -> dict[str, str | None]:
        """Per choice: None when it can run ``language`` now, else why not. Blocking (may probe Docker)."""
        found: dict[str, str | None] = {}
        for key, sandbox in self._by_choice.items():
            status = sandbox.status(language)
            found[key] = None if status.backend is not None else status.why_not
        return found


class BackendChoice(QComboBox):
    """Auto / WebAssembly / Docker. ``chosen`` hears the user's picks, not ``set_choice``."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("backendChoice")
        self._quiet = False
        for key, (label, _) in CHOICES.items():
            self.addItem(label, key)
        self.set_reasons({})
        self.currentIndexChanged.connect(self._changed)

    def choice(self) -> str:
        data = self.currentData()
        return str(data) if data is not None else AUTO

    def set_choice(self, key: str) -> None:
        """Select ``key`` without emitting ``chosen`` (an unknown key: Auto)."""
        index = self.findData(key if key in CHOICES else AUTO)
        self._quiet = True
        try:
            self.setCurrentIndex(index)
        finally:
            self._quiet = False
        self._update_tooltip()

    def set_reasons(self, reasons: Mapping[str, str | None]) -> None:
        """Disable the entries that cannot run the language here; each says why (a missing key: not known yet)."""
        model = self.model()
        assert isinstance(model, QStandardItemModel)
        for index in range(self.count()):
            key = str(self.itemData(index))
            label, policy = CHOICES[key]
            why = reasons.get(key)
            item = model.item(index)
            item.setEnabled(why is None)
            item.setText(label if why is None else f"{label} (unavailable)")
            order = " then ".join(policy.order)
            self.setItemData(index, f"{label}: runs on {order}" + (f"\nNot here: {why}" if why else ""),
                             Qt.ItemDataRole.ToolTipRole)
        self._update_tooltip()

    def _update_tooltip(self) -> None:
        tip = self.itemData(self.currentIndex(), Qt.ItemDataRole.ToolTipRole)
        self.setToolTip(f"Where the program runs. {tip}" if tip else "Where the program runs")

    def _changed(self, _index: int) -> None:
        self._update_tooltip()
        if not self._quiet:
            self.chosen.emit(self.choice())
