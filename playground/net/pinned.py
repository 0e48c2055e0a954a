"""Connecting the egress proxy to a destination it has checked, at an address it has checked.

:func:`open_pinned` asks the guard about the host and port, resolves the
name itself through the injected resolver (never the guest's DNS), checks
every answer and connects through the injected connector to one checked
address. The address is *pinned*: nothing re-resolves the name between the
check and the connect, so DNS rebinding cannot swap it.
"""

from __future__ import annotations

import asyncio
import ipaddress

from playground.net.guard import EgressPolicyGuard, IPAddress, normalize_host
from playground.net.http1 import Refused
from playground.net.resolver import Connector, Resolver

__all__ = ["open_pinned"]


async def open_pinned(
    guard: EgressPolicyGuard,
    raw_host: str,
    port: int,
    *,
    resolver: Resolver,
    connector: Connector,
    timeout: float,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Check, resolve, check again and connect to a checked address.

    ``timeout`` bounds the lookup and each connect attempt; the addresses
    are tried in the resolver's order.

    Raises:
        Refused: 403 when the guard refuses the target or an answer, 502
            when the name does not resolve or no address accepts.
    """
    verdict = guard.check_target(raw_host, port)
    if not verdict:
        raise Refused(403, verdict.reason)
    host = normalize_host(raw_host)
    literal = guard.literal_address(host)
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    else:
        try:
            answers = await asyncio.wait_for(resolver(host, port), timeout)
        except (TimeoutError, OSError) as exc:
            raise Refused(502, f"cannot resolve {host}: {exc!r}") from exc
        verdict = guard.check_addresses(host, list(answers))
        if not verdict:
            raise Refused(403, verdict.reason)
        addresses = [ipaddress.ip_address(a) for a in answers]
    last: BaseException | None = None
    for address in addresses:
        try:
            return await asyncio.wait_for(connector(address, port), timeout)
        except (TimeoutError, OSError) as exc:
            last = exc
    raise Refused(502, f"cannot connect to {host}:{port}: {last!r}")
