"""``BackgroundTasks``: the coroutines a controller started, with errors routed to the excepthook.

Like qasync's ``asyncSlot``, an exception that escapes a task goes to
``sys.excepthook`` (the app logs it and tells the user) instead of being
lost; ``cancel_all`` is how a controller shuts down cleanly.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject

T = TypeVar("T")
log = logging.getLogger(__name__)


class BackgroundTasks:
    """Tasks on the running (qasync) loop that drive ``owner`` (the window). GUI thread only.

    The tasks live no longer than their owner: when Qt deletes it (the
    window was closed and deleted before its controller shut down, as
    pytest-qt does after every test, or as a quitting app may) every task
    is cancelled in the same moment, so no late result (a Docker probe that
    came back, a run that ended) can reach a widget that is gone. One
    structure instead of an "is the window still there?" check after every
    ``await``.
    """

    def __init__(self, owner: object | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._orphaned = False
        if isinstance(owner, QObject):
            owner.destroyed.connect(self._owner_deleted)

    @property
    def orphaned(self) -> bool:
        """True once the owner was deleted: new tasks are cancelled before they start."""
        return self._orphaned

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        if self._orphaned:
            task.cancel()  # before its first step: its body never runs
        return task

    def _owner_deleted(self, *_: object) -> None:
        self._orphaned = True
        for task in list(self._tasks):
            task.cancel()

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        if self._orphaned:  # its clean-up touched the deleted window; there is no window left to tell
            log.warning("a task of a deleted window ended with an error", exc_info=exc)
            return
        sys.excepthook(type(exc), exc, exc.__traceback__)

    async def cancel_all(self) -> None:
        """Cancel every task and wait for all of them to finish."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def view_alive(view: object) -> bool:
    """False once Qt has deleted the window a late result was meant for (quitting, a test's teardown).

    Work finished off the GUI thread lands on the loop later; by then the
    window may be gone while its controller was never shut down.
    """
    return not isinstance(view, QObject) or shiboken6.isValid(view)
