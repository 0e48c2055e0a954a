"""One run in one container: start it, feed its stdin, pump its stdio, read the trailer, judge the limits.

Streaming: every frame of the engine's attach stream goes to the capture as
it arrives, stdout and stderr alike, so output reaches the screen as the
program writes it and in the order the daemon read it; only a tail of
stdout that could start the trailer's marker is held back, which output
practically never ends with (see ``trailer``). With a keyboard
(``Request.input``) the container's stdin stays open after the archive and
``keyboard.Feeder`` forwards what is typed.

Limits and how precisely they are enforced (``run_container``):

* ``wall_time``: measured from container start (unpacking, compiling and
  running all count); at the deadline the container is SIGKILLed and
  ``TimeLimitExceeded`` carries the output captured so far.
* ``memory``: cgroup limit, no swap; ``State.OOMKilled`` (Docker), or a failed
  run whose cgroup peak reached the limit (Podman does not set OOMKilled)
  -> ``MemoryLimitExceeded``.
* ``max_output``: the write that crosses the cap keeps exactly the bytes that
  fit; the container is killed at once and ``OutputLimitExceeded`` leaves.
* ``max_procs``: pids cgroup (a fork bomb stalls, then meets the wall time).
* ``fs_quota``/``max_files``: each tmpfs is capped (the guest sees ENOSPC);
  afterwards a full mount, a total above the quota (in tmpfs pages) or a
  ``/out`` that does not fit the VFS -> ``FSQuotaExceeded``.
* ``cpu_time``: RLIMIT_CPU per process; a process killed by SIGXCPU ->
  ``TimeLimitExceeded``.

Split from ``backend`` so the backend keeps routing, images, sessions and
serving, and this module keeps what happens between ``start`` and the
container's exit. Runs on a worker thread; never touches the event loop.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Final

from backends.docker.control import Cancelled, RunControl
from backends.docker.engine import Attachment, Engine, EngineError
from backends.docker.guestnet import NetnsError
from backends.docker.keyboard import Feeder
from backends.docker.report import read_report
from backends.docker.sinkhole import Sinkhole
from backends.docker.trailer import MarkerSplitter, parse_trailer
from backends.docker.usage import collect_out, kernel_oom_kill, limits_reached, quota_hit
from backends.docker.wrapper import REPORT_CAP, SETUP_FAILED
from playground.core import (
    BackendUnavailable,
    FSQuotaExceeded,
    MemoryLimitExceeded,
    Outcome,
    OutputLimitExceeded,
    Request,
    TimeLimitExceeded,
)

log = logging.getLogger(__name__)

#: How often the reader wakes up to check its deadline and cancellation.
POLL: Final = 0.1
#: How long to keep reading after a kill, for output already in flight.
DRAIN: Final = 2.0
#: Trailer bytes allowed beyond ``fs_quota`` for tar headers and usage reports.
TRAILER_SLACK: Final = 256 * 1024


@dataclass(slots=True)
class _Stream:
    """What reading the container's stdio produced."""

    marker_found: bool = False
    trailer: bytearray = field(default_factory=bytearray)
    timed_out: bool = False
    cancelled: bool = False
    trailer_over_cap: bool = False
    output_error: OutputLimitExceeded | None = None
    stderr_tail: bytearray = field(default_factory=bytearray)


