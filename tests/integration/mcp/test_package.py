"""``playground.mcp``'s public face and ``ServerConfig``'s limit rules (pure, no subprocess)."""

from __future__ import annotations

import pytest

from playground.core import UNLIMITED, InvalidLimits
from playground.mcp import HttpOptions, ServerConfig, is_loopback


def test_defaults_are_the_core_defaults_clipped_to_the_ceilings() -> None:
    config = ServerConfig(max_timeout=2.0, max_memory=64 << 20, max_output=UNLIMITED)
    assert (config.defaults.wall_time, config.defaults.cpu_time) == (2.0, 2.0)
    assert config.defaults.memory == 64 << 20 and config.defaults.max_output == 1 << 20


@pytest.mark.parametrize(
    ("kwargs", "field", "value"),
    [
        ({"timeout": "5s"}, "wall_time", 5.0),
        ({"timeout": 1.5}, "cpu_time", 1.5),
        ({"timeout": "500ms"}, "wall_time", 0.5),
        ({"memory": "64M"}, "memory", 64 << 20),
        ({"memory": 1000}, "memory", 1000),
        ({"max_output": "16K"}, "max_output", 16 << 10),
    ],
)
def test_requests_within_the_ceilings(kwargs: dict[str, object], field: str, value: object) -> None:
    args: dict[str, object] = {"timeout": None, "memory": None, "max_output": None, **kwargs}
    limits = ServerConfig().request_limits(**args)  # type: ignore[arg-type]
    assert getattr(limits, field) == value


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout": "61s"}, {"timeout": "unlimited"}, {"timeout": 0}, {"timeout": True}, {"timeout": float("nan")},
     {"memory": "513M"}, {"memory": -1}, {"memory": "1.5"}, {"max_output": "5M"}, {"max_output": "lots"}],
)
def test_requests_above_the_ceilings_or_malformed_are_refused(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"timeout": None, "memory": None, "max_output": None, **kwargs}
    with pytest.raises(InvalidLimits):
        ServerConfig().request_limits(**args)  # type: ignore[arg-type]


def test_unlimited_ceiling_allows_unlimited_requests() -> None:
    limits = ServerConfig(max_timeout=UNLIMITED).request_limits(timeout="unlimited", memory=None, max_output=None)
    assert limits.wall_time is UNLIMITED


@pytest.mark.parametrize("bad", [{"max_timeout": 0}, {"max_memory": -5}, {"max_sessions": 0},
                                 {"max_timeout": float("inf")}])
def test_bad_ceilings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ServerConfig(**bad)  # type: ignore[arg-type]


def test_loopback_and_http_options() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.com")
    with pytest.raises(ValueError, match="non-loopback"):
        HttpOptions(token="x" * 32, host="0.0.0.0")
    assert HttpOptions(token="x" * 32, host="0.0.0.0", allow_remote=True).host == "0.0.0.0"
    with pytest.raises(ValueError, match="at least 16"):
        HttpOptions(token="short")
