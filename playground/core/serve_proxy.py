"""The proxy side of serving: what the core needs of the reverse proxy it puts in front of each guest port.

The proxy implementation is injected as a ``ProxyStarter``
(``playground.assembly`` hands in the aiohttp one of ``playground.serve``),
so the core stays stdlib-only, serving included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from playground.core.serve_backend import Upstream
from playground.core.serve_options import PortMap, ServeOpts


class ProxyHandle(Protocol):
    """What the core needs of a running reverse proxy (``playground.serve.RunningProxy``)."""

    @property
    def url(self) -> str: ...

    @property
    def addr(self) -> str: ...

    @property
    def token(self) -> str | None: ...

    @property
    def done(self) -> asyncio.Event: ...

    @property
    def error(self) -> BaseException | None: ...

    def recent_logs(self, limit: int | None = None) -> list[str]: ...

    async def stop(self) -> None: ...

    async def fail(self, error: BaseException) -> None: ...


#: Starts one proxy: (options, token or None, the port map, upstream, error hook) -> handle.
#: ``playground.serve.start_service_proxy`` is the one the assembly point hands to ``Sandbox``.
ProxyStarter = Callable[
    [ServeOpts, "str | None", PortMap, Upstream, Callable[[BaseException], None]], Awaitable[ProxyHandle]
]