def run_container(
    engine: Engine,
    container: str,
    *,
    image: str,
    archive: bytes,
    mark: str,
    request: Request,
    ctl: RunControl,
    record_network: bool = False,
    parked: Attachment | None = None,
    hole: Sinkhole | None = None,
) -> Outcome:
    """Run the started-to-be ``container`` to its end; see the module docstring.

    ``record_network``: a run without a network whose attempts to use one the
    host records (``sinkhole``), set up before the guest's inputs are sent,
    so before any guest code exists. ``parked``: the container is a prepared
    one (``pool``), already started and attached through ``parked``; then
    ``archive`` is its payload (``parked.payload``) and the wall time counts
    from when it is sent. ``hole``: its sinkhole, set up while it was
    prepared and recording into this run's log (closed here, as one opened
    here is).
    """
    limits = request.limits
    attachment = engine.attach(container) if parked is None else parked
    feeder: Feeder | None = None
    try:
        if parked is None:
            engine.start(container)
        if record_network and hole is None:
            try:
                hole = Sinkhole.open(engine, container, request.attempts)
            except NetnsError as exc:
                log.info("no host records of network attempts for this run: %s", exc)
        wall = limits.wall_time_cap
        deadline = None if wall is None else time.monotonic() + wall
        if request.input is None:
            attachment.send_and_close_stdin(archive)
        else:  # the program reads the container's stdin after the archive: Spec.stdin, then the keyboard
            attachment.send(archive)
            feeder = Feeder(attachment, request.stdin, request.input)
            feeder.start()
        stream = pump(engine, container, attachment=attachment, request=request, ctl=ctl, deadline=deadline, mark=mark)
    finally:
        attachment.close()
        if feeder is not None:
            feeder.stop()
        if hole is not None:
            hole.close()

    if stream.cancelled:
        raise Cancelled()
    if stream.output_error is not None:
        raise stream.output_error
    if stream.timed_out:
        raise TimeLimitExceeded(f"wall-time limit of {wall:g}s exceeded; the container was killed")
    if stream.trailer_over_cap:
        raise FSQuotaExceeded(f"/out is larger than the filesystem quota of {limits.fs_quota} bytes")

    # A prepared container (Docker only, see pool) has usually stopped by the end of its stream: one
    # inspect then says all that wait would (saves a round trip); else wait, then inspect, as always.
    state = engine.state(container) if parked is not None else None
    if state is not None and not state.running:
        exit_code = state.exit_code
    else:
        exit_code = engine.wait(container, timeout=10.0)
        state = engine.state(container)
    trailer = parse_trailer(bytes(stream.trailer), mark) if stream.marker_found else None
    if trailer is None and exit_code == SETUP_FAILED and not state.oom_killed:
        detail = bytes(stream.stderr_tail).decode("utf-8", "replace").strip()
        if any(sign in detail for sign in ("No space left on device", "Wrote only", "Disk quota exceeded")):
            raise FSQuotaExceeded(f"the program, its stdin and /in do not fit the filesystem quota: {detail}")
        raise BackendUnavailable(f"docker: image {image} cannot run the sandbox wrapper: {detail}")

    if trailer is not None:  # before any verdict, so a limit error's result carries them too
        ended_by_itself = exit_code < 128 and not state.oom_killed and not trailer.oom_kills
        read_report(trailer.report, request.attempts, ended_by_itself=ended_by_itself)
    quota_error: FSQuotaExceeded | None = None
    if trailer is not None:
        try:
            collect_out(trailer, request.vfs, limits)
        except FSQuotaExceeded as exc:
            quota_error = exc
    peak = trailer.peak_memory if trailer else 0
    if kernel_oom_kill(trailer, state.oom_killed):
        raise MemoryLimitExceeded(
            f"memory limit of {limits.memory} bytes exceeded; the kernel OOM-killed a guest process",
            outcome=Outcome(exit_code=exit_code, peak_memory=peak),
        )
    if quota_error is not None:
        raise quota_error
    if trailer is not None:
        why = quota_hit(trailer, limits)
        if why:
            raise FSQuotaExceeded(why)
    if exit_code == 128 + signal.SIGXCPU:
        raise TimeLimitExceeded(f"cpu-time limit of {limits.cpu_time}s exceeded (SIGXCPU)")
    return Outcome(exit_code=exit_code, peak_memory=peak, limits_reached=limits_reached(trailer))


def pump(
    engine: Engine,
    container: str,
    *,
    attachment: Attachment,
    request: Request,
    ctl: RunControl,
    deadline: float | None,
    mark: str,
) -> _Stream:
    """Move stdio into the capture until EOF, a limit, the deadline or cancellation."""
    result = _Stream()
    splitter = MarkerSplitter(mark)
    output = request.output
    quota = request.limits.fs_quota_cap
    cap = None if quota is None else quota + TRAILER_SLACK + REPORT_CAP
    killed_at: float | None = None
    killer: threading.Thread | None = None

    def kill() -> None:
        # In another thread: the daemon finishes a kill only after the attach
        # stream is drained, so the reader must keep reading meanwhile.
        nonlocal killed_at, killer
        if killed_at is None:
            killed_at = time.monotonic()
            killer = threading.Thread(target=kill_quietly, args=(engine, container), daemon=True)
            killer.start()

    def emit(stream_id: int, data: bytes) -> None:
        if not data or result.output_error is not None or result.cancelled:
            return
        try:
            if stream_id == 1:
                output.write_stdout(data)
            else:
                output.write_stderr(data)
        except OutputLimitExceeded as exc:
            if not result.timed_out:
                result.output_error = exc
            kill()

    try:
        for stream_id, data in attachment.frames(POLL):
            now = time.monotonic()
            if ctl.cancelled.is_set() and not result.cancelled:
                result.cancelled = True
                kill()
            if deadline is not None and now >= deadline and killed_at is None:
                result.timed_out = True
                kill()
            if killed_at is not None and (result.cancelled or now - killed_at > DRAIN):
                break
            if stream_id == 2:
                emit(2, data)
                result.stderr_tail = (result.stderr_tail + data)[-4096:]
            elif stream_id == 1:
                guest, trailer = splitter.feed(data)
                emit(1, guest)
                if trailer and not result.trailer_over_cap:
                    result.marker_found = True
                    result.trailer += trailer
                    if cap is not None and len(result.trailer) > cap:
                        result.trailer_over_cap = True
                        kill()
                elif splitter.found:
                    result.marker_found = True
        if not splitter.found:
            emit(1, splitter.flush())
    finally:
        attachment.close()
        if killer is not None:
            killer.join(timeout=30.0)
    return result


def kill_quietly(engine: Engine, container: str) -> None:
    try:
        engine.kill(container)
    except EngineError:
        log.warning("could not kill container %s", container[:12], exc_info=True)
