"""``BackgroundTasks``: the coroutines a controller started, with errors routed to the excepthook.

Like qasync's ``asyncSlot``, an exception that escapes a task goes to
``sys.excepthook`` (the app logs it and tells the user) instead of being
lost; ``cancel_all`` is how a controller shuts down cleanly.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any


class BackgroundTasks:
    """Tasks on the running (qasync) loop. GUI thread only."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            sys.excepthook(type(exc), exc, exc.__traceback__)

    async def cancel_all(self) -> None:
        """Cancel every task and wait for all of them to finish."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
