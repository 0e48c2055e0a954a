"""The egress guard as pure decisions: no sockets, no DNS.

Addresses such as 93.184.216.34 below are only ever *checked*, never contacted.
"""

from __future__ import annotations

import ipaddress

import pytest

from playground.core import NetPolicy
from playground.net import (
    METADATA_ADDRESSES,
    EgressPolicyGuard,
    address_problem,
    host_matches,
    is_numeric_alias,
    normalize_host,
)

PUBLIC = "93.184.216.34"


def guard(*hosts: str, ports: tuple[int, ...] = (), allow_private: bool = False) -> EgressPolicyGuard:
    return EgressPolicyGuard(NetPolicy(allow_hosts=hosts, allow_ports=ports, allow_private=allow_private))


@pytest.mark.parametrize(
    ("pattern", "host", "ok"),
    [
        ("*.example.test", "a.example.test", True),
        ("*.example.test", "a.b.example.test", True),
        ("*.example.test", "example.test", False),
        ("*.example.test", "example.test.evil", False),
        ("*.example.test", "evilexample.test", False),
        ("*.example.test", ".example.test", False),
        ("*.example.test", "a.example.test.evil", False),
        ("example.test", "example.test", True),
        ("example.test", "a.example.test", False),
        ("example.test", "example.tes", False),
        ("*.0.0.1", "127.0.0.1", False),  # wildcards never match IP literals
    ],
)
def test_host_matches(pattern: str, host: str, ok: bool) -> None:
    assert host_matches(pattern, host) is ok


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        ("A.Example.Test.", True),  # case and one trailing dot are normalized
        ("a.b.example.test", True),
        ("example.test", False),
        ("evilexample.test", False),
        ("example.test.evil", False),
        ("a.example.test:80", False),
        ("a..example.test", False),
        ("a.example.test..", False),
        ("", False),
        ("ä.example.test", False),
        ("a.example.test/evil", False),
        ("a.example.test\x00", False),
        ("a.example.test@evil.test", False),
    ],
)
def test_check_target_wildcards(host: str, ok: bool) -> None:
    verdict = guard("*.example.test").check_target(host, 443)
    assert verdict.allowed is ok, verdict.reason
    if not ok:
        assert verdict.reason


def test_ports_default_and_explicit() -> None:
    g = guard("example.test")
    assert g.ports == frozenset({80, 443})
    assert g.check_target("example.test", 80)
    assert g.check_target("example.test", 443)
    denied = g.check_target("example.test", 8080)
    assert not denied and "port 8080" in denied.reason
    g2 = guard("example.test", ports=(8443,))
    assert g2.check_target("example.test", 8443)
    assert not g2.check_target("example.test", 443)
    assert not g.check_target("example.test", 0)
    assert not g.check_target("example.test", 70000)
    assert not g.check_target("example.test", True)


def test_empty_allow_list_denies_everything() -> None:
    verdict = guard().check_target("example.test", 443)
    assert not verdict and "not in allow_hosts" in verdict.reason


def test_decision_is_truthy_only_when_allowed() -> None:
    assert guard("example.test").check_target("example.test", 80)
    assert not guard("example.test").check_target("other.test", 80)


