"""``core.handoff``: worker-thread results reach the loop once, and cancellation waits for the worker."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from playground.core.handoff import Delivery, await_worker, in_thread


def _start(body: object) -> threading.Thread:
    thread = threading.Thread(target=body, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


async def test_the_workers_value_and_its_translated_error_reach_the_task() -> None:
    assert await in_thread(lambda: 41 + 1, start=_start, stop=lambda: None) == 42

    def fail() -> int:
        raise KeyError("inside")

    with pytest.raises(LookupError, match="translated"):
        await in_thread(fail, start=_start, stop=lambda: None, translate=lambda exc: LookupError("translated"))


async def test_cancel_stops_the_worker_and_waits_for_it_through_a_second_cancel() -> None:
    stop_asked = threading.Event()
    finished: list[float] = []

    def work() -> str:
        stop_asked.wait(10)
        time.sleep(0.3)  # winding down (killing a container, closing a Store) takes a while
        finished.append(time.monotonic())
        raise RuntimeError("stopped")  # what a stopped worker raises is dropped, never "never retrieved"

    task = asyncio.ensure_future(in_thread(work, start=_start, stop=stop_asked.set))
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()  # again, while it winds down: changes nothing
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stop_asked.is_set() and finished, "CancelledError left before the worker had finished"
    assert time.monotonic() >= finished[0]


async def test_a_worker_that_already_finished_is_not_stopped() -> None:
    stops: list[int] = []
    delivery: Delivery[int] = Delivery()
    delivery.settle(7)
    await asyncio.sleep(0)  # settled on the loop
    task = asyncio.ensure_future(await_worker(delivery.future, lambda: stops.append(1)))
    await asyncio.sleep(0)
    assert task.done() and task.result() == 7
    waiting = asyncio.ensure_future(await_worker(delivery.future, lambda: stops.append(1)))
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert stops == []


async def test_the_first_settlement_wins() -> None:
    delivery: Delivery[str] = Delivery()
    threads = [_start(lambda v=v: delivery.settle(v)) for v in ("a", "b", "c")]
    for thread in threads:
        thread.join()
    value = await delivery.future
    await asyncio.sleep(0.01)
    assert value in ("a", "b", "c") and delivery.future.result() == value


def test_settling_after_the_loop_closed_is_ignored() -> None:
    loop = asyncio.new_event_loop()

    async def make() -> Delivery[int]:
        return Delivery()

    delivery = loop.run_until_complete(make())
    loop.close()
    delivery.settle(1)  # nobody waits any more: no error
    assert not delivery.future.done()


async def test_wait_takes_the_value_in_the_turn_it_is_settled() -> None:
    """``Delivery.wait`` is woken by the settlement itself: ``await_worker``'s shield took one more turn of the loop."""
    turns: dict[str, int] = {}
    for name in ("wait", "await_worker"):
        delivery: Delivery[int] = Delivery()
        waiting = delivery.wait(lambda: None) if name == "wait" else await_worker(delivery.future, lambda: None)
        task = asyncio.ensure_future(waiting)
        await asyncio.sleep(0)  # the task now waits
        delivery.settle(5)  # on the loop's thread: at once
        turns[name] = 0
        while not task.done():
            await asyncio.sleep(0)
            turns[name] += 1
        assert task.result() == 5
    assert turns == {"wait": 1, "await_worker": 2}


async def test_wait_keeps_the_cancellation_guarantees() -> None:
    """Cancelled, ``wait`` stops the worker once and returns only after it settled; its error is dropped."""
    stops: list[int] = []
    delivery: Delivery[int] = Delivery(translate=lambda exc: LookupError(str(exc)))
    task = asyncio.ensure_future(delivery.wait(lambda: stops.append(1)))
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()  # again, while the worker winds down
    await asyncio.sleep(0.05)
    assert not task.done() and stops == [1], "CancelledError left before the worker settled"
    threading.Thread(target=delivery.settle, args=(KeyError("stopped"),)).start()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert isinstance(delivery.future.exception(), LookupError)

    twice: Delivery[int] = Delivery()
    first = asyncio.ensure_future(twice.wait(lambda: None))
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="one task"):
        await twice.wait(lambda: None)
    twice.settle(1)
    assert await first == 1

    done: Delivery[int] = Delivery()
    done.settle(3)
    assert await done.wait(lambda: stops.append(2)) == 3 and stops == [1]
    failed: Delivery[int] = Delivery(translate=lambda exc: LookupError("translated"))
    waiting = asyncio.ensure_future(failed.wait(lambda: None))
    await asyncio.sleep(0)
    failed.settle(KeyError("inside"))
    with pytest.raises(LookupError, match="translated"):
        await waiting
