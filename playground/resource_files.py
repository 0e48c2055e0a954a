"""Where the data files live: the ``playground.resources`` package (``resources/`` in a checkout).

Found by name through ``importlib.resources``, so the same call works in a
checkout, an editable install (where setuptools maps the package to the
top-level ``resources/`` folder), a wheel and a pipx install.
``PLAYGROUND_RESOURCES`` points elsewhere (an installer that lays the files
out differently, tests). Nothing is read at import time.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

ENV_VAR = "PLAYGROUND_RESOURCES"
PACKAGE = "playground.resources"


def resources_root() -> Path:
    """The resources folder (it may be missing in a broken install; callers cope)."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    try:
        return Path(str(importlib.resources.files(PACKAGE)))
    except ModuleNotFoundError:  # a broken install; the callers' messages say what is missing
        return Path(__file__).resolve().parent.parent / "resources"


def resource_path(*parts: str) -> Path:
    """A path under the resources folder."""
    return resources_root().joinpath(*parts)
