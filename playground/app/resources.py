"""Where the GUI's data files live: ``resources/`` (examples, themes, icons).

The folder sits beside the ``playground`` package in a checkout or an
editable install; ``PLAYGROUND_RESOURCES`` points elsewhere (an installer
that lays the files out differently, tests). Nothing is read at import time.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

ENV_VAR = "PLAYGROUND_RESOURCES"


def resources_root() -> Path:
    """The resources folder (it may be missing in a broken install; callers cope)."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    package = Path(str(importlib.resources.files("playground")))
    return package.parent / "resources"


def resource_path(*parts: str) -> Path:
    """A path under the resources folder."""
    return resources_root().joinpath(*parts)
