"""The egress policy as pure decisions: host, port and addresses in, allow or deny out.

Nothing here opens a socket or resolves a name. The egress proxy asks
:class:`EgressPolicyGuard` twice per request: :meth:`~EgressPolicyGuard.check_target`
before any DNS lookup (host syntax, allow-list, port, IP literals), and
:meth:`~EgressPolicyGuard.check_addresses` on the answers of its own lookup.
It then connects only to addresses that passed, so a second lookup can never
swap a checked address for another one (DNS rebinding).

Refused destinations (unless ``NetPolicy.allow_private``):

* private, loopback, link-local, site-local, shared (CGNAT ``100.64.0.0/10``),
  multicast, reserved, unspecified and otherwise non-global addresses;
* cloud metadata endpoints (``169.254.169.254``, ``169.254.170.2``,
  ``100.100.100.200``, ``fd00:ec2::254``) - refused even with ``allow_private``;
* IPv6 forms that embed an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``,
  IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96`` and ``64:ff9b:1::/48``,
  6to4 ``2002::/16``, Teredo ``2001::/32``): a dual-stack socket or a
  translator would turn them into the IPv4 address, so they are refused
  outright; the reason names the embedded address;
* scoped IPv6 addresses (``fe80::1%eth0``).

Host names that are numbers in disguise (``2130706433``, ``0x7f000001``,
``0177.0.0.1``, ``127.1``, any name whose last label is numeric) are refused
always, even with ``allow_private``: ``inet_aton`` and browsers read them as
IPv4 addresses, and no real host name looks like that. IP literals (canonical
dotted quads, bracketed IPv6) are treated as addresses: they must be listed
verbatim in ``allow_hosts`` (wildcards never match them) and pass the address
checks. ``NetPolicy`` rejects ``:`` in ``allow_hosts``, so IPv6 literals can
never be allowed.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from playground.core import NetPolicy

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Ports allowed when ``NetPolicy.allow_ports`` is empty.
DEFAULT_PORTS: frozenset[int] = frozenset({80, 443})

#: Instance-metadata endpoints of the large clouds; refused even with ``allow_private``.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    {
        ipaddress.IPv4Address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, ...
        ipaddress.IPv4Address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.IPv4Address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.IPv6Address("fd00:ec2::254"),  # AWS IMDS over IPv6
    }
)

_SHARED_V4 = ipaddress.IPv4Network("100.64.0.0/10")
#: IANA special-purpose ranges that some Python versions still call global.
_SPECIAL_PURPOSE: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = (
    ipaddress.IPv4Network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.IPv4Network("192.88.99.0/24"),  # deprecated 6to4 relay anycast
    ipaddress.IPv4Network("198.18.0.0/15"),  # benchmarking
    ipaddress.IPv6Network("100::/64"),  # discard-only
    ipaddress.IPv6Network("2001::/23"),  # IETF protocol assignments
    ipaddress.IPv6Network("3fff::/20"),  # documentation (RFC 9637)
    ipaddress.IPv6Network("5f00::/16"),  # SRv6 SIDs
)
_NAT64_V6 = ipaddress.IPv6Network("64:ff9b::/96")
_LOCAL_NAT64_V6 = ipaddress.IPv6Network("64:ff9b:1::/48")
_COMPAT_V6 = ipaddress.IPv6Network("::/96")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")
_MAX_HOST_LEN = 253


@dataclass(frozen=True, slots=True)
class Decision:
    """The guard's answer. ``reason`` says why a request was refused (empty when allowed)."""

    allowed: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.allowed


ALLOW = Decision(True)


def _deny(reason: str) -> Decision:
    return Decision(False, reason)


def normalize_host(host: str) -> str:
    """Lower-case ``host``, drop one trailing dot and IPv6 brackets.

    Raises:
        ValueError: the host is empty, too long, not ASCII, or not a valid
            DNS name, dotted-quad or bracketed IPv6 literal.
    """
    if not isinstance(host, str):
        raise TypeError(f"host must be str, got {type(host).__name__}")
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        try:
            addr = ipaddress.IPv6Address(inner)
        except ValueError as exc:
            raise ValueError(f"bad IPv6 literal {host!r}") from exc
        if addr.scope_id:
            raise ValueError(f"scoped IPv6 literal {host!r}")
        return inner
    text = text.removesuffix(".")
    if not text or len(text) > _MAX_HOST_LEN or not text.isascii():
        raise ValueError(f"bad host name {host!r}")
    if not all(_LABEL.fullmatch(label) for label in text.split(".")):
        raise ValueError(f"bad host name {host!r}")
    return text


def is_numeric_alias(host: str) -> bool:
    """True when ``host`` (normalized) would be read as an IPv4 address but is not a canonical dotted quad.

    Covers ``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``, ``0x7f.1``
    and any name whose last label is numeric (the WHATWG URL rule).
    """
    if ":" in host:
        return False
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return bool(_NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]))
    return False


