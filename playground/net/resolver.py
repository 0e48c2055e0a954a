"""Name resolution and connection for the egress proxy, both injectable.

A :data:`Resolver` turns a host name into candidate IP addresses; the proxy
checks every answer and then hands one *checked* address to a
:data:`Connector`. Tests inject both so no real name is ever looked up and
no address outside ``127.0.0.0/8`` is ever contacted.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence

from playground.net.guard import IPAddress

#: ``async (host, port) -> addresses``; answers are IP address strings in preference order.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

#: ``async (address, port) -> (reader, writer)``; must connect to exactly ``address``.
Connector = Callable[[IPAddress, int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the running loop's ``getaddrinfo`` (TCP only), keeping order, dropping duplicates.

    Raises:
        OSError: the lookup failed (``socket.gaierror`` included).
    """
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), None)
    return list(seen)


async def direct_connector(address: IPAddress, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a TCP connection to the literal ``address`` (no name resolution can happen)."""
    return await asyncio.open_connection(host=str(address), port=port, limit=1 << 16)
