"""Assemble the ``Sandbox`` that the CLI, the MCP server and the GUI share.

Backends are imported here, lazily, and only here: a backend whose
dependencies are missing is registered as a ``MissingBackend`` that carries
the reason, so ``playground languages`` and ``BackendUnavailable`` can say
why instead of the language silently vanishing. The same holds for the
host-side serve proxy (``playground.serve``, on aiohttp): the core only
names its interface (``ProxyStarter``), this module hands the real one in,
and imports it only when a service is started.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from playground.core import (
    PREFER_WASM,
    Backend,
    Limits,
    MissingBackend,
    Policy,
    PortMap,
    ProxyHandle,
    Sandbox,
    ServeOpts,
    Upstream,
)

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
        from playground.packs import ALL_PACKS

        backends.append(WasmBackend(packs=ALL_PACKS))
    backends.append(_docker_backend())
    return backends


def _docker_backend() -> Backend:
    """The Docker tier, or a stand-in when the SDK is missing or construction fails (it is optional)."""
    try:
        from backends.docker import DockerBackend
    except ImportError as exc:
        log.debug("docker backend unavailable", exc_info=True)
        return MissingBackend("docker", f"cannot import the Docker backend ({exc}); pip install docker", required=False)
    from playground.packs import ALL_PACKS

    try:
        return DockerBackend(packs=ALL_PACKS)
    except Exception as exc:  # construction makes no connection; anything here is a bug worth reporting
        log.warning("the Docker backend could not be constructed", exc_info=True)
        return MissingBackend("docker", f"the Docker backend failed to start: {exc}", required=False)


def default_sandbox(*, policy: Policy = PREFER_WASM, default_limits: Limits | None = None) -> Sandbox:
    """A ``Sandbox`` with every pack and every backend available here."""
    from playground.packs import ALL_PACKS

    return Sandbox(
        backends=load_backends(),
        packs=ALL_PACKS,
        policy=policy,
        default_limits=default_limits,
        proxy_starter=serve_proxy,
    )


async def serve_proxy(
    opts: ServeOpts,
    token: str | None,
    port_map: PortMap,
    upstream: Upstream,
    on_upstream_error: Callable[[BaseException], None],
) -> ProxyHandle:
    """The ``ProxyStarter`` of ``default_sandbox``: ``playground.serve``'s proxy, imported on first serve."""
    from playground.serve import start_service_proxy

    return await start_service_proxy(opts, token, port_map, upstream, on_upstream_error)
