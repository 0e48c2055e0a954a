"""Session and SessionManager bookkeeping against a scripted fake interpreter."""

import asyncio

import pytest

from playground.core import (
    AttemptKind,
    InvalidSpec,
    Limits,
    ManagerClosed,
    Pack,
    Sandbox,
    SessionClosed,
    SessionConfig,
    SessionKilled,
    SessionManager,
    SessionNotFound,
    Stopped,
    TimeLimitExceeded,
    TooManySessions,
    Unsupported,
    WasmSpec,
)
from tests.fake_backend import FakeBackend, FakeSessionBackend

PACK = Pack(name="fakelang", aliases=("fl",), wasm=WasmSpec(module=None))


@pytest.fixture
def backend() -> FakeSessionBackend:
    return FakeSessionBackend("wasm")


@pytest.fixture
def sandbox(backend: FakeSessionBackend) -> Sandbox:
    return Sandbox(backends=[backend], packs=[PACK])


async def test_state_persists_across_evals(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl")
    await session.eval("set x 42")
    result = await session.eval("get x")
    assert result.stdout == b"42\n" and not result.restarted and result.backend == "wasm"
    assert session.lang == "fakelang" and session.evals == 2


async def test_files_persist_in_the_session_vfs(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl")
    await session.eval("file a.txt hello")
    assert session.vfs is not None and session.vfs.read_file("/work/a.txt") == b"hello"


async def test_ids_are_random_and_unguessable(sandbox: Sandbox) -> None:
    ids = {(await sandbox.new_session("fl")).id for _ in range(20)}
    assert len(ids) == 20
    assert all(len(i) >= 22 for i in ids)
    assert (await sandbox.new_session("fl", SessionConfig(id="mine"))).id == "mine"


@pytest.mark.parametrize(
    "kwargs",
    [{"id": "../x"}, {"id": "a" * 200}, {"idle_timeout": 0}, {"max_lifetime": -1}, {"max_evals": 0},
     {"env": {"A=B": "x"}}],
)
def test_bad_session_config(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidSpec):
        SessionConfig(**kwargs)  # type: ignore[arg-type]


async def test_timeout_kills_the_session(sandbox: Sandbox, backend: FakeSessionBackend) -> None:
    session = await sandbox.new_session("fl", SessionConfig(limits=Limits(wall_time=0.05)))
    await session.eval("set x 1")
    with pytest.raises(TimeLimitExceeded) as info:
        await session.eval("sleep 5")
    assert info.value.result is not None
    assert not session.alive
    assert backend.guests[0].closed >= 1
    with pytest.raises(SessionKilled):
        await session.eval("get x")


async def test_auto_restart_runs_the_next_eval_fresh(sandbox: Sandbox, backend: FakeSessionBackend) -> None:
    session = await sandbox.new_session("fl", SessionConfig(limits=Limits(wall_time=0.05), auto_restart=True))
    await session.eval("set x 1")
    with pytest.raises(TimeLimitExceeded):
        await session.eval("sleep 5")
    assert session.alive
    result = await session.eval("get x")
    assert result.restarted and result.stdout == b"<unset>\n"
    assert not (await session.eval("get x")).restarted
    assert len(backend.guests) == 2


async def test_guest_that_dies_on_its_own(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl")
    assert (await session.eval("die")).exit_code == 1
    with pytest.raises(SessionKilled):
        await session.eval("get x")


async def test_reset_clears_state(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl")
    await session.eval("set x 1\nfile f 1")
    await session.reset()
    assert (await session.eval("get x")).stdout == b"<unset>\n"
    assert session.vfs is not None and session.vfs.listdir("/work") == []


async def test_max_evals(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl", SessionConfig(max_evals=2))
    await session.eval("set a 1")
    await session.eval("set a 2")
    with pytest.raises(SessionKilled, match="2 evals"):
        await session.eval("get a")


async def test_close_twice_and_use_after_close(sandbox: Sandbox, backend: FakeSessionBackend) -> None:
    session = await sandbox.new_session("fl")
    session.close()
    session.close()
    assert backend.guests[0].closed == 1
    assert not session.alive
    with pytest.raises(SessionClosed):
        await session.eval("get x")
    with pytest.raises(SessionClosed):
        await session.reset()


async def test_evals_on_one_session_are_serialized(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl")
    order: list[str] = []

    async def run(tag: str, delay: float) -> None:
        await session.eval(f"sleep {delay}\nset last {tag}")
        order.append(tag)

    await asyncio.gather(run("a", 0.05), run("b", 0.0), run("c", 0.0))
    assert order == ["a", "b", "c"]


async def test_cancel_mid_eval_kills_the_interpreter(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl", SessionConfig(auto_restart=True))
    await session.eval("set x 1")
    task = asyncio.ensure_future(session.eval("sleep 10"))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = await session.eval("get x")
    assert result.restarted and result.stdout == b"<unset>\n"


async def test_backend_without_sessions_is_unsupported() -> None:
    sb = Sandbox(backends=[FakeBackend("wasm")], packs=[PACK])
    with pytest.raises(Unsupported, match="REPL sessions"):
        await sb.new_session("fl")


# -- manager -------------------------------------------------------------------

async def test_manager_caps_and_lookup(sandbox: Sandbox) -> None:
    async with SessionManager(sandbox, max_sessions=3) as manager:
        sessions = [await manager.create("fl") for _ in range(3)]
        with pytest.raises(TooManySessions):
            await manager.create("fl")
        assert manager.get(sessions[0].id) is sessions[0]
        manager.close(sessions[0].id)
        with pytest.raises(SessionNotFound):
            manager.get(sessions[0].id)
        with pytest.raises(SessionNotFound):
            manager.close("nope")
        await manager.create("fl")  # a slot was freed
        with pytest.raises(InvalidSpec, match="in use"):
            await manager.create("fl", SessionConfig(id=sessions[1].id))


async def test_manager_reaps_idle_sessions(sandbox: Sandbox, backend: FakeSessionBackend) -> None:
    async with SessionManager(sandbox, idle_timeout=0.05, reap_interval=0.02) as manager:
        idle = await manager.create("fl")
        busy = await manager.create("fl", SessionConfig(idle_timeout=60))
        await asyncio.sleep(0.2)
        assert manager.ids() == [busy.id]
        assert idle.state.value == "closed"
        with pytest.raises(SessionNotFound):
            manager.get(idle.id)


async def test_manager_reaps_expired_and_killed(sandbox: Sandbox) -> None:
    manager = SessionManager(sandbox, max_lifetime=0.05, reap_interval=60)
    old = await manager.create("fl")
    await asyncio.sleep(0.1)
    assert manager.reap() == [old.id]
    dead = await manager.create("fl", SessionConfig(max_lifetime=60))
    await dead.eval("die")
    assert manager.reap() == [dead.id]
    await manager.shutdown()


async def test_shutdown_closes_everything_and_refuses_new_work(sandbox: Sandbox, backend: FakeSessionBackend) -> None:
    manager = SessionManager(sandbox)
    sessions = [await manager.create("fl") for _ in range(5)]
    await manager.shutdown()
    await manager.shutdown()
    assert all(s.state.value == "closed" for s in sessions)
    assert all(g.closed == 1 for g in backend.guests)
    with pytest.raises(ManagerClosed):
        await manager.create("fl")
    with pytest.raises(ManagerClosed):
        manager.get(sessions[0].id)


async def test_fifty_concurrent_sessions(sandbox: Sandbox) -> None:
    async with SessionManager(sandbox, max_sessions=50) as manager:
        sessions = await asyncio.gather(*(manager.create("fl") for _ in range(50)))
        await asyncio.gather(*(s.eval(f"set v {i}") for i, s in enumerate(sessions)))
        results = await asyncio.gather(*(s.eval("get v") for s in sessions))
        assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(50)]
        with pytest.raises(TooManySessions):
            await manager.create("fl")


async def test_manager_default_limits_apply(sandbox: Sandbox, backend: FakeSessionBackend) -> None:
    async with SessionManager(sandbox, default_limits=Limits(wall_time=0.05)) as manager:
        session = await manager.create("fl")
        with pytest.raises(TimeLimitExceeded):
            await session.eval("sleep 1")
        assert backend.guests[0].request.limits.wall_time == 0.05


def test_session_and_serve_status_say_why_not() -> None:
    from tests.fake_backend import FakeBackend as Plain

    sb = Sandbox(backends=[Plain("wasm")], packs=[PACK])
    assert sb.status("fl").backend == "wasm" and sb.status("fl").why_not == ""
    status = sb.session_status("fl")
    assert status.backend is None
    assert status.why_not == "wasm: no REPL sessions; docker: backend not registered"
    assert sb.serve_status("fl").why_not.startswith("wasm: cannot serve")
    assert Sandbox(backends=[FakeSessionBackend("wasm")], packs=[PACK]).session_status("fl").backend == "wasm"


async def test_interrupt_reaches_a_guest_that_can_and_is_false_otherwise(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl")
    assert session.interrupt() is False  # the fake interpreter has no interrupt
    calls: list[int] = []
    guest = session._guest
    assert guest is not None
    guest.interrupt = lambda: calls.append(1) or True  # type: ignore[attr-defined]
    assert session.interrupt() is True and calls == [1]
    session.close()
    assert session.interrupt() is False


@pytest.fixture
def interruptible() -> Sandbox:
    return Sandbox(backends=[FakeSessionBackend("wasm", interruptible=True)], packs=[PACK])


async def test_stop_in_place_keeps_the_state_and_marks_the_result(interruptible: Sandbox) -> None:
    session = await interruptible.new_session("fl", SessionConfig(auto_restart=True))
    await session.eval("set x 1")
    evaluation = asyncio.ensure_future(session.eval("sleep 30"))
    await asyncio.sleep(0.02)
    started = asyncio.get_running_loop().time()
    assert await session.stop(evaluation) is Stopped.IN_PLACE
    assert asyncio.get_running_loop().time() - started < 1.0
    result = evaluation.result()
    assert result.interrupted and result.exit_code == 130 and not result.restarted
    after = await session.eval("get x")
    assert after.stdout == b"1\n" and not after.interrupted and not after.restarted


async def test_stop_cancels_after_the_grace_when_the_eval_ignores_it(interruptible: Sandbox) -> None:
    session = await interruptible.new_session("fl", SessionConfig(auto_restart=True, interrupt_grace=0.2))
    await session.eval("set x 1")
    evaluation = asyncio.ensure_future(session.eval("stubborn 30"))
    await asyncio.sleep(0.02)
    started = asyncio.get_running_loop().time()
    assert await session.stop(evaluation) is Stopped.AFTER_GRACE
    assert 0.2 <= asyncio.get_running_loop().time() - started < 2.0
    assert evaluation.cancelled()
    after = await session.eval("get x")
    assert after.restarted and after.stdout == b"<unset>\n"


async def test_stop_cancels_at_once_where_the_guest_cannot_be_interrupted(sandbox: Sandbox) -> None:
    session = await sandbox.new_session("fl", SessionConfig(auto_restart=True, interrupt_grace=30))
    evaluation = asyncio.ensure_future(session.eval("sleep 30"))
    await asyncio.sleep(0.02)
    started = asyncio.get_running_loop().time()
    assert await session.stop(evaluation) is Stopped.CANCELLED
    assert asyncio.get_running_loop().time() - started < 1.0 and evaluation.cancelled()


async def test_stop_after_the_eval_ended_changes_nothing(interruptible: Sandbox) -> None:
    session = await interruptible.new_session("fl")
    evaluation = asyncio.ensure_future(session.eval("set x 2"))
    await evaluation
    assert await session.stop(evaluation) is Stopped.IN_PLACE
    assert not evaluation.result().interrupted and (await session.eval("get x")).stdout == b"2\n"


async def test_an_interrupt_between_evals_does_not_mark_the_next_one(interruptible: Sandbox) -> None:
    session = await interruptible.new_session("fl")
    await session.eval("set x 3")
    assert session.interrupt() is True  # nothing runs: the backend takes it, no eval is marked
    result = await session.eval("get x")
    assert not result.interrupted and result.stdout == b"3\n"


async def test_a_cancelled_caller_still_leaves_the_eval_stopped(interruptible: Sandbox) -> None:
    """Cancelling the task that waits in ``stop`` does not abandon the guest: the eval is done first."""
    session = await interruptible.new_session("fl", SessionConfig(interrupt_grace=0.3))
    evaluation = asyncio.ensure_future(session.eval("stubborn 30"))
    await asyncio.sleep(0.02)
    waiter = asyncio.ensure_future(session.stop(evaluation))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert evaluation.done()


@pytest.mark.parametrize("grace", [-1, float("inf"), float("nan"), True, "2"])
def test_bad_interrupt_grace(grace: object) -> None:
    with pytest.raises(InvalidSpec):
        SessionConfig(interrupt_grace=grace)  # type: ignore[arg-type]


async def test_a_limit_held_in_an_eval_is_reported_as_in_a_run(sandbox: Sandbox) -> None:
    """Runs and evals build their Result in one place (core.capture): a held limit reaches both."""
    session = await sandbox.new_session("fl")
    result = await session.eval("held max_procs")
    assert result.limits_reached == ("max_procs",) and result.exit_code == 0
    held = [a for a in result.attempts if a.kind is AttemptKind.LIMIT_REACHED]
    assert len(held) == 1 and "process limit" in held[0].target and held[0].count == 1
    assert (await session.eval("get x")).limits_reached == ()  # the next eval starts clean
