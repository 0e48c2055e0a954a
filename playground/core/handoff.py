"""Handing a backend's worker-thread results to the event loop, under asyncio cancellation.

Both backends run guest work on threads of their own (a blocking Docker
stream, a wasmtime Store that must stay on the thread that made it) and
await it from the event loop. What is the same for every such hand-off
lives here, once:

- ``Delivery``: a future on the loop that any thread may settle, once.
- ``await_worker``: await that future with the cancellation guarantees
  below; ``in_thread`` starts the work and does both.
- ``in_daemon_thread``: the exception, for read-only work that may be
  abandoned (a daemon probe that can hang): no guarantee but that it never
  holds up the caller or the interpreter's exit.

Cancellation guarantees (every backend entry point that uses these:
``run``, ``open_session``, ``GuestSession.eval``, ``serve``):

- Cancelling the awaiting task calls ``stop()`` once, which asks the worker
  to end (kill the container, the instance) and returns at once.
- ``CancelledError`` leaves only after the worker has settled its
  ``Delivery``: no worker outlives the task that awaited it, so nothing it
  holds (a Store, a container) is abandoned. Cancelling again while it
  winds down changes nothing: the wait goes on, then ``CancelledError``.
- What the worker raised after a cancel is retrieved and dropped (the
  caller asked to stop; "never retrieved" warnings would be noise).
- If the worker had already finished when the cancel came, ``stop`` is not
  called and ``CancelledError`` leaves at once; the result is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)


class Delivery(Generic[T]):
    """A result slot on an event loop that a worker thread fills; the first settlement wins.

    Made on the loop's thread. ``translate`` turns the worker's exceptions
    into what the awaiting task should see (e.g. a runtime's own error into
    the core's ``HostFailure``). Settling after the loop closed does nothing:
    nobody waits any more.
    """

    def __init__(self, translate: Callable[[BaseException], BaseException] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self.future: asyncio.Future[T] = self._loop.create_future()
        self._translate = translate
        #: What the task in ``wait`` awaits, settled with ``future`` (cancelling the task cancels only it).
        self._waiter: asyncio.Future[T] | None = None

    def settle(self, result: T | BaseException) -> None:
        """From any thread: the worker's value, or the exception it ended with.

        On the loop's own thread (a worker's answer read by the loop) it is
        settled at once: no wake of the loop through its self-pipe.
        """
        if asyncio._get_running_loop() is self._loop:
            self._settle(result)
            return
        try:
            self._loop.call_soon_threadsafe(self._settle, result)
        except RuntimeError:  # the loop is closed
            log.debug("event loop closed before a worker delivered")

    def _settle(self, result: T | BaseException) -> None:
        if self.future.done():
            return
        waiter = self._waiter
        if isinstance(result, BaseException):
            error = self._translate(result) if self._translate else result
            self.future.set_exception(error)
            if waiter is not None and not waiter.done():
                waiter.set_exception(error)
                self.future.exception()  # the task retrieves it from the waiter: no "never retrieved" for this one
        else:
            self.future.set_result(result)
            if waiter is not None and not waiter.done():
                waiter.set_result(result)

    async def wait(self, stop: Callable[[], object]) -> T:
        """``await_worker(self.future, stop)``, one turn of the event loop sooner.

        ``await_worker`` shields the future, and the shield's own future is
        settled by a callback one turn of the loop after the worker's
        (a wake-up of the loop with nothing else to do, per run); here the
        worker's settlement sets the awaited future itself.
        """
        if self.future.done():
            return self.future.result()
        if self._waiter is not None:
            raise RuntimeError("a Delivery is awaited by one task only")
        self._waiter = self._loop.create_future()
        try:
            return await self._waiter
        except asyncio.CancelledError:
            await _after_cancel(self.future, stop)
            raise


async def await_worker(done: asyncio.Future[T], stop: Callable[[], object]) -> T:
    """``done``'s result, with the module's cancellation guarantees (``stop`` asks the worker to end)."""
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        await _after_cancel(done, stop)
        raise


async def _after_cancel(done: asyncio.Future[T], stop: Callable[[], object]) -> None:
    """The awaiting task was cancelled: unless the worker had finished, ``stop`` it and wait until it has."""
    if done.done() and not done.cancelled() and done.exception() is None:
        return
    stop()
    await settled(done)


async def settled(done: asyncio.Future[T]) -> None:
    """Wait until ``done`` is settled, through any cancellation; never raise what it holds."""
    while not done.done():
        try:
            await asyncio.wait({done})
        except asyncio.CancelledError:
            continue
    if not done.cancelled():
        done.exception()


async def in_thread(
    work: Callable[[], T],
    *,
    start: Callable[[Callable[[], None]], object],
    stop: Callable[[], object],
    translate: Callable[[BaseException], BaseException] | None = None,
) -> T:
    """Run ``work`` on a worker that ``start`` launches (a thread, a pool's); await it as ``await_worker`` does."""
    delivery: Delivery[T] = Delivery(translate)

    def body() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting task, whatever it is
            delivery.settle(exc)
        else:
            delivery.settle(result)

    start(body)
    return await delivery.wait(stop)


async def in_daemon_thread(work: Callable[[], T], name: str = "probe") -> T:
    """Run ``work`` in a new daemon thread and await its result on the running loop.

    For read-only work that may be abandoned (a Docker daemon probe that can
    hang for seconds): unlike ``asyncio.to_thread``, whose pool threads the
    interpreter joins at exit, a daemon thread never holds up quitting.
    Never use it for work that must finish (writing files, stopping a guest).

    Cancellation: the awaiting task is cancelled at once; the thread runs
    on and its result is dropped.
    """
    delivery: Delivery[T] = Delivery()

    def body() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting task
            delivery.settle(exc)
        else:
            delivery.settle(result)

    threading.Thread(target=body, name=name, daemon=True).start()
    return await delivery.future
