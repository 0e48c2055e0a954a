"""Starting a long-lived instance (a REPL session or a served program) on its own worker thread.

Both keep one instance alive behind a ``SessionChannel`` (framed stdin,
blocking ``fd_read``, the ``/.session`` control file); they differ only in
the channel class, where start-up output goes, argv and env. This module
holds what is the same: the start-up budget, the worker body, and how a
worker's errors look to the event loop (``translate``, for the core's
``handoff.Delivery`` that carries results over).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import wasmtime

from backends.wasm import devices, mounts, runner
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.channel import EvalEnd, SessionChannel
from backends.wasm.engine import WasmEngine
from backends.wasm.modcache import ModuleCache
from backends.wasm.state import RunControl
from playground.core.limits import ResolvedLimits
from playground.core.output import OutputCapture
from playground.core.pack import Pack
from playground.core.vfs import VFS

log = logging.getLogger(__name__)

#: Start-up (compiling a runtime, booting CPython, evaluating a program) gets at least this much time.
STARTUP_TIME: Final = 30.0
#: How long stopping an instance waits for its worker thread.
JOIN_TIMEOUT: Final = 5.0


WorkerStarter = Callable[[Callable[[], None], str], threading.Thread]
#: Where an instance may start from instead of a cold start: called on the worker thread (it may capture a
#: snapshot first); None from it means cold.
ImageSource = Callable[[], "tuple[wasmtime.Module, runner.ImageStart] | None"]


def startup_budget(value: float | None) -> float | None:
    """The start-up limit for a per-eval (or per-request) ``value``: never below ``STARTUP_TIME``."""
    return None if value is None else max(value, STARTUP_TIME)


def startup_control(limits: ResolvedLimits) -> RunControl:
    """The run control a live instance starts with; each eval re-arms it with its own limits."""
    return RunControl(
        wall_limit=startup_budget(limits.wall_time_cap), cpu_limit=startup_budget(limits.cpu_time_cap)
    )


def start_instance(
    *,
    engine: WasmEngine,
    modules: ModuleCache,
    artifacts: ArtifactStore,
    pack: Pack,
    channel: SessionChannel,
    control: RunControl,
    argv: Sequence[str],
    env: Mapping[str, str],
    vfs: VFS,
    output: OutputCapture,
    memory_limit: int | None,
    start_worker: WorkerStarter,
    name: str,
    on_end: Callable[[EvalEnd], None] | None = None,
    image: ImageSource | None = None,
    cold: ImageSource | None = None,
) -> threading.Thread:
    """Run the pack's runtime on a new worker thread until the instance ends.

    ``image``, when given and when it returns a start, starts the instance
    from a snapshot (``runner.ImageStart``: its own run source replaces
    ``argv``) instead of running the runtime's ``_start``. Otherwise
    ``cold``, when given and when it returns a start, runs ``_start`` from
    the snapshot's code module over the runtime's initial memory
    (``Snapshots.cold_start``: no second compile of the whole runtime).

    The channel is told the end (``channel.end``) whatever it was, then
    ``on_end`` if given. Start-up failures (missing or corrupt runtime)
    end the instance the same way, so whoever waits on the channel hears.
    """
    spec = pack.wasm
    assert spec is not None and spec.module is not None
    artifact = spec.module

    def work() -> None:
        result: EvalEnd
        try:
            path = artifacts.verified_path(artifact, pack.name)
            start = image() if image is not None else None
            if start is None and cold is not None:
                start = cold()
            if start is not None:
                module, image_start = start
            else:
                module = modules.runtime(artifact.sha256, path, label=artifact.name, progress=None)
                image_start = None
            preopens = mounts.place(vfs, spec.mounts, artifacts, pack.name)
            devices.place(vfs)
            plan = runner.Launch(
                module=module, argv=argv, env=env, stdin=b"", vfs=vfs, output=output,
                memory_limit=memory_limit, wall_limit=control.wall_limit, cpu_limit=control.cpu_limit,
                session=channel, entry=spec.entry, preopens=preopens, image=image_start,
            )  # fmt: skip
            result = runner.run(engine, plan, control)
        except BaseException as exc:  # handed to whoever waits, whatever it is
            result = exc
        channel.end(result)
        if on_end is not None:
            on_end(result)

    return start_worker(work, name)


def stop_instance(channel: SessionChannel, thread: threading.Thread, what: str, *, join: bool = True) -> None:
    """Kill the instance and wait for its worker thread (unless called on it). Never raises.

    A waiting driver wakes at once, running wasm stops at the next epoch
    tick, so this takes milliseconds; ``what`` names it in log messages.
    ``join`` False does not wait: for a start-up cancelled while the worker
    still compiles the runtime (seconds on a cold cache, and not
    interruptible), where a join would block the caller's event loop. The
    kill alone keeps the guarantee that no guest code runs after it:
    ``runner.run`` refuses to start a cancelled run, and a guest already
    started stops at its next epoch tick. The worker is a daemon thread and
    ends by itself once the compile returns.
    """
    try:
        channel.kill()
        if join and thread is not threading.current_thread():
            thread.join(JOIN_TIMEOUT)
            if thread.is_alive():
                log.warning("wasm %s worker %s did not stop within %g s", what, thread.name, JOIN_TIMEOUT)
    except Exception:
        log.exception("stopping a wasm %s failed", what)


def translate(exc: BaseException) -> BaseException:
    """wasmtime's own errors become ``HostFailure``; everything else is raised as it is."""
    if isinstance(exc, (wasmtime.WasmtimeError, wasmtime.Trap)):
        first = str(exc).splitlines()[0] if str(exc) else repr(exc)
        return runner.HostFailure(f"wasmtime failed: {first}")
    return exc
