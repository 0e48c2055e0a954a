"""Per-service and per-run Docker networks: ``internal`` bridges on subnets we choose.

Each network is a ``/28`` from ``POOL`` (10.213.0.0/16, private) that
overlaps no existing Docker network and no route of the host; the daemon is
the final judge (a clash it reports is retried on another subnet).
Gateway ``.1`` is the host's address on the bridge; the one container gets
an address from the rest.

What ``internal=True`` gives on Docker 20.10 (measured): the host forwards
nothing from the bridge to any other interface - ``DOCKER-ISOLATION-STAGE-1``
drops packets entering the bridge from outside its subnet and leaving it for
outside, and ``FORWARD`` defaults to DROP - but the container still has a
default route via the gateway, and the gateway is the host itself: host
services listening on the gateway address or on a wildcard address are
reachable from the container. That is how the egress proxy is reached; it
also means a guest with a network can knock on the host's wildcard-bound
services (see the backend's docs).
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from backends.docker.engine import Engine, EngineError, NetworkOverlap
from backends.docker.profile import LABEL

log = logging.getLogger(__name__)

#: Where our subnets come from.
POOL: Final = ipaddress.IPv4Network("10.213.0.0/16")
#: Size of one network: gateway, one container, room to spare.
PREFIX: Final = 28
#: Attempts before giving up when the daemon keeps reporting clashes.
ATTEMPTS: Final = 8
#: Name prefix of our networks (with ``LABEL``, for finding leaks).
NAME_PREFIX: Final = "playground-"


def host_routes(path: Path = Path("/proc/net/route")) -> list[ipaddress.IPv4Network]:
    """The host's IPv4 routes (destination/mask) other than the default route; [] when unreadable."""
    routes: list[ipaddress.IPv4Network] = []
    try:
        lines = path.read_text().splitlines()[1:]
    except OSError:
        return routes
    for line in lines:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            dest = ipaddress.IPv4Address(bytes.fromhex(fields[1])[::-1])
            mask = ipaddress.IPv4Address(bytes.fromhex(fields[7])[::-1])
            net = ipaddress.IPv4Network(f"{dest}/{mask}", strict=False)
        except ValueError:
            continue
        if net.prefixlen:
            routes.append(net)
    return routes


def pick_subnet(taken: Iterable[ipaddress.IPv4Network], start: int) -> ipaddress.IPv4Network | None:
    """The first ``/PREFIX`` of ``POOL`` from index ``start`` (wrapping) that overlaps nothing ``taken``."""
    taken = list(taken)
    candidates = list(POOL.subnets(new_prefix=PREFIX))
    for i in range(len(candidates)):
        subnet = candidates[(start + i) % len(candidates)]
        if not any(subnet.overlaps(other) for other in taken):
            return subnet
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class GuestNetwork:
    """One internal network we created: ``name``, ``id``, ``subnet`` and the host's ``gateway`` address."""

    id: str
    name: str
    subnet: ipaddress.IPv4Network
    gateway: str


def create_guest_network(engine: Engine, purpose: str) -> GuestNetwork:
    """Create an internal network on a free subnet.

    Raises:
        EngineError: the daemon refused, or no free subnet was found.
    """
    taken: list[ipaddress.IPv4Network] = host_routes()
    for info in engine.networks():
        for text in info.subnets:
            try:
                net = ipaddress.ip_network(text, strict=False)
            except ValueError:
                continue
            if isinstance(net, ipaddress.IPv4Network):
                taken.append(net)
    count = 1 << (PREFIX - POOL.prefixlen)
    for _ in range(ATTEMPTS):
        subnet = pick_subnet(taken, secrets.randbelow(count))
        if subnet is None:
            break
        gateway = str(subnet.network_address + 1)
        name = f"{NAME_PREFIX}{purpose}-{secrets.token_hex(6)}"
        try:
            network_id = engine.create_network(name, subnet=str(subnet), gateway=gateway, labels={LABEL: purpose})
        except NetworkOverlap:
            taken.append(subnet)  # someone took it meanwhile
            continue
        return GuestNetwork(id=network_id, name=name, subnet=subnet, gateway=gateway)
    raise EngineError(f"no free /{PREFIX} subnet left in {POOL} for a {purpose} network")


def remove_guest_network(engine: Engine, network: GuestNetwork) -> None:
    """Remove the network; never raises (a failure is logged: it leaks only an address range)."""
    try:
        engine.remove_network(network.id)
    except EngineError:
        log.warning("could not remove network %s", network.name, exc_info=True)
