"""Source transforms applied before a pack's runtime runs (``WasmSpec.transform``).

A transform is looked up by name in ``TRANSFORM_MODULES`` and imported on
first use. The module must provide:

* ``unavailable_reason() -> str | None``: cheap; None when it can run now;
* ``transform(source: str, filename: str) -> str``: runs on a worker
  thread, may be called concurrently, raises ``TransformError`` (with a
  message fit for the user's stderr) when the source does not compile.

The TypeScript transform (``backends.wasm.typescript``) is provided
separately; while it is absent, TypeScript is reported unavailable.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final, Protocol, cast

TRANSFORM_MODULES: Final = {"typescript": "backends.wasm.typescript"}


class TransformError(Exception):
    """The user's source could not be transformed; ``str(exc)`` is shown on stderr."""


class SourceTransform(Protocol):
    def unavailable_reason(self) -> str | None: ...

    def transform(self, source: str, filename: str) -> str: ...


def load(name: str) -> SourceTransform | str:
    """The transform module for ``name``, or the reason it cannot be used."""
    module_name = TRANSFORM_MODULES.get(name)
    if module_name is None:
        return f"unknown source transform {name!r}"
    try:
        module: ModuleType = importlib.import_module(module_name)
    except ImportError as exc:
        return f"the {name} transform is not available ({exc})"
    if not callable(getattr(module, "transform", None)) or not callable(getattr(module, "unavailable_reason", None)):
        return f"{module_name} does not provide transform() and unavailable_reason()"
    return cast(SourceTransform, module)


def unavailable_reason(name: str) -> str | None:
    loaded = load(name)
    if isinstance(loaded, str):
        return loaded
    return loaded.unavailable_reason()