# -- addresses ----------------------------------------------------------------------------------------------------

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("169.254.1.1", "link-local"),
    ("169.254.169.254", "metadata"),
    ("169.254.170.2", "metadata"),
    ("100.100.100.200", "metadata"),
    ("100.64.0.1", "CGNAT"),
    ("100.127.255.254", "CGNAT"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "private"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", ""),
    ("192.0.0.8", "special-purpose"),
    ("192.0.0.170", "private"),
    ("192.88.99.1", "special-purpose"),
    ("192.0.2.1", "private"),  # documentation ranges are not global
    ("198.18.0.1", "private"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "link-local"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("fd00:ec2::254", "metadata"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "private"),
    ("100::1", "reserved"),
    ("3fff::1", "special-purpose"),
    ("5f00::1", "reserved"),
    ("::ffff:127.0.0.1", "IPv4-mapped"),
    ("::ffff:169.254.169.254", "IPv4-mapped"),
    ("::ffff:10.0.0.1", "IPv4-mapped"),
    ("::127.0.0.1", "IPv4-compatible"),
    ("::10.0.0.1", "IPv4-compatible"),
    ("64:ff9b::7f00:1", "NAT64"),
    ("64:ff9b::a9fe:a9fe", "NAT64"),
    ("64:ff9b:1::1", "NAT64"),
    ("2002:7f00:1::1", "6to4"),
    ("2002:a9fe:a9fe::1", "6to4"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo"),  # client 127.0.0.1 (obfuscated)
]


@pytest.mark.parametrize(("addr", "word"), REFUSED)
def test_address_problem_refuses(addr: str, word: str) -> None:
    problem = address_problem(ipaddress.ip_address(addr))
    assert problem is not None
    assert word.lower() in problem.lower()


@pytest.mark.parametrize("addr", [PUBLIC, "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::1"])
def test_address_problem_accepts_public(addr: str) -> None:
    assert address_problem(ipaddress.ip_address(addr)) is None


def test_embedded_forms_refused_even_when_the_embedded_address_is_public() -> None:
    for addr in ("::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "::8.8.8.8"):
        problem = address_problem(ipaddress.ip_address(addr))
        assert problem is not None and "embeds 8.8.8.8" in problem


@pytest.mark.parametrize(("addr", "word"), REFUSED)
def test_resolved_answers_refused(addr: str, word: str) -> None:
    verdict = guard("public.example.test").check_addresses("public.example.test", [addr])
    assert not verdict
    assert "public.example.test" in verdict.reason and word.lower() in verdict.reason.lower()


def test_one_bad_answer_refuses_the_name() -> None:
    g = guard("public.example.test")
    assert g.check_addresses("public.example.test", [PUBLIC])
    assert not g.check_addresses("public.example.test", [PUBLIC, "127.0.0.1"])
    assert not g.check_addresses("public.example.test", ["10.1.1.1", PUBLIC])
    assert not g.check_addresses("public.example.test", [])
    assert not g.check_addresses("public.example.test", ["not-an-ip"])


def test_allow_private_waives_private_but_not_metadata_or_embeddings() -> None:
    g = guard("svc.example.test", allow_private=True)
    for addr in ("127.0.0.1", "10.0.0.1", "192.168.1.1", "::1", "fe80::1", "100.64.0.1"):
        assert g.check_addresses("svc.example.test", [addr]), addr
    for addr in [*sorted(str(a) for a in METADATA_ADDRESSES), "::ffff:127.0.0.1", "2002:7f00:1::1"]:
        verdict = g.check_addresses("svc.example.test", [addr])
        assert not verdict, addr


# -- host forms ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "0x7f.1",
        "127.0.1",
        "017700000001",
        "1.2.3.4.5",
        "a.b.0x10",
        "0x7F000001",
        "00127.0.0.1",
        "127.000.000.001",
    ],
)
@pytest.mark.parametrize("allow_private", [False, True])
def test_numeric_aliases_refused_always(host: str, allow_private: bool) -> None:
    assert is_numeric_alias(normalize_host(host))
    g = guard(host.lower(), "*.0.0.1", allow_private=allow_private)
    verdict = g.check_target(host, 80)
    assert not verdict and "numeric host form" in verdict.reason


@pytest.mark.parametrize("host", ["127.0.0.1", "example.test", "a1.example.test", "1a.example.test", "0x.test"])
def test_not_numeric_aliases(host: str) -> None:
    assert not is_numeric_alias(host)


@pytest.mark.parametrize(
    "host",
    [
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[0:0:0:0:0:ffff:127.0.0.1]",
        "[fd00:ec2::254]",
        "[::]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::1]",
        "[fe80::1%25eth0]",
        "::1",
        "[::1",
    ],
)
def test_ipv6_literals_refused(host: str) -> None:
    verdict = guard("example.test", allow_private=True).check_target(host, 80)
    assert not verdict


@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.1", "169.254.169.254", "0.0.0.0", "100.100.100.200"])
def test_ipv4_literals_are_checked_as_addresses(host: str) -> None:
    verdict = guard(host).check_target(host, 80)  # even when listed verbatim
    assert not verdict
    assert "allow_hosts" not in verdict.reason


def test_ipv4_literal_needs_an_exact_allow_list_entry() -> None:
    assert guard(PUBLIC).check_target(PUBLIC, 443)
    assert not guard("*.216.34").check_target(PUBLIC, 443)
    assert not guard("example.test").check_target(PUBLIC, 443)
    assert guard("127.0.0.1", allow_private=True).check_target("127.0.0.1", 80)
    assert not guard("127.0.0.1", allow_private=True).check_target("169.254.169.254", 80)


def test_literal_address_helper() -> None:
    g = guard()
    assert g.literal_address("127.0.0.1") == ipaddress.ip_address("127.0.0.1")
    assert g.literal_address("::1") == ipaddress.ip_address("::1")
    assert g.literal_address("example.test") is None


def test_normalize_host() -> None:
    assert normalize_host("Example.TEST.") == "example.test"
    assert normalize_host("[::1]") == "::1"
    for bad in ["", ".", "a" * 300, "-a.test", "a-.test", "a b.test", "[zz]", "[fe80::1%eth0]"]:
        with pytest.raises(ValueError):
            normalize_host(bad)


def test_guard_rejects_non_policy() -> None:
    with pytest.raises(TypeError):
        EgressPolicyGuard({"allow_hosts": ["x"]})  # type: ignore[arg-type]
