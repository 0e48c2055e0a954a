"""Running blocking Docker work in a worker thread under asyncio cancellation.

``in_worker`` runs it through the core's hand-off (``core.handoff``, whose
cancellation guarantees every backend entry point shares): cancelling the
awaiting task sets ``RunControl.cancelled``; the worker notices within its
poll interval, stops (killing its container) and returns or raises; only
then does ``CancelledError`` leave.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TypeVar

from playground.core import handoff

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
    return await handoff.in_thread(lambda: fn(ctl), start=pool.submit, stop=ctl.cancelled.set)
