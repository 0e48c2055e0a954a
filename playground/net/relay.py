"""Moves the bytes of one allowed egress exchange (a CONNECT tunnel or a forwarded request).

Both directions are pumped at once under the proxy's ``max_bytes`` cap
(counted on what the upstream sends) and its idle timeout; what happened is
written into an :class:`Exchange`, which the proxy logs. The checks that
decide *whether* to connect live in :mod:`playground.net.egress`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from playground.net.http1 import CHUNK, Refused, Request, Upstream, close_writer

#: Accounts ``n`` received bytes and returns how many may pass (``< n`` means the cap was hit).
Allow = Callable[[int], int]
Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class _CapExceeded(Exception):
    """``max_bytes`` ran out in the middle of a transfer."""


class _IdleTimeout(Exception):
    """Neither side sent anything for ``idle_timeout`` seconds."""


@dataclass(slots=True)
class Exchange:
    """What one request did so far; survives cancellation so ``stop()`` still logs it."""

    status: int = 0
    received: int = 0
    error: str = ""

    def count_into(self, allow: Allow) -> Callable[[bytes], bytes]:
        def count(data: bytes) -> bytes:
            n = allow(len(data))
            self.received += n
            return data[:n]

        return count


class _Activity:
    """Last time any byte moved in either direction of one exchange."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        self.last = time.monotonic()


async def _pump(
    src: asyncio.StreamReader,
    dst: asyncio.StreamWriter,
    activity: _Activity,
    on_data: Callable[[bytes], bytes] | None,
    idle: float,
) -> int:
    """Copy ``src`` to ``dst`` until EOF; ``on_data`` may trim (raising after the write). Returns bytes copied.

    EOF is passed on (half-close) only towards the upstream (``on_data is None``): the client's
    connection is closed by the handler after the exchange is logged, so a client that saw EOF
    can rely on the log entry being there.
    """
    total = 0
    while True:
        try:
            data = await asyncio.wait_for(src.read(CHUNK), idle)
        except TimeoutError:
            if time.monotonic() - activity.last >= idle:
                raise _IdleTimeout from None
            continue
        if not data:
            if on_data is None and dst.can_write_eof():
                with contextlib.suppress(OSError, RuntimeError):
                    dst.write_eof()
            return total
        activity.touch()
        passed = on_data(data) if on_data is not None else data
        total += len(passed)
        dst.write(passed)
        await dst.drain()
        if len(passed) < len(data):
            raise _CapExceeded


async def tunnel(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    upstream: Streams,
    early: bytes,
    ex: Exchange,
    *,
    allow: Allow,
    idle: float,
    max_bytes: int,
) -> None:
    """Answer 200 to a CONNECT and pump raw bytes both ways; ``early`` (sent after the head) goes first."""
    up_reader, up_writer = upstream
    try:
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        if early:
            up_writer.write(early)
        activity = _Activity()
        ex.error = await _run_pair(
            _pump(reader, up_writer, activity, None, idle),
            _pump(up_reader, writer, activity, ex.count_into(allow), idle),
            max_bytes,
        )
    finally:
        await close_writer(up_writer)


async def forward(
    request: Request,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    upstream: Streams,
    ex: Exchange,
    *,
    head: bytes,
    wire: Upstream,
    allow: Allow,
    idle: float,
    max_bytes: int,
) -> None:
    """Send ``head`` and the re-framed body upstream; relay the response as it comes, noting its status."""
    upstream_reader, upstream_writer = upstream
    try:
        upstream_writer.write(head)
        activity = _Activity()
        count = ex.count_into(allow)

        def on_response(data: bytes) -> bytes:
            passed = count(data)
            wire.feed_response(passed)
            ex.status = wire.status
            return passed

        async def send_body() -> int:
            await wire.send_body(request, reader, upstream_writer, idle)
            await upstream_writer.drain()
            activity.touch()
            return 0

        ex.error = await _run_pair(
            send_body(),
            _pump(upstream_reader, writer, activity, on_response, idle),
            max_bytes,
        )
        if not ex.status:
            wire.response_ended()
            ex.status = wire.status
        if not ex.status and not ex.error:
            ex.error = "upstream closed without a response"
    finally:
        await close_writer(upstream_writer)


async def _run_pair(first: Awaitable[int], second: Awaitable[int], max_bytes: int) -> str:
    """Run the client->upstream pump ``first`` and the upstream->client pump ``second``.

    Returns an error text ("" when the exchange ended cleanly). ``first``
    ending leaves ``second`` running (the client half-closed); ``second``
    ending ends the exchange; an error in either cancels the other.
    """
    tasks = [asyncio.ensure_future(first), asyncio.ensure_future(second)]
    error = ""
    try:
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                exc = task.exception()
                if exc is None:
                    continue
                if isinstance(exc, _CapExceeded):
                    error = f"max_bytes ({max_bytes}) exceeded: transfer cut"
                elif isinstance(exc, _IdleTimeout):
                    error = "idle timeout"
                elif isinstance(exc, (ConnectionError, asyncio.IncompleteReadError, OSError)):
                    error = f"connection lost: {exc!r}"
                elif isinstance(exc, Refused):
                    error = exc.reason
                else:
                    raise exc
                for other in pending:
                    other.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                return error
            if tasks[1] not in pending and pending:
                # the upstream finished: nothing the client still sends can matter
                for other in pending:
                    other.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                return error
        return error
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["Allow", "Exchange", "Streams", "forward", "tunnel"]
