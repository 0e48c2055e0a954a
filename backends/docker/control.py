"""Running blocking Docker work in a worker thread under asyncio cancellation.

``in_worker`` is the one place that states the cancellation contract every
backend entry point (``run``, ``open_session``, ``GuestSession.eval``, ``serve``)
shares: cancelling the awaiting task sets ``RunControl.cancelled``; the
worker notices within its poll interval, stops (killing its container) and
returns or raises; only then does ``CancelledError`` leave. Cancelling twice
is the same as once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


class Cancelled(Exception):
    """The worker stopped because the awaiting task was cancelled."""


@dataclass(slots=True)
class RunControl:
    """Shared between the event loop (which cancels) and the worker (which obeys)."""

    cancelled: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()


async def in_worker(pool: Executor, fn: Callable[[RunControl], T]) -> T:
    """Run ``fn(ctl)`` on ``pool``; on cancellation wait for it to stop, then re-raise."""
    ctl = RunControl()
    future = asyncio.get_running_loop().run_in_executor(pool, fn, ctl)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        ctl.cancelled.set()
        while not future.done():
            try:
                await asyncio.wait({future})
            except asyncio.CancelledError:
                continue
        if not future.cancelled():
            future.exception()
        raise
