"""Which image a pack runs in: the pack's official reference, or a local override.

Order, first match wins:

1. the environment variable ``PLAYGROUND_IMAGE_<PACK>`` (pack name upper-cased,
   ``-``/``+`` as ``_``), e.g. ``PLAYGROUND_IMAGE_BASH=playground-bash:local``;
2. the file ``$XDG_CONFIG_HOME/sandbox-playground/images.json`` (default
   ``~/.config/...``), a JSON object ``{"bash": "playground-bash:local"}``;
3. ``pack.docker.image`` (official image, pinned by digest when the pack knows one).

The config file is re-read when its modification time changes; a missing,
unreadable or malformed file counts as empty (and is logged).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path

from playground.core import Pack

log = logging.getLogger(__name__)

_ENV_SAFE = re.compile(r"[^A-Z0-9]")


def env_var(pack_name: str) -> str:
    """``"bash"`` -> ``"PLAYGROUND_IMAGE_BASH"``."""
    return "PLAYGROUND_IMAGE_" + _ENV_SAFE.sub("_", pack_name.upper())


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sandbox-playground" / "images.json"


class ImageResolver:
    """Maps a pack to the image reference to run. Thread-safe."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._cached: tuple[float, dict[str, str]] | None = None

    def resolve(self, pack: Pack) -> tuple[str, str]:
        """``(image, where it came from)``; the pack must have a Docker spec."""
        assert pack.docker is not None
        name = env_var(pack.name)
        value = os.environ.get(name, "").strip()
        if value:
            return value, f"${name}"
        overrides = self._file_overrides()
        path = self._path or config_path()
        for key in pack.names:
            if overrides.get(key):
                return overrides[key], str(path)
        return pack.docker.image, f"pack {pack.name}"

    def _file_overrides(self) -> dict[str, str]:
        path = self._path or config_path()
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return {}
        with self._lock:
            if self._cached is not None and self._cached[0] == mtime:
                return self._cached[1]
            overrides: dict[str, str] = {}
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                log.warning("ignoring the image overrides in %s: %s", path, exc)
                raw = {}
            if isinstance(raw, dict):
                overrides = {str(k): str(v) for k, v in raw.items() if isinstance(v, str) and v.strip()}
            else:
                log.warning("ignoring %s: expected a JSON object of pack name -> image", path)
            self._cached = (mtime, overrides)
            return overrides
