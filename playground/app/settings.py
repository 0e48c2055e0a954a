"""Persisted preferences: defaults in code, only changes saved, failures logged.

Backed by a ``QSettings`` the caller provides (the window uses the user's
native store; tests pass an INI file in a temporary folder). A snippet
restored from here is shown, never run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

log = logging.getLogger(__name__)

ORGANIZATION = "SandboxPlayground"
APPLICATION = "playground"


@dataclass(slots=True)
class Preferences:
    """What the window remembers between starts."""

    language: str = "python"
    theme: str = "light"
    font_size: int = 11  # the code panes' size at 100 % zoom
    zoom: int = 100  # the whole window, in percent (see ``zoom.LEVELS``)
    snippet: str = ""
    limits: dict[str, str] = field(default_factory=dict)
    backends: dict[str, str] = field(default_factory=dict)  # language -> "wasm" or "docker" (absent: auto)
    docker_pool: int = -1  # warm Docker containers per language; -1: never set (the backend's default)


def user_store() -> QSettings:
    """The user's native settings store for this application."""
    return QSettings(ORGANIZATION, APPLICATION)


def recovery_dir() -> Path:
    """Where unsaved buffers are kept for crash recovery: the app's data dir (``$XDG_DATA_HOME`` honoured).

    Call after the QApplication has its organization and application names.
    """
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation)
    return Path(location) / "recovery"


def load(store: QSettings) -> Preferences:
    """Read preferences; a missing or unreadable value falls back to its default."""
    prefs = Preferences()
    for f in fields(Preferences):
        if not store.contains(f.name):
            continue
        raw = store.value(f.name)
        try:
            value: object
            if f.name in ("font_size", "zoom", "docker_pool"):
                value = int(str(raw))
            elif f.name in ("limits", "backends"):
                decoded = json.loads(str(raw))
                if not isinstance(decoded, dict):
                    raise ValueError(f"{f.name} must be a JSON object")
                value = {str(k): str(v) for k, v in decoded.items() if str(v).strip()}
            else:
                value = str(raw)
        except (TypeError, ValueError):
            log.warning("ignoring the unreadable setting %s=%r", f.name, raw)
            continue
        setattr(prefs, f.name, value)
    return prefs


def save(store: QSettings, prefs: Preferences) -> None:
    """Write what differs from the defaults and remove what equals them."""
    defaults = Preferences()
    for f in fields(Preferences):
        value = getattr(prefs, f.name)
        if f.name in ("limits", "backends"):
            value = {k: v for k, v in value.items() if v.strip()}
        if value == getattr(defaults, f.name):
            store.remove(f.name)
        else:
            store.setValue(f.name, json.dumps(value) if isinstance(value, Mapping) else value)
    store.sync()
    if store.status() is not QSettings.Status.NoError:
        log.warning("could not save settings to %s: %s", store.fileName(), store.status())
