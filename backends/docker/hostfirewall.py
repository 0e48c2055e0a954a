"""Shielding the host from guests on our bridges: one iptables chain per guest network.

Why: a container on an ``internal`` Docker network has a default route via
the bridge's gateway address, and that address is the host. Docker 20.10
forwards nothing off the host from such a bridge, but packets addressed to
the host itself go through ``INPUT``, not ``FORWARD``: without this module a
guest could connect to any host service bound to the gateway address or to a
wildcard address (a developer's database, SSH, a dev web server...).

What: every guest network gets a known bridge name ``pgbr-<token>``
(``BRIDGE_OPTION``) and, before any container joins it, a chain
``PG-<token>`` in the ``filter`` table, jumped to first thing from ``INPUT``
and ``FORWARD`` for packets arriving on that bridge (``guard_rules``)::

    -N PG-<token>
    -A PG-<token> -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT     replies to the host's own connections
    -A PG-<token> -d <gateway>/32 -p tcp --dport <port> -j ACCEPT           only for a NetPolicy run's egress proxy
    -A PG-<token> -p tcp -j REJECT --reject-with tcp-reset                 everything else: refused at once
    -A PG-<token> -j REJECT --reject-with icmp-port-unreachable
    -I INPUT 1 -i pgbr-<token> -j PG-<token>
    -I FORWARD 1 -i pgbr-<token> ! -o pgbr-<token> -j PG-<token>            defence in depth (Docker drops it too)

The same goes into ``ip6tables`` (without the proxy rule: the proxy is IPv4)
when it works, and IPv6 is switched off on the bridge (the host keeps no
link-local address a guest could knock on). REJECT rather than DROP: the
guest learns nothing more either way, and a refused connection fails fast
instead of hanging until the run's wall time. ``unguard_rules`` undo it all;
removal is idempotent and never raises. A crashed process leaves a chain
named after its network's token: ``HostFirewall.sweep`` removes every
``PG-*`` chain whose bridge no longer belongs to a Docker network (chains
are listed before networks, so a network being set up right now is never
mistaken for a stale one: its network exists before its chain).

Which binary: the ``iptables`` flavour (nft or legacy) whose ruleset holds
Docker's own chains, so our rules sit next to Docker's.

Needs CAP_NET_ADMIN in the network namespace where the daemon makes its
bridges (rootful Docker, run as root). Without it (a user in the ``docker``
group, rootless Docker, Podman) ``detect`` says why, and the backend refuses
``NetPolicy`` runs unless ``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1``
(``ALLOW_ENV``) accepts the risk.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

log = logging.getLogger(__name__)

#: The Docker bridge driver's option that names the bridge interface.
BRIDGE_OPTION: Final = "com.docker.network.bridge.name"
#: Our bridges: ``pgbr-`` and ``TOKEN_LENGTH`` hex digits (15 characters, the kernel's limit).
BRIDGE_PREFIX: Final = "pgbr-"
#: Our chains: ``PG-`` and the bridge's token.
CHAIN_PREFIX: Final = "PG-"
#: Hex digits in a network's token.
TOKEN_LENGTH: Final = 10
#: Set to ``1`` to run with a network policy even when the host cannot be shielded (serving needs no network).
ALLOW_ENV: Final = "PLAYGROUND_DOCKER_ALLOW_HOST_REACH"
#: The Linux capability number of CAP_NET_ADMIN.
CAP_NET_ADMIN: Final = 12
#: Seconds one iptables call may take (it waits up to ``LOCK_WAIT`` for the xtables lock).
CALL_TIMEOUT: Final = 20.0
LOCK_WAIT: Final = "10"
#: Built-in chains we jump from.
HOOKS: Final = ("INPUT", "FORWARD")

Family = Literal[4, 6]


class FirewallError(Exception):
    """Installing a guard failed; the message says which rule and why."""


def bridge_name(token: str) -> str:
    """The bridge interface of the network with this token."""
    return BRIDGE_PREFIX + token


def chain_name(bridge: str) -> str | None:
    """The chain guarding one of our bridges (None for a bridge that is not ours)."""
    if not bridge.startswith(BRIDGE_PREFIX) or len(bridge) > 15:
        return None
    return CHAIN_PREFIX + bridge[len(BRIDGE_PREFIX) :]


def bridge_of_chain(chain: str) -> str | None:
    """The bridge a ``PG-*`` chain guards (None for a chain that is not ours)."""
    if not chain.startswith(CHAIN_PREFIX):
        return None
    token = chain[len(CHAIN_PREFIX) :]
    if not token or len(BRIDGE_PREFIX + token) > 15:
        return None
    return BRIDGE_PREFIX + token


def guard_rules(*, bridge: str, family: Family, gateway: str = "", proxy_port: int | None = None) -> list[list[str]]:
    """The iptables arguments (no binary, no ``-w``) that shield the host from ``bridge``, in order.

    ``proxy_port`` (with ``gateway``) lets TCP to the egress proxy through
    (IPv4 only). Pure: no I/O.
    """
    chain = chain_name(bridge)
    if chain is None:
        raise ValueError(f"{bridge!r} is not one of our bridges")
    rules = [
        ["-N", chain],
        ["-A", chain, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
    ]
    if proxy_port is not None and family == 4:
        if not gateway:
            raise ValueError("a proxy port needs the gateway address")
        rules.append(["-A", chain, "-d", f"{gateway}/32", "-p", "tcp", "--dport", str(proxy_port), "-j", "ACCEPT"])
    unreachable = "icmp-port-unreachable" if family == 4 else "icmp6-port-unreachable"
    rules += [
        ["-A", chain, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-A", chain, "-j", "REJECT", "--reject-with", unreachable],
    ]
    rules += [["-I", hook, "1", *jump(hook, bridge)] for hook in HOOKS]
    return rules


def jump(hook: str, bridge: str) -> list[str]:
    """The match and target of ``hook``'s jump to the chain of ``bridge`` (``FORWARD``: only traffic leaving it)."""
    chain = chain_name(bridge)
    if chain is None:
        raise ValueError(f"{bridge!r} is not one of our bridges")
    leaving = ["!", "-o", bridge] if hook == "FORWARD" else []
    return ["-i", bridge, *leaving, "-j", chain]


