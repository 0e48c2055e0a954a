"""Assemble the ``Sandbox`` that the CLI, the MCP server and the GUI share.

Backends are imported here, lazily, and only here: a backend whose
dependencies are missing is registered as a ``MissingBackend`` that carries
the reason, so ``playground languages`` and ``BackendUnavailable`` can say
why instead of the language silently vanishing.
"""

from __future__ import annotations

import logging

from playground.core import PREFER_WASM, Backend, Limits, MissingBackend, Policy, Sandbox

log = logging.getLogger(__name__)


def load_backends() -> list[Backend]:
    """Every backend this machine can construct, or a stand-in saying why not."""
    backends: list[Backend] = []
    try:
        from backends.wasm import WasmBackend
    except ImportError as exc:
        log.debug("wasm backend unavailable", exc_info=True)
        backends.append(MissingBackend("wasm", f"cannot import the Wasm backend ({exc}); pip install wasmtime"))
    else:
        backends.append(WasmBackend())
    backends.append(MissingBackend("docker", "the Docker backend is not part of this build yet", required=False))
    return backends


def default_sandbox(*, policy: Policy = PREFER_WASM, default_limits: Limits | None = None) -> Sandbox:
    """A ``Sandbox`` with every pack and every backend available here."""
    from playground.packs import ALL_PACKS

    return Sandbox(backends=load_backends(), packs=ALL_PACKS, policy=policy, default_limits=default_limits)
