"""The guest's outbound network path: an SSRF-guarded egress proxy enforcing a ``NetPolicy``.

``EgressPolicyGuard`` is the pure decision (no sockets); ``start_egress_proxy``
runs the HTTP/CONNECT proxy that applies it, resolves names itself, pins the
checked address and records every request as a ``NetLogEntry``.
"""

from playground.net.egress import DEFAULT_MAX_BYTES, DEFAULT_MAX_REQUESTS, EgressProxy, start_egress_proxy
from playground.net.guard import (
    DEFAULT_PORTS,
    METADATA_ADDRESSES,
    Decision,
    EgressPolicyGuard,
    address_problem,
    always_refused,
    host_matches,
    is_numeric_alias,
    normalize_host,
)
from playground.net.resolver import Connector, Resolver, direct_connector, system_resolver

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_PORTS",
    "METADATA_ADDRESSES",
    "Connector",
    "Decision",
    "EgressPolicyGuard",
    "EgressProxy",
    "Resolver",
    "address_problem",
    "always_refused",
    "direct_connector",
    "host_matches",
    "is_numeric_alias",
    "normalize_host",
    "start_egress_proxy",
    "system_resolver",
]