def unguard_rules(*, bridge: str) -> list[list[str]]:
    """The iptables arguments that undo ``guard_rules`` (each may fail when already undone). Pure."""
    chain = chain_name(bridge)
    if chain is None:
        raise ValueError(f"{bridge!r} is not one of our bridges")
    return [*(["-D", hook, *jump(hook, bridge)] for hook in HOOKS), ["-F", chain], ["-X", chain]]


def our_chains(listing: str) -> list[str]:
    """The ``PG-*`` chains in an ``iptables -S`` listing."""
    chains = []
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "-N" and bridge_of_chain(parts[1]) is not None:
            chains.append(parts[1])
    return chains


def jumps_to(listing: str, chain: str) -> list[list[str]]:
    """``-D`` arguments for every rule of an ``iptables -S`` listing that jumps to ``chain``."""
    found = []
    for line in listing.splitlines():
        try:
            parts = shlex.split(line)
        except ValueError:
            continue
        if len(parts) > 2 and parts[0] == "-A" and parts[-2:] == ["-j", chain] and parts[1] != chain:
            found.append(["-D", *parts[1:]])
    return found


def stale_bridges(listing: str, live_bridges: Collection[str]) -> list[str]:
    """Bridges whose ``PG-*`` chain is in ``listing`` but which no live network uses. Pure."""
    stale = []
    for chain in our_chains(listing):
        bridge = bridge_of_chain(chain)
        if bridge is not None and bridge not in live_bridges:
            stale.append(bridge)
    return stale


# -- running it ---------------------------------------------------------------

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            list(argv), capture_output=True, text=True, timeout=CALL_TIMEOUT, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(list(argv), 127, "", str(exc))


@dataclass(frozen=True, slots=True, kw_only=True)
class Tables:
    """The binaries to use: ``iptables`` and, when it works, the matching ``ip6tables``."""

    iptables: str
    ip6tables: str | None = None


