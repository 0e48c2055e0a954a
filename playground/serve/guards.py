"""The reverse proxy's request guards: bearer token, Host header, per-client rate limit.

Each guard is a small object with no I/O, unit-testable with a fake clock.
"""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable, Iterable

#: ``WWW-Authenticate`` value sent with every 401.
CHALLENGE = 'Bearer realm="playground"'


class BearerCheck:
    """Constant-time check of ``Authorization: Bearer <token>`` (``hmac.compare_digest``)."""

    __slots__ = ("_token",)

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("empty token")
        self._token = token.encode()

    def check(self, authorization: str | None) -> str | None:
        """``None`` when ``authorization`` carries the token, else a short reason ("missing" / "invalid")."""
        if not authorization:
            return "missing"
        scheme, _, given = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return "missing"
        # compare_digest runs in time independent of where the strings differ
        if hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"), self._token):
            return None
        return "invalid"


def allowed_hosts(port: int, bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` header values the proxy answers to (lower case, with port).

    Loopback names are always accepted; the bind address too unless it is a
    wildcard; ``extra`` entries without a port get the proxy's.
    """
    names = {"127.0.0.1", "localhost", "[::1]"}
    if bind not in ("0.0.0.0", "::"):
        names.add(f"[{bind}]" if ":" in bind else bind)
    result = {f"{n}:{port}" for n in names}
    for entry in extra:
        has_port = entry.rsplit(":", 1)[-1].isdigit() and not entry.endswith("]")
        result.add(entry if has_port else f"{entry}:{port}")
    return frozenset(result)


def host_ok(host_header: str | None, allowed: frozenset[str]) -> bool:
    """Whether ``host_header`` names this proxy (``Host: localhost`` without a port counts only for port 80)."""
    if not host_header:
        return False
    host = host_header.strip().lower()
    name, sep, maybe_port = host.rpartition(":")
    if not sep or not maybe_port.isdigit() or host.endswith("]"):
        name, maybe_port = host, "80"
    name = name.removesuffix(".")
    return f"{name}:{int(maybe_port)}" in allowed


class RateLimiter:
    """A token bucket per client key: ``rate`` tokens per second, at most ``burst`` stored.

    Memory is bounded: at most ``max_clients`` buckets are kept; full
    (idle) buckets are dropped first, then the oldest.
    """

    __slots__ = ("_buckets", "_burst", "_clock", "_max_clients", "_rate")

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic, max_clients: int = 4096
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self._rate = float(rate)
        self._burst = float(burst)
        self._clock = clock
        self._max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float:
        """Spend one token for ``key``. Returns 0.0 when allowed, else seconds until a token is available."""
        now = self._clock()
        tokens, last = self._buckets.pop(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - last) * self._rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            self._trim(now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self._rate

    @staticmethod
    def retry_after(wait: float) -> str:
        """``Retry-After`` header value (whole seconds, at least 1)."""
        return str(max(1, math.ceil(wait)))

    def _trim(self, now: float) -> None:
        if len(self._buckets) <= self._max_clients:
            return
        full = [k for k, (t, last) in self._buckets.items() if t + (now - last) * self._rate >= self._burst]
        for key in full:
            del self._buckets[key]
        while len(self._buckets) > self._max_clients:
            del self._buckets[next(iter(self._buckets))]

    def __len__(self) -> int:
        return len(self._buckets)