def host_matches(pattern: str, host: str) -> bool:
    """Whether one ``allow_hosts`` entry admits ``host`` (both normalized).

    ``*.example.test`` matches ``a.example.test`` and ``a.b.example.test`` but
    not ``example.test``, ``evilexample.test`` or ``example.test.evil``. Other
    entries match exactly. Wildcards never match IP literals.
    """
    if pattern.startswith("*."):
        suffix = pattern[1:]  # ".example.test"
        return host.endswith(suffix) and len(host) > len(suffix) and _literal(host) is None
    return host == pattern


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def address_problem(addr: IPAddress) -> str | None:
    """Why ``addr`` is not a public unicast destination, or ``None`` when it is.

    This is the full check (used when ``allow_private`` is off); the metadata
    and embedding checks of :func:`always_refused` are part of it.
    """
    hard = always_refused(addr)
    if hard:
        return hard
    if addr.is_unspecified:
        return f"unspecified address {addr}"
    if addr.is_loopback:
        return f"loopback address {addr}"
    if addr.is_link_local:
        return f"link-local address {addr}"
    if addr.is_multicast:
        return f"multicast address {addr}"
    if isinstance(addr, ipaddress.IPv4Address) and addr in _SHARED_V4:
        return f"shared (CGNAT) address {addr}"
    if isinstance(addr, ipaddress.IPv6Address) and addr.is_site_local:
        return f"site-local address {addr}"
    if addr.is_reserved:
        return f"reserved address {addr}"
    if addr.is_private:
        return f"private address {addr}"
    if any(addr.version == net.version and addr in net for net in _SPECIAL_PURPOSE):
        return f"special-purpose address {addr}"
    if not addr.is_global:
        return f"non-global address {addr}"
    return None


def always_refused(addr: IPAddress) -> str | None:
    """Problems that ``allow_private`` does not waive: metadata endpoints, IPv4-embedding IPv6 forms, scopes."""
    if addr in METADATA_ADDRESSES:
        return f"cloud metadata address {addr}"
    if isinstance(addr, ipaddress.IPv4Address):
        return None
    if addr.scope_id:
        return f"scoped IPv6 address {addr}"
    embedded: ipaddress.IPv4Address | None = None
    form = ""
    if addr.ipv4_mapped is not None:
        embedded, form = addr.ipv4_mapped, "IPv4-mapped"
    elif addr.sixtofour is not None:
        embedded, form = addr.sixtofour, "6to4"
    elif addr.teredo is not None:
        embedded, form = addr.teredo[1], "Teredo"
    elif addr in _NAT64_V6:
        embedded, form = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "NAT64"
    elif addr in _LOCAL_NAT64_V6:
        return f"local-use NAT64 address {addr}"
    elif addr in _COMPAT_V6 and int(addr) > 1:
        embedded, form = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "IPv4-compatible"
    if embedded is None:
        return None
    inner = address_problem(embedded)
    detail = f": {inner}" if inner else ""
    return f"{form} IPv6 address {addr} embeds {embedded}{detail}"


class EgressPolicyGuard:
    """Pure allow/deny decisions for one :class:`~playground.core.NetPolicy`.

    Stateless apart from the policy; safe to share between threads and loops.
    Counting caps (``max_requests``, ``max_bytes``) are the proxy's job.
    """

    __slots__ = ("_patterns", "_policy", "_ports")

    def __init__(self, policy: NetPolicy) -> None:
        if not isinstance(policy, NetPolicy):
            raise TypeError(f"policy must be a NetPolicy, got {type(policy).__name__}")
        self._policy = policy
        self._patterns = tuple(policy.allow_hosts)
        self._ports = frozenset(policy.allow_ports) or DEFAULT_PORTS

    @property
    def policy(self) -> NetPolicy:
        return self._policy

    @property
    def ports(self) -> frozenset[int]:
        """The effective allowed ports (80 and 443 when the policy lists none)."""
        return self._ports

    def literal_address(self, host: str) -> IPAddress | None:
        """The address ``host`` denotes when it is an IP literal (after :func:`normalize_host`), else ``None``."""
        return _literal(host)

    def check_target(self, host: str, port: int) -> Decision:
        """Decide on a destination before any DNS lookup.

        ``host`` may be raw (as the guest wrote it): it is normalized here.
        When this allows an IP literal, the address checks have already run
        and the proxy connects to that literal without a lookup.
        """
        try:
            name = normalize_host(host)
        except (TypeError, ValueError) as exc:
            return _deny(str(exc))
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            return _deny(f"bad port {port!r}")
        if is_numeric_alias(name):
            return _deny(f"numeric host form {host!r} is refused (write a canonical dotted-quad address)")
        literal = _literal(name)
        if literal is not None:
            verdict = self.check_addresses(name, [literal])
            if not verdict:
                return verdict
        if not any(host_matches(p, name) for p in self._patterns):
            return _deny(f"host {name!r} is not in allow_hosts")
        if port not in self._ports:
            return _deny(f"port {port} is not allowed (allowed: {', '.join(map(str, sorted(self._ports)))})")
        return ALLOW

    def check_addresses(self, host: str, addresses: Iterable[IPAddress | str]) -> Decision:
        """Decide on the answers of a lookup for ``host``.

        All answers must pass; one refused answer refuses the request (a name
        that mixes public and private answers is treated as hostile). An
        empty answer is refused.
        """
        parsed: list[IPAddress] = []
        for item in addresses:
            try:
                parsed.append(item if not isinstance(item, str) else ipaddress.ip_address(item))
            except ValueError:
                return _deny(f"{host} resolved to an unparsable address {item!r}")
        if not parsed:
            return _deny(f"{host} did not resolve to any address")
        for addr in parsed:
            problem = always_refused(addr) if self._policy.allow_private else address_problem(addr)
            if problem:
                return _deny(f"{host} -> {problem}")
        return ALLOW