class HostFirewall:
    """Installs and removes the per-bridge guards with ``tables``. Thread-safe (iptables locks itself)."""

    def __init__(
        self,
        tables: Tables,
        *,
        run: Runner = _run,
        sys_net: Path = Path("/sys/class/net"),
        proc_ipv6: Path = Path("/proc/sys/net/ipv6/conf"),
    ) -> None:
        self.tables = tables
        self._run = run
        self._sys_net = sys_net
        self._proc_ipv6 = proc_ipv6

    def _binaries(self) -> list[tuple[Family, str]]:
        found: list[tuple[Family, str]] = [(4, self.tables.iptables)]
        if self.tables.ip6tables:
            found.append((6, self.tables.ip6tables))
        return found

    def _call(self, binary: str, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return self._run([binary, "-w", LOCK_WAIT, *args])

    def guard(self, bridge: str, *, gateway: str = "", proxy_port: int | None = None) -> None:
        """Shield the host from ``bridge`` (a new one: its chain must not exist yet).

        Raises:
            FirewallError: the bridge is not in this network namespace, or a rule was refused
                (what was installed is removed again).
        """
        if not (self._sys_net / bridge).exists():
            raise FirewallError(
                f"the bridge {bridge} is not in this network namespace (rootless Docker or Podman?): "
                "cannot firewall it"
            )
        try:
            for family, binary in self._binaries():
                for args in guard_rules(bridge=bridge, family=family, gateway=gateway, proxy_port=proxy_port):
                    done = self._call(binary, args)
                    if done.returncode != 0:
                        raise FirewallError(f"{binary} {shlex.join(args)} failed: {done.stderr.strip()}")
        except BaseException:
            self.unguard(bridge)
            raise
        self._disable_ipv6(bridge)

    def _disable_ipv6(self, bridge: str) -> None:
        path = self._proc_ipv6 / bridge / "disable_ipv6"
        try:
            path.write_text("1\n")
        except OSError as exc:
            log.debug("could not switch IPv6 off on %s: %s", bridge, exc)

    def unguard(self, bridge: str) -> None:
        """Remove the guard of ``bridge``: jumps, rules, chain. Idempotent; never raises."""
        chain = chain_name(bridge)
        if chain is None:
            return
        for _, binary in self._binaries():
            try:
                for args in unguard_rules(bridge=bridge):
                    for _ in range(16 if args[0] == "-D" else 1):  # a jump inserted twice goes too
                        if self._call(binary, args).returncode != 0:
                            break
            except Exception:  # cleanup must never raise
                log.warning("removing the firewall chain %s failed", chain, exc_info=True)

    def sweep(self, live_bridges: Callable[[], Collection[str]]) -> list[str]:
        """Remove the guards of bridges no live network uses (a crashed run's); return those bridges.

        ``live_bridges`` is called after the chains were listed. Never raises.
        """
        listings: list[tuple[str, str]] = []
        for _, binary in self._binaries():
            done = self._call(binary, ["-S"])
            if done.returncode == 0:
                listings.append((binary, done.stdout))
        if not any(our_chains(text) for _, text in listings):
            return []
        try:
            live = set(live_bridges())
        except Exception:
            log.warning("could not list the live networks; stale firewall chains stay", exc_info=True)
            return []
        removed: list[str] = []
        for binary, text in listings:
            for bridge in stale_bridges(text, live):
                chain = chain_name(bridge)
                assert chain is not None
                for args in jumps_to(text, chain):  # also jumps someone added in other hooks
                    self._call(binary, args)
                self._call(binary, ["-F", chain])
                self._call(binary, ["-X", chain])
                if bridge not in removed:
                    removed.append(bridge)
        if removed:
            log.info("removed stale firewall chains for %s", ", ".join(removed))
        return removed


# -- can we? ------------------------------------------------------------------


def has_net_admin(status: Path = Path("/proc/self/status")) -> bool:
    """Whether this process holds CAP_NET_ADMIN (root normally does)."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except (OSError, ValueError, IndexError):
        pass
    return os.geteuid() == 0


def _which(name: str) -> str | None:
    path = os.environ.get("PATH", "")
    return shutil.which(name, path=os.pathsep.join([path, "/usr/sbin", "/sbin", "/usr/local/sbin"]))


def host_reach_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user accepted that guests may reach host services (``ALLOW_ENV=1``)."""
    env = os.environ if environ is None else environ
    return env.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True, slots=True, kw_only=True)
class Detection:
    """``firewall`` when the host can be shielded here, else ``reason`` why not."""

    firewall: HostFirewall | None = None
    reason: str = ""


def detect(*, rootless: bool = False, run: Runner = _run, net_admin: bool | None = None) -> Detection:
    """Find out whether we can firewall our bridges: CAP_NET_ADMIN, a working iptables, a rootful daemon.

    Picks the iptables flavour that holds Docker's chains (``iptables``,
    ``iptables-nft`` or ``iptables-legacy``), falling back to plain
    ``iptables`` when none does, and the matching ``ip6tables`` if it works.
    """
    if rootless:
        return Detection(reason="the daemon is rootless: its bridges live in a network namespace we cannot firewall")
    if not (has_net_admin() if net_admin is None else net_admin):
        return Detection(reason="this process is not root (no CAP_NET_ADMIN), so it cannot firewall the bridges")
    usable: list[str] = []
    for flavour in ("iptables", "iptables-nft", "iptables-legacy"):
        binary = _which(flavour)
        if binary is None:
            continue
        done = run([binary, "-w", LOCK_WAIT, "-S"])
        if done.returncode != 0:
            continue
        if "-N DOCKER" in done.stdout:
            usable.insert(0, binary)
            break
        usable.append(binary)
    if not usable:
        return Detection(reason="no working iptables binary was found (install the iptables package)")
    iptables = usable[0]
    six = _which(os.path.basename(iptables).replace("iptables", "ip6tables"))
    if six is not None and run([six, "-w", LOCK_WAIT, "-S"]).returncode != 0:
        six = None
    return Detection(firewall=HostFirewall(Tables(iptables=iptables, ip6tables=six), run=run))
