"""The Wasm backend: wasmtime with our own WASI preview1 over the in-memory VFS.

Public face: ``WasmBackend`` (the ``Backend`` the core routes to), and the
errors and helpers a caller or installer may need.
"""

from backends.wasm.artifacts import INSTALL_HINT, ArtifactMismatch, cache_root
from backends.wasm.backend import WasmBackend
from backends.wasm.runner import HostFailure
from backends.wasm.transforms import TransformError

__all__ = [
    "INSTALL_HINT",
    "ArtifactMismatch",
    "HostFailure",
    "TransformError",
    "WasmBackend",
    "cache_root",
]
