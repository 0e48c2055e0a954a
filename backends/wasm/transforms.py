"""Source transforms applied before a pack's runtime runs (``WasmSpec.transform``).

A transform turns the user's source into what the runtime runs (TypeScript
into JavaScript). It runs inside Wasm too, from the artifact the pack names
in ``WasmSpec.transformer``. ``KNOWN`` lists the transforms this backend has.
"""

from __future__ import annotations

from typing import Final, Protocol


class TransformError(Exception):
    """The user's source could not be transformed; ``str(exc)`` is shown on stderr."""


class SourceTransform(Protocol):
    def transform(self, source: str, filename: str) -> str:
        """Runs on a worker thread; may be called concurrently; raises ``TransformError``."""
        ...


KNOWN: Final = frozenset({"typescript"})
