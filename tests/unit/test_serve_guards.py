"""The reverse proxy's guards and config, without sockets."""

from __future__ import annotations

import pytest

from playground.serve import (
    AuthMode,
    BearerCheck,
    HTTPReady,
    InvalidServeOptions,
    ProxyConfig,
    RateLimiter,
    TCPReady,
    TCPUpstream,
    generate_token,
)
from playground.serve.guards import allowed_hosts, host_ok


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_bucket() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rate=2.0, burst=3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("a")
    assert wait == pytest.approx(0.5)
    assert RateLimiter.retry_after(wait) == "1"
    assert limiter.take("b") == 0.0  # per client
    clock.now += 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("a") > 0
    clock.now += 10
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]  # refills to burst, no more
    assert limiter.take("a") > 0


def test_rate_limiter_memory_is_bounded() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rate=1.0, burst=1, clock=clock, max_clients=10)
    for i in range(100):
        limiter.take(f"10.0.0.{i}")
    assert len(limiter) <= 10
    with pytest.raises(ValueError):
        RateLimiter(rate=0, burst=1)


def test_bearer_check() -> None:
    check = BearerCheck("abc.DEF-123")
    assert check.check("Bearer abc.DEF-123") is None
    assert check.check("bearer   abc.DEF-123 ") is None
    assert check.check(None) == "missing"
    assert check.check("") == "missing"
    assert check.check("Basic abc.DEF-123") == "missing"
    assert check.check("Bearer abc.DEF-12") == "invalid"
    assert check.check("Bearer abc.DEF-1234") == "invalid"
    assert check.check("Bearer \udcff") == "invalid"


def test_bearer_check_uses_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    check = BearerCheck("tok")
    assert check.check("Bearer nope") == "invalid"
    assert check.check("Bearer tok") is None
    assert len(calls) == 2


def test_generated_tokens_are_256_bit_and_unique() -> None:
    tokens = {generate_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(len(t) == 43 for t in tokens)  # 32 bytes, URL-safe base64 without padding


def test_host_check() -> None:
    allowed = allowed_hosts(8123, "127.0.0.1", ["dev.example.test", "tunnel.example.test:443"])
    for ok in [
        "127.0.0.1:8123",
        "localhost:8123",
        "LOCALHOST:8123",
        "[::1]:8123",
        "localhost.:8123",
        "dev.example.test:8123",
        "tunnel.example.test:443",
    ]:
        assert host_ok(ok, allowed), ok
    for bad in [
        None,
        "",
        "127.0.0.1",
        "localhost",
        "127.0.0.1:8124",
        "evil.test:8123",
        "127.0.0.2:8123",
        "localhost:8123@evil",
        "dev.example.test:443",
        "0.0.0.0:8123",
        "[::1]",
    ]:
        assert not host_ok(bad, allowed), bad
    wildcard = allowed_hosts(80, "0.0.0.0")
    assert host_ok("localhost", wildcard) and not host_ok("0.0.0.0:80", wildcard)
    assert host_ok("192.168.1.5:9000", allowed_hosts(9000, "192.168.1.5"))


def test_config_defaults() -> None:
    cfg = ProxyConfig()
    assert cfg.bind == "127.0.0.1" and cfg.auth is AuthMode.BEARER and cfg.token == ""
    assert cfg.ttl is not None and cfg.ready == TCPReady(timeout=15.0)
    assert "secret-value" not in repr(ProxyConfig(token="secret-value"))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bind": "localhost"},
        {"bind": "1.2.3"},
        {"port": 70000},
        {"port": -1},
        {"auth": "none"},
        {"auth": AuthMode.NONE, "token": "x"},
        {"token": "has space"},
        {"token": "a\r\nb"},
        {"extra_hosts": ("a/b",)},
        {"rate": 0},
        {"burst": 0},
        {"max_connections": 0},
        {"max_request_body": -1},
        {"max_header_bytes": 10},
        {"max_response_body": 0},
        {"idle_timeout": 0},
        {"ttl": 0},
        {"ttl": -5.0},
        {"ready": TCPReady(timeout=0)},
        {"ready": "tcp"},
        {"log_lines": 0},
    ],
)
def test_config_rejects(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidServeOptions):
        ProxyConfig(**kwargs)  # type: ignore[arg-type]
    assert issubclass(InvalidServeOptions, ValueError)


def test_probe_and_upstream_validation() -> None:
    with pytest.raises(InvalidServeOptions):
        HTTPReady(path="health")
    with pytest.raises(InvalidServeOptions):
        TCPUpstream(host="", port=80)
    with pytest.raises(InvalidServeOptions):
        TCPUpstream(host="127.0.0.1", port=0)
    assert TCPUpstream(host="::1", port=80).authority == "[::1]:80"
    assert ProxyConfig(ttl=None).ttl is None
    assert ProxyConfig(bind="0.0.0.0").bind == "0.0.0.0"
