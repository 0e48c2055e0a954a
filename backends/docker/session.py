"""``DockerGuestSession``: one long-lived hardened container running a REPL driver.

The container (``profile.session_profile``) runs the pack's driver from
``resources/drivers`` (see ``drivers``); the driver runs an interpreter
process the guest's code lives in, so state persists across evals. The host
sends ``C <id> <len>`` commands on the container's stdin and reads frames
(``repl_protocol``) from its stdout.

The control channel and why printing cannot forge it: the interpreter's
stdout and stderr are pipes that only the driver reads; the driver wraps
every byte from them in a length-prefixed O/E frame, and only the driver
writes the container's stdout. Bytes a guest prints - even a perfect copy
of an R frame with the right nonce - arrive inside a data frame and are
delivered as output. The interpreter reports "eval N done" on its own fd 3,
which the guest's code does not inherit; the driver then drains the output
pipes and only then sends R, so an eval's output always precedes its result.
Control frames carry the session's 128-bit nonce (the driver reads it from
a file and deletes it before any guest code runs); a control frame with
another nonce, or any malformed frame, kills the session.

Why the nonce being guest-readable is not issue #12's trailer flaw: the
driver runs as the guest's uid, so a guest can read the nonce from the
driver's memory (``/proc/<pid>/mem``), reopen the driver's stdout through
``/proc/<pid>/fd/1`` or write to the driver's result FIFO, and so end its
own eval early with a status of its choosing. But an eval's status is by
construction reported by the interpreter the guest's code runs in (the code
could always make its interpreter report anything), and nothing the host
enforces or reports comes from a frame: wall time and the output cap are
measured here on the host (a forged early R only ends the wait sooner, and
a real R arriving later for an old eval kills the session as out of turn),
memory is the container's cgroup and OOM comes from the engine's
``OOMKilled``, and a session outcome carries no usage. A one-shot run's
trailer differed: it carried usage and ``/out`` that the host believed,
which is why the run wrapper now runs as another user (see ``wrapper``).
Printed bytes - even a perfect R frame with the right nonce - stay output
(``tests/integration/docker/test_forged_trailer.py``), every frame is parsed
as hostile input, and each session has its own container.

Ctrl-C (``interrupt``): the interpreter leads its own process group (its
pid comes in the READY frame); the host sends SIGINT to that group from
inside the container (``docker exec`` of the driver's ``interrupt`` argv,
off the caller's thread), and the driver's
interpreter stops the running input in place (see the drivers). The signal
is sent only while that eval still runs, and the next eval is not sent
before a signal in flight has been delivered, so an interrupt never
reaches a later eval.

Keyboard (bash and node): an eval with an ``input`` is sent as ``L``; its
code's stdin is a FIFO the driver fills from ``I`` commands (what is typed,
forwarded by ``keyboard.Feeder`` while the eval runs) and closes on ``D``
(Ctrl-D). After the eval's result the host stops forwarding and sends
``E``, which ends the driver's keyboard reader before the next command is
read, so typed bytes and commands never mix, and nothing typed for one
eval reaches the next. A wait for input is bounded by the eval's wall time
like the rest of the eval and costs no CPU time. In bash ``read`` and
every command read it; in node fd 0 is the FIFO (``fs.readFileSync(0)``
reads up to Ctrl-D, a child process inherits it) and ``process.stdin`` is
a fresh stream over it for each eval (``readline``, ``'data'`` events), so
an eval that reads it returns a promise that settles once it has what it
needs (the driver awaits an eval's promise; typing after the eval's end
goes nowhere). The command stream never reaches user code.

What an eval tried (``Result.attempts``, issue #15), as the host sees it,
when it can (what one-shot runs need: root, a local rootful daemon, ``ip``
and ``iptables-restore``): the session container has no network
(``network_mode=none``), and a ``sinkhole`` in its namespace, set up before
the driver is sent, records and refuses every connect and name lookup for
the session's life; a ``spawnwatch.SpawnWatch`` follows the interpreter
(found by its command line, ``drivers.interp_args``) and records each exec
of it or its descendants: the driver and the interpreter are not records,
what the code runs is. In bash that is every external command (``ls``,
``cat``, ``$(date)``: bash forks and execs them), never a builtin (``echo``,
``cd``, ``read``). Both record into an ``evallog.EvalLog`` that points at
the eval in flight's log; at the eval's end they handle what the kernel
sent before it, then it points nowhere, so no record reaches the next eval
and what a background job does between evals is dropped. The process limit:
the pids cgroup's ``max`` counter (``pids.events``, read from the host
through the driver's ``/proc/<pid>/root``) before and after the eval; when
it grew, the outcome says ``max_procs`` (``Result.limits_reached``), as for
a one-shot run. A background job of an earlier eval that meets the limit
during this one counts for this one. The node driver loads no in-guest
hook: node sessions have host records only.

Per-eval limits: ``wall_time`` (host deadline; the container is killed),
``max_output`` (the capture's cap; the container is killed). The session's
``memory``, ``max_procs`` and filesystem limits are the container's.
Cancellation kills the container before ``CancelledError`` leaves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import Final

from backends.docker import repl_protocol
from backends.docker.control import Cancelled, RunControl, in_worker
from backends.docker.drivers import Driver, driver_for, interp_args, session_archive, setup_script
from backends.docker.engine import Attachment, Engine, EngineError
from backends.docker.evallog import EvalLog
from backends.docker.guestnet import NetnsError
from backends.docker.keyboard import Feeder
from backends.docker.profile import EngineKind, session_profile
from backends.docker.repl_protocol import Control, FrameReader, Kind, ProtocolError, command, parse_control
from backends.docker.sinkhole import Sinkhole
from backends.docker.spawnwatch import Following, SpawnWatch
from playground.core import (
    AttemptLog,
    InputStream,
    MemoryLimitExceeded,
    Outcome,
    OutputCapture,
    OutputLimitExceeded,
    ResolvedLimits,
    SessionKilled,
    SessionRequest,
    TimeLimitExceeded,
    Unsupported,
)

log = logging.getLogger(__name__)

#: How often the reader wakes up to check its deadline and cancellation.
POLL: Final = 0.05
#: Bound on writing one command to the driver.
SEND_TIMEOUT: Final = 30.0
#: Bound on delivering Ctrl-C (a ``docker exec`` of ``kill``).
SIGNAL_TIMEOUT: Final = 10.0


class DockerGuestSession:
    """A live interpreter in its own container. One eval at a time (the core's ``Session`` ensures it).

    ``close()`` is idempotent, never raises and returns at once: the
    container is removed on a background thread that ``reaper`` starts
    (the backend joins those threads when it closes).
    """

    def __init__(
        self,
        *,
        engine: Engine,
        container: str,
        driver: Driver,
        attachment: Attachment,
        nonce: str,
        pool: Executor,
        reaper: Callable[[Callable[[], None]], None],
    ) -> None:
        self.container = container
        self._engine = engine
        self._driver = driver
        self._attachment = attachment
        self._nonce = nonce
        self._pool = pool
        self._reaper = reaper
        self._frames: Iterator[tuple[int, bytes]] = attachment.frames(POLL)
        self._reader = FrameReader()
        self._next_id = 0
        self._alive = True
        self._closed = False
        self._destroyed = False
        self._lock = threading.Lock()
        self.stderr_tail = bytearray()
        #: The interpreter's pid (its process group), from the READY frame.
        self._interp_pid = 0
        #: The eval in flight (guarded by ``_lock``), and whether a Ctrl-C for it is being sent.
        self._running: int | None = None
        self._signalling = False
        #: Held while a Ctrl-C is delivered; the next command waits for it.
        self._signal_lock = threading.Lock()
        #: The host's recorders (see the module docstring); None where the host cannot record.
        self.eval_log = EvalLog()
        self._hole: Sinkhole | None = None
        self._following: Following | None = None
        #: ``pids.events`` of the container's cgroup, opened from the host (None: not readable here).
        self._pids_events: int | None = None

    @property
    def alive(self) -> bool:
        return self._alive and not self._closed

    # -- start --------------------------------------------------------------

    def wait_ready(self, deadline: float, ctl: RunControl) -> None:
        """Block until the driver's READY frame.

        Raises:
            SessionKilled: the driver died, spoke nonsense or never got ready.
        """
        while True:
            control = self._next_control(deadline, ctl, output=None)
            if control is None:
                raise SessionKilled(f"the REPL driver did not start in time{self._stderr_hint()}")
            if control.kind is Kind.READY:
                self._interp_pid = control.pid
                return
            raise SessionKilled("the REPL driver sent a result before it was ready")

    # -- eval ---------------------------------------------------------------

    async def eval(
        self, code: str, output: OutputCapture, limits: ResolvedLimits, *, input: InputStream | None = None,
        attempts: AttemptLog | None = None,
    ) -> Outcome:
        """Run ``code`` in the interpreter; see the module docstring for limits and cancellation.

        ``input``: what the code reads from its stdin, forwarded as it is
        typed (bash's ``read``, node's fd 0 and ``process.stdin``; see the
        module docstring).

        Raises:
            TimeLimitExceeded, OutputLimitExceeded, MemoryLimitExceeded: the
                container was killed; the session is dead.
            SessionKilled: the container died or broke the protocol.
        """
        if not self.alive:
            raise SessionKilled("the session's container is gone")
        return await in_worker(
            self._pool, lambda ctl: self._recorded_eval(code, output, limits, ctl, keyboard=input, attempts=attempts)
        )

    def interrupt(self) -> bool:
        """Send Ctrl-C to the running eval (any thread; returns at once); see the module docstring.

        True when this session can be interrupted in place (the eval then
        ends with status 130 or an "interrupted" error), harmless when
        nothing runs. False once the session is dead.
        """
        with self._lock:
            if not self.alive or self._interp_pid <= 1:
                return False
            eval_id = self._running
            if eval_id is None or self._signalling:
                return True
            self._signalling = True
        self._reaper(lambda: self._send_sigint(eval_id))
        return True

    def _send_sigint(self, eval_id: int) -> None:
        try:
            with self._signal_lock:
                with self._lock:
                    if self._running != eval_id or not self.alive:
                        return
                argv = self._driver.interrupt_argv(self._interp_pid)
                if self._engine.exec_quietly(self.container, argv, SIGNAL_TIMEOUT) != 0:
                    log.info("Ctrl-C for session container %s was not delivered", self.container[:12])
        except EngineError:
            log.info("could not send Ctrl-C to session container %s", self.container[:12], exc_info=True)
        finally:
            with self._lock:
                self._signalling = False

    def _recorded_eval(
        self, code: str, output: OutputCapture, limits: ResolvedLimits, ctl: RunControl, *,
        keyboard: InputStream | None, attempts: AttemptLog | None,
    ) -> Outcome:
        """``_eval`` with the host's recorders pointed at ``attempts`` (see the module docstring)."""
        before = self._forks_refused()
        self.eval_log.begin(attempts)
        try:
            outcome = self._eval(code, output, limits, ctl, keyboard)
        finally:
            self._flush_recorders()
            self.eval_log.end()
        after = self._forks_refused()
        if before is not None and after is not None and after > before:
            outcome = dataclasses.replace(outcome, limits_reached=("max_procs",))
        return outcome

    def _flush_recorders(self) -> None:
        """Record what the kernel sent before now (a closed recorder has already done so)."""
        hole, following = self._hole, self._following
        if hole is not None:
            hole.flush()
        if following is not None:
            following.flush()

    def _close_recorders(self) -> None:
        hole, self._hole = self._hole, None
        following, self._following = self._following, None
        events, self._pids_events = self._pids_events, None
        if hole is not None:
            hole.close()
        if following is not None:
            following.close()
        if events is not None:
            with contextlib.suppress(OSError):
                os.close(events)

    def _forks_refused(self) -> int | None:
        """The pids cgroup's ``max`` counter now (forks the limit refused), or None when the host cannot read it."""
        fd = self._pids_events
        if fd is None:
            return None
        try:
            text = os.pread(fd, 4096, 0).decode("ascii", "replace")
        except OSError:
            return None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return None

    def _eval(
        self, code: str, output: OutputCapture, limits: ResolvedLimits, ctl: RunControl, keyboard: InputStream | None
    ) -> Outcome:
        self._next_id += 1
        eval_id = self._next_id
        wall = limits.wall_time_cap
        typed = keyboard is not None and self._driver.keyboard
        try:
            with self._signal_lock:  # a Ctrl-C still in flight belongs to the previous eval
                with self._lock:
                    self._running = eval_id
                message = command(eval_id, code.encode("utf-8", "surrogatepass"), keyboard=typed)
                self._attachment.send(message, timeout=SEND_TIMEOUT)
        except EngineError as exc:
            self._destroy()
            raise SessionKilled(f"the session's container stopped listening: {exc}") from exc
        feeder = None
        if typed:
            assert keyboard is not None
            feeder = Feeder(self._attachment, b"", keyboard, frame=repl_protocol.typed, end=repl_protocol.TYPED_EOF)
            feeder.start()
        deadline = None if wall is None else time.monotonic() + float(wall)
        try:
            control = self._next_control(deadline, ctl, output=output)
        except Cancelled:
            self._destroy()
            raise
        finally:
            with self._lock:
                self._running = None
            if feeder is not None:
                self._end_keyboard(feeder)
        if control is None:
            self._destroy()
            raise TimeLimitExceeded(f"wall-time limit of {wall:g}s exceeded; the session's container was killed")
        if control.kind is Kind.READY or control.eval_id not in (eval_id, 0):
            self._destroy()
            raise SessionKilled("the REPL driver answered out of turn; the session was killed")
        if control.kind is Kind.EXITED:
            oom = self._oom_killed()
            self._destroy()
            if oom:
                raise MemoryLimitExceeded(f"memory limit of {limits.memory} bytes exceeded; the interpreter was killed")
        return Outcome(exit_code=control.status)

    def _end_keyboard(self, feeder: Feeder) -> None:
        """After an ``L`` eval: stop forwarding (a command in flight is finished), then tell the driver (``E``)."""
        if not feeder.stop(SEND_TIMEOUT) or not self.alive:
            self._destroy()  # a keyboard command half-written or never drained: the stream is lost
            return
        try:
            self._attachment.send(repl_protocol.KEYBOARD_END, timeout=SEND_TIMEOUT)
        except EngineError:
            self._destroy()

    def _next_control(self, deadline: float | None, ctl: RunControl, *, output: OutputCapture | None) -> Control | None:
        """Deliver data frames to ``output`` until a control frame (returned) or the deadline (None).

        Raises:
            Cancelled, OutputLimitExceeded, MemoryLimitExceeded, SessionKilled.
        """
        try:
            for stream_id, data in self._frames:
                ctl.check()
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                if stream_id == 2:
                    self.stderr_tail = (self.stderr_tail + data)[-4096:]
                elif stream_id == 1:
                    for frame in self._reader.feed(data):
                        if frame.kind in (Kind.STDOUT, Kind.STDERR):
                            self._deliver(output, frame.kind, frame.payload)
                        else:
                            return parse_control(frame, self._nonce)
        except ProtocolError as exc:
            self._destroy()
            raise SessionKilled(f"the session broke the REPL protocol ({exc}); it was killed") from None
        except OSError as exc:
            if not self._closed:
                self._destroy()
            raise SessionKilled(f"lost the session's container: {exc}") from exc
        # EOF: the driver (and so the container) is gone.
        oom = self._oom_killed()
        self._destroy()
        if oom:
            raise MemoryLimitExceeded("memory limit exceeded; the session's container was OOM-killed")
        if self._closed:
            raise SessionKilled("the session was closed")
        raise SessionKilled(f"the session's interpreter died{self._stderr_hint()}")

    def _deliver(self, output: OutputCapture | None, kind: Kind, data: bytes) -> None:
        if output is None:  # output before the first eval: nobody asked for it
            return
        try:
            if kind is Kind.STDOUT:
                output.write_stdout(data)
            else:
                output.write_stderr(data)
        except OutputLimitExceeded:
            self._destroy()
            raise

    def _stderr_hint(self) -> str:
        tail = bytes(self.stderr_tail).decode("utf-8", "replace").strip()
        return f": {tail[-300:]}" if tail else ""

    def _oom_killed(self) -> bool:
        """Whether the memory cgroup killed a process; the container is killed either way.

        Podman does not set ``OOMKilled`` when the victim is not the main
        process (the interpreter never is), so the kernel's counter is read
        first, while the container still runs: the driver lingers after
        reporting its interpreter's exit for this (see ``resources/drivers``).
        """
        counted = self._engine.oom_kills(self.container)
        try:
            self._engine.kill(self.container)
            self._engine.wait(self.container, timeout=10.0)
            return self._engine.state(self.container).oom_killed or bool(counted)
        except EngineError:
            return bool(counted)

    # -- teardown -----------------------------------------------------------

    def _destroy(self) -> None:
        """Kill and remove the container (blocking). Idempotent, never raises."""
        with self._lock:
            self._alive = False
            if self._destroyed:
                return
            self._destroyed = True
        self._close_recorders()  # before the eval in flight (if any) ends: what was logged is its
        self._attachment.close()
        try:
            self._engine.remove(self.container)
        except EngineError:
            log.warning("could not remove session container %s", self.container[:12], exc_info=True)

    def close(self) -> None:
        """Stop the interpreter and remove its container (on a reaper thread). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._reaper(self._destroy)


#: How long a new session's driver may take to report ready.
START_TIMEOUT: Final = 30.0
#: How long after READY the spawn watch may take to find the interpreter.
FIND_TIMEOUT: Final = 2.0


def start_session(
    engine: Engine,
    *,
    image: str,
    kind: EngineKind,
    request: SessionRequest,
    pool: Executor,
    reaper: Callable[[Callable[[], None]], None],
    ctl: RunControl,
    spawns: SpawnWatch | None = None,
    record_network: bool = False,
) -> DockerGuestSession:
    """Create, start and handshake a session container (blocking). Removes it again on any failure.

    ``spawns``: the backend's spawn watch, which then follows the interpreter;
    ``record_network``: the host can set up a ``sinkhole`` in the session's
    namespace (see the module docstring). Both are set up before the driver
    is sent, so before any guest code exists.

    Raises:
        Unsupported: the pack has no REPL driver.
        SessionKilled: the driver did not come up.
        EngineError: the daemon refused.
    """
    pack = request.pack
    driver = driver_for(pack)
    if driver is None or pack.docker is None:
        raise Unsupported(f"no REPL driver for {pack.name}")
    nonce = secrets.token_hex(16)
    archive = session_archive(driver, nonce)
    argv = ["/bin/sh", "-c", setup_script(driver, len(archive))]
    container = engine.create(image, argv, session_profile(request.limits, pack.docker, kind), request.env)
    session: DockerGuestSession | None = None
    try:
        attachment = engine.attach(container)
        session = DockerGuestSession(
            engine=engine, container=container, driver=driver, attachment=attachment, nonce=nonce, pool=pool,
            reaper=reaper,
        )
        if spawns is not None:
            session._following = spawns.follow(container, interp_args(driver), session.eval_log)
        engine.start(container)
        _start_recorders(engine, session, record_network=record_network)
        attachment.send(archive, timeout=SEND_TIMEOUT)
        session.wait_ready(time.monotonic() + START_TIMEOUT, ctl)
        _check_following(session)
        return session
    except BaseException:
        if session is not None:
            session._destroy()
        else:
            with contextlib.suppress(EngineError):
                engine.remove(container)
        raise


def _start_recorders(engine: Engine, session: DockerGuestSession, *, record_network: bool) -> None:
    """The started container's sinkhole and its ``pids.events``, when the host can have them (quietly: not)."""
    container = session.container
    if record_network:
        try:
            session._hole = Sinkhole.open(engine, container, session.eval_log)
        except NetnsError as exc:
            log.info("no host records of network attempts for this session: %s", exc)
    try:
        pid = engine.state(container).pid
    except EngineError:
        return
    if pid <= 0:
        return
    try:
        with open(f"/proc/{pid}/cgroup") as cgroup:
            if container not in cgroup.read():
                return  # another PID namespace: that pid is not the container's here
    except OSError:
        return
    # Opened now, before any guest code exists (the guest cannot write /sys anyway), and kept: the fd stays
    # the container's cgroup file whatever happens to that pid later.
    for path in ("sys/fs/cgroup/pids.events", "sys/fs/cgroup/pids/pids.events"):
        try:
            session._pids_events = os.open(f"/proc/{pid}/root/{path}", os.O_RDONLY | os.O_CLOEXEC)
            return
        except OSError:
            continue


def _check_following(session: DockerGuestSession) -> None:
    """Once the driver is ready its interpreter has started (bash's may exec a moment after the READY frame):
    a follow that has not found it within ``FIND_TIMEOUT`` is given up (it would otherwise look at every exec
    on the machine for the session's life)."""
    following = session._following
    if following is None:
        return
    deadline = time.monotonic() + FIND_TIMEOUT
    following.flush()
    while not following.found and time.monotonic() < deadline:
        time.sleep(0.02)
        following.flush()
    if not following.found:
        log.info("no host records of spawned commands for this session: its interpreter was not found")
        session._following = None
        following.close()
