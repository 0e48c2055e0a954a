"""The default ``ProxyStarter`` of ``Sandbox.serve``: one aiohttp proxy per exposed guest port."""

from __future__ import annotations

from collections.abc import Callable

from playground.core.serve import PortMap, ServeOpts, TCPAddress, Upstream
from playground.serve.config import ProxyConfig
from playground.serve.proxy import RunningProxy, start_proxy
from playground.serve.upstream import HandlerUpstream, TCPUpstream


async def start_service_proxy(
    opts: ServeOpts,
    token: str | None,
    port_map: PortMap,
    upstream: Upstream,
    on_upstream_error: Callable[[BaseException], None],
) -> RunningProxy:
    """Probe the guest port, then listen in front of it with the service's options.

    Raises:
        ServiceNotReady: the readiness probe did not pass.
        OSError: the host port is taken or the bind address is not local.
    """
    config = ProxyConfig(
        bind=opts.bind,
        port=port_map.host,
        auth=opts.auth,
        token=token or "",
        rate=opts.rate,
        burst=opts.burst,
        max_connections=opts.max_connections,
        max_request_body=opts.max_request_body,
        max_header_bytes=opts.max_header_bytes,
        idle_timeout=opts.idle_timeout,
        ttl=opts.ttl,
        ready=opts.ready,
    )
    target = (
        TCPUpstream(host=upstream.host, port=upstream.port)
        if isinstance(upstream, TCPAddress)
        else HandlerUpstream(handler=upstream, name=f"guest port {port_map.guest}")
    )
    return await start_proxy(config, target, on_upstream_error=on_upstream_error)
