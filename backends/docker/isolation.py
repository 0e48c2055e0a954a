"""What this process can do to a guest beyond running it: shield the host, enter its namespaces, record it.

Why its own module: several features depend on the same facts about the
daemon and this process, and each must be refused with a reason rather than
half-work:

* ``NetPolicy`` runs need the host shielded from guests on our bridges (a
  firewall, ``hostfirewall``), or the user's explicit opt-in (``ALLOW_ENV``);
* serving, the sinkhole and the spawn watch need to enter the guest's network
  namespace (root, a local rootful daemon; ``guestnet``);
* the host's network records do not work on Podman (see ``network_record_refusal``).

Host services and guests on a network: a container on one of our internal
networks (a ``NetPolicy`` run) has a route to the bridge's gateway, which is
the host; without a firewall it could connect to any host service listening
on that address or on a wildcard address (a database, SSH, a dev server).
When this process may (root, i.e. CAP_NET_ADMIN, a working ``iptables``, a
rootful daemon whose bridges are in our network namespace), each such
network gets a firewall chain that refuses everything from the guest to the
host except the run's egress proxy (``hostfirewall``). When it may not (a
user in the ``docker`` group, rootless Docker, Podman, no iptables),
``NetPolicy`` runs are refused with the reason, unless
``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1`` accepts that guests may reach host
services; ``diagnostics()`` says which case applies. Plain runs, served
guests (``network_mode=none``) and REPL sessions need no firewall.

``HostIsolation`` caches the firewall detection per daemon; the rest are
pure functions of what was detected.
"""

from __future__ import annotations

import threading

from backends.docker.detect import DaemonProbe, firewall_refusal
from backends.docker.guestnet import netns_unavailable_reason
from backends.docker.hostfirewall import ALLOW_ENV, Detection, detect, host_reach_allowed
from backends.docker.profile import EngineKind
from playground.core import Diagnostic


class HostIsolation:
    """Whether (and with which firewall) the host can be shielded from our networks; cached per daemon URL."""

    def __init__(self, probe: DaemonProbe) -> None:
        self._probe = probe
        self._lock = threading.Lock()
        self._cached: tuple[str, Detection] | None = None

    def get(self) -> Detection:
        probe = self._probe.get()
        endpoint = probe.endpoint
        if endpoint is None or probe.info is None:
            return Detection(reason=probe.reason or "no daemon")
        with self._lock:
            if self._cached is not None and self._cached[0] == endpoint.url:
                return self._cached[1]
        path = endpoint.socket_path
        refused = firewall_refusal(endpoint, probe.info)
        if refused is not None or path is None:
            found = Detection(reason=refused or "not a local socket")
        else:
            rootless = "rootless" in endpoint.source.lower() or path.startswith("/run/user/")
            found = detect(rootless=rootless)
        with self._lock:
            self._cached = (endpoint.url, found)
        return found


def host_reach_reason(found: Detection) -> str | None:
    """None when guests on a network (``NetPolicy`` runs) may be started; else why not (the host cannot be
    shielded)."""
    if found.firewall is not None or host_reach_allowed():
        return None
    return (
        f"guests on network-policy runs could reach host services on the bridge gateway: {found.reason}. "
        f"Run as root (so the backend can firewall its bridges), or set {ALLOW_ENV}=1 to accept the risk"
    )


def serve_reason(probe: DaemonProbe) -> str | None:
    """None when this process can enter a guest's network namespace (serving, sinkhole, spawn watch)."""
    found = probe.get()
    endpoint = found.endpoint
    if endpoint is None:
        return found.reason or "no daemon"
    path = endpoint.socket_path
    rootless = "rootless" in endpoint.source.lower() or (path or "").startswith("/run/user/")
    return netns_unavailable_reason(socket_path=path, rootless=rootless)


def network_record_refusal(probe: DaemonProbe) -> str | None:
    """Why the host's network recorder cannot work on this daemon whatever this process may do, or None.

    Not on Podman: there the route and the refusing rules are set up, but
    the packet copies never reach the recorder (seen in CI with Podman 4.3,
    cause not found), so the host would claim a record it cannot make; the
    in-guest hooks still report.
    """
    info = probe.get().info
    if info is not None and info.kind is EngineKind.PODMAN:
        return "Podman: the host's network recorder gets no packets there"
    return None


def isolation_diagnostic(found: Detection) -> Diagnostic:
    """The doctor line: are network-policy guests firewalled from host services, and if not what happens."""
    name = "docker host isolation"
    if found.firewall is not None:
        tables = found.firewall.tables
        return Diagnostic(
            name=name,
            ok=True,
            detail=(
                "network-policy guests are firewalled from host services "
                f"({tables.iptables}{', ' + tables.ip6tables if tables.ip6tables else ''})"
            ),
            required=False,
        )
    detail = f"guests on network-policy runs can reach host services on the bridge gateway: {found.reason}"
    if host_reach_allowed():
        return Diagnostic(
            name=name,
            ok=False,
            detail=f"{detail}; allowed by {ALLOW_ENV}=1",
            hint="run as root (CAP_NET_ADMIN, iptables, rootful Docker) so the bridges can be firewalled",
            required=False,
        )
    return Diagnostic(
        name=name,
        ok=False,
        detail=f"{detail}; network-policy runs are refused",
        hint=f"run as root (CAP_NET_ADMIN, iptables, rootful Docker), or set {ALLOW_ENV}=1 to accept the risk",
        required=False,
    )
