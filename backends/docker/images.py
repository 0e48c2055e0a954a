"""Which image a pack runs in: an explicit choice, the pack's official image, or our local build.

Order, first match wins:

1. the environment variable ``PLAYGROUND_IMAGE_<PACK>`` (pack name upper-cased,
   ``-``/``+`` as ``_``), e.g. ``PLAYGROUND_IMAGE_BASH=playground-bash:local``;
2. the file ``$XDG_CONFIG_HOME/sandbox-playground/images.json`` (default
   ``~/.config/...``), a JSON object ``{"bash": "playground-bash:local"}``;
3. ``pack.docker.image`` (official image, pinned by digest when the pack
   knows one) when the engine has it;
4. ``playground-<pack>:local`` (built from Debian packages by ``playground
   images build``) when the engine has that instead.

Why 3 and 4 are decided by presence: with no registry reachable (offline, a
classroom, CI) the local build is the only way to run, and a user who built it
should not also have to name it in an environment variable that an MCP client
never passes. An explicit choice (1, 2) is never second-guessed. When neither
3 nor 4 is present, the pack's image is the answer and the caller says how to
get one (``IMAGES_HINT``).

The config file is re-read when its modification time changes; a missing,
unreadable or malformed file counts as empty (and is logged).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

from playground.core import Pack

log = logging.getLogger(__name__)

_ENV_SAFE = re.compile(r"[^A-Z0-9]")


def local_image(pack_name: str) -> str:
    """The tag ``playground images build`` gives a pack's image: ``"bash"`` -> ``"playground-bash:local"``."""
    return f"playground-{pack_name}:local"


def images_hint(pack_name: str) -> str:
    """The command that makes a missing image present (what doctor, the GUI and errors print)."""
    return f"playground images build {pack_name}"


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

    def candidates(self, pack: Pack) -> list[tuple[str, str]]:
        """``(image, where it came from)`` in order of preference; one entry when the user chose."""
        assert pack.docker is not None
        name = env_var(pack.name)
        value = os.environ.get(name, "").strip()
        if value:
            return [(value, f"${name}")]
        overrides = self._file_overrides()
        path = self._path or config_path()
        for key in pack.names:
            if overrides.get(key):
                return [(overrides[key], str(path))]
        return [
            (pack.docker.image, f"pack {pack.name}"),
            (local_image(pack.name), f"local build ({images_hint(pack.name)})"),
        ]

    def resolve(self, pack: Pack, present: Callable[[str], bool]) -> tuple[str, str]:
        """The first candidate the engine has (``present``), else the first candidate."""
        options = self.candidates(pack)
        for image, source in options:
            if present(image):
                return image, source
        return options[0]

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


def missing_image_reason(pack: Pack, tried: list[str]) -> str:
    """Why ``pack`` cannot run: none of its images is here, and the command that fixes it."""
    return (
        f"no image for {pack.name} here (tried {', '.join(tried)}); run: {images_hint(pack.name)} "
        f"(builds it from Debian packages), or pull {tried[0]} when a registry is reachable"
    )
