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


def load_backends(*, docker_pool: int | None = None, wasm_processes: int = 0) -> list[Backend]:
    """Every backend this machine can construct, or a stand-in saying why not.

    ``docker_pool``: the Docker tier's warm pool size (prepared containers per
    language used; 0 disables; None: its default). ``wasm_processes``: worker
    processes the Wasm tier spreads concurrent one-shot runs to (0: none;
    ``backends/wasm/procpool``).
    """
    backends: list[Backend] = []
    try:
        from backends.wasm import WasmBackend
    except ImportError as exc:
        log.debug("wasm backend unavailable", exc_info=True)
        backends.append(MissingBackend("wasm", f"cannot import the Wasm backend ({exc}); pip install wasmtime"))
    else:
        from playground.packs import ALL_PACKS

        backends.append(WasmBackend(packs=ALL_PACKS, processes=wasm_processes))
    backends.append(_docker_backend(docker_pool))
    return backends


def _docker_backend(pool_size: int | None) -> Backend:
    """The Docker tier, or a stand-in when the SDK is missing or construction fails (it is optional)."""
    try:
        from backends.docker import DockerBackend
    except ImportError as exc:
        log.debug("docker backend unavailable", exc_info=True)
        return MissingBackend("docker", f"cannot import the Docker backend ({exc}); pip install docker", required=False)
    from playground.packs import ALL_PACKS

    try:
        if pool_size is None:
            return DockerBackend(packs=ALL_PACKS)
        return DockerBackend(packs=ALL_PACKS, pool_size=pool_size)
    except Exception as exc:  # construction makes no connection; anything here is a bug worth reporting
        log.warning("the Docker backend could not be constructed", exc_info=True)
        return MissingBackend("docker", f"the Docker backend failed to start: {exc}", required=False)


def default_sandbox(
    *, policy: Policy = PREFER_WASM, default_limits: Limits | None = None, docker_pool: int | None = None,
    wasm_processes: int = 0,
) -> Sandbox:
    """A ``Sandbox`` with every pack and every backend available here (``docker_pool``, ``wasm_processes``:
    see ``load_backends``)."""
    from playground.packs import ALL_PACKS

    return Sandbox(
        backends=load_backends(docker_pool=docker_pool, wasm_processes=wasm_processes),
        packs=ALL_PACKS,
        policy=policy,
        default_limits=default_limits,
        proxy_starter=serve_proxy,
    )


def docker_pool_size(sandbox: Sandbox) -> int | None:
    """The Docker tier's warm pool size in ``sandbox``, or None when it has no Docker tier that pools."""
    status = getattr(sandbox.backends.get("docker"), "pool_status", None)
    return None if status is None else int(status().size)


def set_docker_pool(sandbox: Sandbox, size: int) -> bool:
    """Resize the Docker tier's warm pool (prepared containers per language used; 0: none); False: no such tier.

    Raises:
        ValueError: a negative size.
    """
    resize = getattr(sandbox.backends.get("docker"), "set_pool_size", None)
    if resize is None:
        return False
    resize(size)
    return True


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
