"""Readiness probes, retried until their timeout before a proxy starts listening."""

from __future__ import annotations

import asyncio
import contextlib
import time

import aiohttp

from playground.serve.config import HTTPReady, ReadinessProbe, TCPReady
from playground.serve.errors import ServiceNotReady
from playground.serve.upstream import HandlerUpstream, TCPUpstream, Upstream

_FIRST_DELAY = 0.05
_MAX_DELAY = 0.5
_MAX_ATTEMPT = 2.0


async def wait_ready(probe: ReadinessProbe, upstream: Upstream) -> None:
    """Retry ``probe`` against ``upstream`` until it passes or ``probe.timeout`` elapses.

    Cancellation: cancelling the caller stops probing at once (no half-open
    connection is left behind).

    Raises:
        ServiceNotReady: the timeout elapsed; the message names the target and the last failure.
    """
    deadline = time.monotonic() + probe.timeout
    delay = _FIRST_DELAY
    last = "no attempt finished"
    attempts = 0
    while True:
        attempts += 1
        remaining = deadline - time.monotonic()
        try:
            await asyncio.wait_for(_attempt(probe, upstream), max(min(remaining, _MAX_ATTEMPT), 0.01))
            return
        except TimeoutError:
            last = "attempt timed out"
        except _NotYet as exc:
            last = str(exc)
        except (OSError, aiohttp.ClientError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a handler's own failure is a "not ready" too
            last = f"{type(exc).__name__}: {exc}"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            kind = "TCP connect" if isinstance(probe, TCPReady) else f"HTTP GET {probe.path}"
            raise ServiceNotReady(
                f"service at {upstream.authority} not ready after {probe.timeout:g}s "
                f"({kind}, {attempts} attempts): {last}",
                target=upstream.authority,
                last_error=last,
            )
        await asyncio.sleep(min(delay, remaining))
        delay = min(delay * 2, _MAX_DELAY)


class _NotYet(Exception):
    pass


async def _attempt(probe: ReadinessProbe, upstream: Upstream) -> None:
    if isinstance(upstream, HandlerUpstream):
        if isinstance(probe, HTTPReady):
            status, _headers, _body = await upstream.handler("GET", probe.path, [("Host", "localhost")], b"")
            _expect_ok(status)
        return
    if isinstance(probe, TCPReady):
        _reader, writer = await asyncio.open_connection(upstream.host, upstream.port)
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return
    await _http_get(upstream, probe.path)


async def _http_get(upstream: TCPUpstream, path: str) -> None:
    connector = aiohttp.TCPConnector(force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar()) as session,
        session.get(f"http://{upstream.authority}{path}", allow_redirects=False) as response,
    ):
        _expect_ok(response.status)


def _expect_ok(status: int) -> None:
    if not 200 <= status < 400:
        raise _NotYet(f"HTTP status {status}")
