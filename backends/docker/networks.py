"""Per-run Docker networks (``NetPolicy`` runs): ``internal`` bridges on subnets we choose.

Served guests use none since issue #12: a bridge gives the host a route to
the guest, which bypassed the reverse proxy (see ``guestnet``).

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
reachable from the container. That is how the egress proxy is reached.

So each network gets a known bridge name (``pgbr-<token>``) and, when we
may (``hostfirewall``), a firewall chain that lets nothing from the bridge
reach the host except replies to the host's own connections and, for a
``NetPolicy`` run, TCP to its egress proxy (``isolate_from_host``, called
before any container joins). ``GuestNetwork.firewall`` is None when the
backend could not shield the host and the user accepted that
(``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1``). ``remove_guest_network`` removes
the chain and the network; stale chains of crashed runs are swept at the next
network creation.
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
from backends.docker.hostfirewall import (
    BRIDGE_OPTION,
    TOKEN_LENGTH,
    FirewallError,
    HostFirewall,
    bridge_name,
    host_reach_allowed,
)
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
    """One internal network we created: ``name``, ``id``, ``subnet``, the host's ``gateway`` address,
    its ``bridge`` interface and the ``firewall`` that guards it (None: the host is not shielded)."""

    id: str
    name: str
    subnet: ipaddress.IPv4Network
    gateway: str
    bridge: str = ""
    firewall: HostFirewall | None = None


def create_guest_network(engine: Engine, purpose: str, *, firewall: HostFirewall | None = None) -> GuestNetwork:
    """Create an internal network on a free subnet, with a bridge named after its token.

    With ``firewall``, stale chains of networks that are gone are swept first;
    the new network is not guarded yet: call ``isolate_from_host`` before a
    container joins it.

    Raises:
        EngineError: the daemon refused, or no free subnet was found.
    """
    if firewall is not None:
        firewall.sweep(lambda: {n.bridge for n in engine.networks() if n.bridge})
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
        token = secrets.token_hex(TOKEN_LENGTH // 2)
        name = f"{NAME_PREFIX}{purpose}-{token}"
        bridge = bridge_name(token)
        try:
            network_id = engine.create_network(
                name, subnet=str(subnet), gateway=gateway, labels={LABEL: purpose}, options={BRIDGE_OPTION: bridge}
            )
        except NetworkOverlap:
            taken.append(subnet)  # someone took it meanwhile
            continue
        return GuestNetwork(
            id=network_id, name=name, subnet=subnet, gateway=gateway, bridge=bridge, firewall=firewall
        )
    raise EngineError(f"no free /{PREFIX} subnet left in {POOL} for a {purpose} network")


def isolate_from_host(network: GuestNetwork, *, proxy_port: int | None = None) -> None:
    """Firewall the host off from ``network``, letting through only TCP to ``proxy_port`` on the gateway.

    Call it before any container joins. Nothing to do without a firewall.

    Raises:
        EngineError: the guard could not be installed (and the user did not set
            ``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1``; with it, a warning is logged instead).
    """
    if network.firewall is None:
        return
    try:
        network.firewall.guard(network.bridge, gateway=network.gateway, proxy_port=proxy_port)
    except FirewallError as exc:
        if host_reach_allowed():
            log.warning("guests on %s can reach host services (%s); allowed by the environment", network.name, exc)
            return
        raise EngineError(
            f"could not shield the host from the guest network {network.name}: {exc} "
            "(set PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1 to go on without it, at your risk)"
        ) from exc


def remove_guest_network(engine: Engine, network: GuestNetwork) -> None:
    """Remove the network, then its firewall chain; never raises (a failure is logged).

    When the network cannot be removed (a container may still be on it) the
    chain stays, so the host stays shielded; the next network creation sweeps
    it once the network is gone.
    """
    try:
        engine.remove_network(network.id)
    except EngineError:
        log.warning("could not remove network %s; its firewall chain stays", network.name, exc_info=True)
        return
    if network.firewall is not None:
        network.firewall.unguard(network.bridge)
