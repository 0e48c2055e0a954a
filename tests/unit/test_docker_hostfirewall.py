"""The host firewall's rule builder and runner, without root: pure functions and a recording runner."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from backends.docker import DockerBackend
from backends.docker import hostfirewall as hf
from backends.docker.hostfirewall import (
    FirewallError,
    HostFirewall,
    Tables,
    bridge_name,
    bridge_of_chain,
    chain_name,
    guard_rules,
    jumps_to,
    our_chains,
    stale_bridges,
    unguard_rules,
)

BRIDGE = "pgbr-0123456789"
CHAIN = "PG-0123456789"


def test_names() -> None:
    assert bridge_name("0123456789") == BRIDGE and len(BRIDGE) == 15
    assert chain_name(BRIDGE) == CHAIN and bridge_of_chain(CHAIN) == BRIDGE
    assert chain_name("docker0") is None and chain_name("br-0123456789ab") is None
    assert bridge_of_chain("DOCKER-USER") is None and bridge_of_chain("PG-") is None
    assert bridge_of_chain("PG-" + "0" * 11) is None  # the bridge name would be too long


def test_guard_rules_serve_ipv4() -> None:
    assert guard_rules(bridge=BRIDGE, family=4) == [
        ["-N", CHAIN],
        ["-A", CHAIN, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
        ["-A", CHAIN, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-A", CHAIN, "-j", "REJECT", "--reject-with", "icmp-port-unreachable"],
        ["-I", "INPUT", "1", "-i", BRIDGE, "-j", CHAIN],
        ["-I", "FORWARD", "1", "-i", BRIDGE, "!", "-o", BRIDGE, "-j", CHAIN],
    ]


def test_guard_rules_let_only_the_proxy_port_on_the_gateway_through() -> None:
    rules = guard_rules(bridge=BRIDGE, family=4, gateway="10.213.7.1", proxy_port=40123)
    accept = ["-A", CHAIN, "-d", "10.213.7.1/32", "-p", "tcp", "--dport", "40123", "-j", "ACCEPT"]
    assert rules[2] == accept  # after ESTABLISHED, before the REJECTs
    assert [r for r in rules if r[-1] == "ACCEPT"] == [rules[1], accept]
    # The chain is complete before anything jumps to it, so no packet sees a half-built chain.
    assert [r[0] for r in rules] == ["-N", "-A", "-A", "-A", "-A", "-I", "-I"]


def test_guard_rules_ipv6_has_no_proxy_rule() -> None:
    rules = guard_rules(bridge=BRIDGE, family=6, gateway="10.213.7.1", proxy_port=40123)
    assert not any("--dport" in r for r in rules)
    assert rules[-3] == ["-A", CHAIN, "-j", "REJECT", "--reject-with", "icmp6-port-unreachable"]


def test_guard_rules_refuse_foreign_bridges_and_a_port_without_gateway() -> None:
    with pytest.raises(ValueError):
        guard_rules(bridge="docker0", family=4)
    with pytest.raises(ValueError):
        guard_rules(bridge=BRIDGE, family=4, proxy_port=1)


def test_unguard_rules() -> None:
    assert unguard_rules(bridge=BRIDGE) == [
        ["-D", "INPUT", "-i", BRIDGE, "-j", CHAIN],
        ["-D", "FORWARD", "-i", BRIDGE, "!", "-o", BRIDGE, "-j", CHAIN],
        ["-F", CHAIN],
        ["-X", CHAIN],
    ]


LISTING = f"""-P INPUT ACCEPT
-N DOCKER
-N {CHAIN}
-N PG-aaaaaaaaaa
-A INPUT -i {BRIDGE} -j {CHAIN}
-A INPUT -i pgbr-aaaaaaaaaa -j PG-aaaaaaaaaa
-A FORWARD -i pgbr-aaaaaaaaaa ! -o pgbr-aaaaaaaaaa -j PG-aaaaaaaaaa
-A PG-aaaaaaaaaa -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A PG-aaaaaaaaaa -j REJECT --reject-with icmp-port-unreachable
"""


def test_listing_parsers() -> None:
    assert our_chains(LISTING) == [CHAIN, "PG-aaaaaaaaaa"]
    assert stale_bridges(LISTING, {BRIDGE}) == ["pgbr-aaaaaaaaaa"]
    assert stale_bridges(LISTING, {BRIDGE, "pgbr-aaaaaaaaaa"}) == []
    assert jumps_to(LISTING, "PG-aaaaaaaaaa") == [
        ["-D", "INPUT", "-i", "pgbr-aaaaaaaaaa", "-j", "PG-aaaaaaaaaa"],
        ["-D", "FORWARD", "-i", "pgbr-aaaaaaaaaa", "!", "-o", "pgbr-aaaaaaaaaa", "-j", "PG-aaaaaaaaaa"],
    ]


class FakeIptables:
    """Records calls; ``fail_on`` makes a call whose arguments contain it fail; ``listing`` answers ``-S``."""

    def __init__(self, *, fail_on: str = "", listing: str = "") -> None:
        self.calls: list[list[str]] = []
        self.fail_on = fail_on
        self.listing = listing

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.calls.append(argv)
        if argv[-1] == "-S":
            return subprocess.CompletedProcess(argv, 0, self.listing, "")
        if self.fail_on and self.fail_on in argv:
            return subprocess.CompletedProcess(argv, 1, "", "refused")
        if argv[3] == "-D":  # nothing to delete in a fresh fake
            return subprocess.CompletedProcess(argv, 1, "", "no such rule")
        return subprocess.CompletedProcess(argv, 0, "", "")


def firewall(tmp_path: Path, run: FakeIptables, *, six: bool = True) -> HostFirewall:
    (tmp_path / "net" / BRIDGE).mkdir(parents=True)
    (tmp_path / "ipv6" / BRIDGE).mkdir(parents=True)
    tables = Tables(iptables="/sbin/iptables", ip6tables="/sbin/ip6tables" if six else None)
    return HostFirewall(tables, run=run, sys_net=tmp_path / "net", proc_ipv6=tmp_path / "ipv6")


def test_guard_installs_both_families_and_switches_ipv6_off(tmp_path: Path) -> None:
    run = FakeIptables()
    firewall(tmp_path, run).guard(BRIDGE, gateway="10.213.7.1", proxy_port=40123)
    installs = [c for c in run.calls if c[3] in ("-N", "-A", "-I")]
    assert installs == [
        ["/sbin/iptables", "-w", "10", *r] for r in guard_rules(bridge=BRIDGE, family=4, gateway="10.213.7.1",
                                                                 proxy_port=40123)
    ] + [["/sbin/ip6tables", "-w", "10", *r] for r in guard_rules(bridge=BRIDGE, family=6)]
    assert (tmp_path / "ipv6" / BRIDGE / "disable_ipv6").read_text() == "1\n"


def test_a_refused_rule_removes_what_was_installed(tmp_path: Path) -> None:
    run = FakeIptables(fail_on="FORWARD")
    with pytest.raises(FirewallError, match="FORWARD"):
        firewall(tmp_path, run).guard(BRIDGE)
    six = ["/sbin/ip6tables", "-w", "10"]
    assert run.calls[-2:] == [[*six, "-F", CHAIN], [*six, "-X", CHAIN]]
    assert ["/sbin/iptables", "-w", "10", "-X", CHAIN] in run.calls[-8:]


def test_guard_refuses_a_bridge_in_another_namespace(tmp_path: Path) -> None:
    run = FakeIptables()
    with pytest.raises(FirewallError, match="not in this network namespace"):
        firewall(tmp_path, run).guard("pgbr-ffffffffff")
    assert run.calls == []


def test_sweep_removes_only_chains_of_dead_bridges(tmp_path: Path) -> None:
    run = FakeIptables(listing=LISTING)
    asked: list[int] = []

    def live() -> set[str]:
        asked.append(len(run.calls))
        return {BRIDGE}

    removed = firewall(tmp_path, run, six=False).sweep(live)
    assert removed == ["pgbr-aaaaaaaaaa"]
    assert asked == [1]  # networks are listed after the chains
    assert run.calls[1:] == [
        ["/sbin/iptables", "-w", "10", "-D", "INPUT", "-i", "pgbr-aaaaaaaaaa", "-j", "PG-aaaaaaaaaa"],
        ["/sbin/iptables", "-w", "10", "-D", "FORWARD", "-i", "pgbr-aaaaaaaaaa", "!", "-o", "pgbr-aaaaaaaaaa",
         "-j", "PG-aaaaaaaaaa"],
        ["/sbin/iptables", "-w", "10", "-F", "PG-aaaaaaaaaa"],
        ["/sbin/iptables", "-w", "10", "-X", "PG-aaaaaaaaaa"],
    ]


def test_sweep_without_chains_does_not_list_networks(tmp_path: Path) -> None:
    def live() -> set[str]:
        raise AssertionError("not needed")

    assert firewall(tmp_path, FakeIptables(listing="-P INPUT ACCEPT\n")).sweep(live) == []


def test_unguard_never_raises(tmp_path: Path) -> None:
    def broken(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        raise RuntimeError("boom")

    firewall(tmp_path, FakeIptables()).unguard("not-ours")
    HostFirewall(Tables(iptables="x"), run=broken).unguard(BRIDGE)


def test_detect_prefers_the_flavour_holding_dockers_chains(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf, "_which", lambda name: f"/usr/sbin/{name}")

    def run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        docker = "-N DOCKER\n" if argv[0].endswith("iptables-legacy") else ""
        return subprocess.CompletedProcess(list(argv), 0, "-P INPUT ACCEPT\n" + docker, "")

    found = hf.detect(run=run, net_admin=True)
    assert found.firewall is not None and found.reason == ""
    assert found.firewall.tables == Tables(iptables="/usr/sbin/iptables-legacy", ip6tables="/usr/sbin/ip6tables-legacy")


def test_detect_says_why_not() -> None:
    assert "not root" in hf.detect(net_admin=False).reason
    assert "rootless" in hf.detect(rootless=True, net_admin=True).reason

    def broken(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(list(argv), 3, "", "no table")

    assert "iptables" in hf.detect(net_admin=True, run=broken).reason


def test_has_net_admin(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text("Name: x\nCapEff:\t0000000000001000\n")
    assert hf.has_net_admin(status)
    status.write_text("Name: x\nCapEff:\t0000000000000000\n")
    assert not hf.has_net_admin(status)


def test_host_reach_allowed() -> None:
    assert hf.host_reach_allowed({hf.ALLOW_ENV: "1"})
    assert not hf.host_reach_allowed({hf.ALLOW_ENV: "0"}) and not hf.host_reach_allowed({})


# -- what the backend does without a firewall ---------------------------------------------------


def backend_without_firewall(monkeypatch: pytest.MonkeyPatch) -> DockerBackend:
    backend = DockerBackend()
    monkeypatch.setattr(backend, "unavailable_reason", lambda pack: None)
    monkeypatch.setattr(backend, "_host_isolation", lambda: hf.Detection(reason="this process is not root"))
    return backend


# Served guests have no network at all since issue #12 (item 4): the firewall gates NetPolicy runs only.
def test_without_firewall_network_runs_are_refused_with_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(hf.ALLOW_ENV, raising=False)
    backend = backend_without_firewall(monkeypatch)
    why = backend._host_reach_reason()
    assert why is not None
    assert "can reach host services on the bridge gateway" in why.replace("could", "can")
    assert "run as root" in why.lower() and f"{hf.ALLOW_ENV}=1" in why
    line = backend._isolation_diagnostic()
    assert not line.ok and not line.required
    assert "guests on network-policy runs can reach host services on the bridge gateway" in line.detail
    assert "refused" in line.detail and hf.ALLOW_ENV in line.hint


def test_without_firewall_the_opt_in_runs_and_diagnostics_still_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hf.ALLOW_ENV, "1")
    backend = backend_without_firewall(monkeypatch)
    assert backend._host_reach_reason() is None
    line = backend._isolation_diagnostic()
    assert not line.ok and not line.required
    assert "can reach host services on the bridge gateway" in line.detail and f"{hf.ALLOW_ENV}=1" in line.detail
