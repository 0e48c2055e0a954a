"""Stateful REPL sessions: ``Session`` and the backend-side contract behind it.

A backend keeps a live interpreter (a ``GuestSession``); the core's
``Session`` wraps it with everything that is the same for every backend:
one eval at a time, a fresh output capture and wall-time limit per eval,
the kill-or-restart rule after a limit, eval counting, idle tracking and
``Result`` building. Variables, imports and definitions live in the guest
interpreter, and files in the session's VFS, so both persist across evals.

Lifecycle: ``ALIVE`` -> (a limit trips) ``KILLED`` -> ``CLOSED``. A killed
session raises ``SessionKilled`` on the next eval unless ``auto_restart``
is on, in which case that eval runs in a fresh interpreter (and fresh VFS)
and its ``Result.restarted`` is True. ``close()`` is idempotent; any use
after it raises ``SessionClosed``.
"""

from __future__ import annotations

import asyncio
import enum
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Protocol, runtime_checkable

from playground.core import variants
from playground.core.attempts import AttemptLog
from playground.core.capture import Capture
from playground.core.editing import Editing
from playground.core.errors import InvalidSpec, LimitExceeded, SessionClosed, SessionKilled
from playground.core.keyboard import InputStream
from playground.core.limits import Limits, ResolvedLimits
from playground.core.output import OutputCapture, OutputListener
from playground.core.pack import Pack
from playground.core.result import Outcome, Result
from playground.core.vfs import VFS

#: Seconds an interrupted eval may take to stop in place before it is cancelled (which kills the interpreter).
INTERRUPT_GRACE: Final = 2.0


def new_session_id() -> str:
    """128 random bits, URL-safe: unguessable, so an id is also a capability."""
    return secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionConfig:
    """How a session is created. Durations in seconds; ``None`` means no limit here.

    ``limits`` override the sandbox defaults: ``wall_time`` and
    ``max_output`` apply to each eval, ``memory`` and the filesystem limits
    to the whole session. ``interrupt_grace`` is how long ``Session.stop``
    lets an interrupted eval take to end in place before cancelling it.
    """

    id: str = ""
    limits: Limits | None = None
    auto_restart: bool = False
    idle_timeout: float | None = None
    max_lifetime: float | None = None
    max_evals: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    interrupt_grace: float = INTERRUPT_GRACE

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        if self.id and (len(self.id) > 128 or not all(c.isalnum() or c in "-_." for c in self.id)):
            raise InvalidSpec("session id: up to 128 characters of [A-Za-z0-9._-]")
        for name in ("idle_timeout", "max_lifetime"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value > 0):
                raise InvalidSpec(f"session {name} must be a positive number of seconds or None")
        grace = self.interrupt_grace
        if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0 <= grace < float("inf"):
            raise InvalidSpec("session interrupt_grace must be a finite number of seconds, 0 or more")
        if self.max_evals is not None and (isinstance(self.max_evals, bool) or self.max_evals < 1):
            raise InvalidSpec("session max_evals must be a positive int or None")
        for key, value in self.env.items():
            if not key or "=" in key or "\x00" in key or "\x00" in value:
                raise InvalidSpec(f"bad session environment variable {key!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRequest:
    """What the core hands a backend to start one interpreter."""

    pack: Pack
    limits: ResolvedLimits
    env: Mapping[str, str]
    vfs: VFS


@runtime_checkable
class GuestSession(Protocol):
    """A live interpreter inside a backend. Used by one ``Session``, one eval at a time."""

    @property
    def alive(self) -> bool: ...

    async def eval(
        self,
        code: str,
        output: OutputCapture,
        limits: ResolvedLimits,
        *,
        input: InputStream | None = None,
        attempts: AttemptLog | None = None,
    ) -> Outcome:
        """Run ``code`` in the live interpreter.

        Output goes only through ``output``; ``limits.wall_time`` bounds this
        eval, also while the code waits for ``input`` (the keyboard: what the
        code reads from its stdin during this eval; None or closed: end of
        file; a backend whose driver cannot pass it on says how in its docs).
        A final expression's value is echoed to stdout like a REPL.
        ``attempts`` is where this eval's attempts beyond the sandbox go
        (``core.attempts``), as far as the backend sees them.
        A limit raises the matching ``LimitExceeded``; the interpreter is
        then dead (``alive`` False). Cancellation stops the eval and kills
        the interpreter before ``CancelledError`` leaves.
        """
        ...

    def close(self) -> None:
        """Stop the interpreter and free everything. Idempotent, never raises."""
        ...


@runtime_checkable
class InterruptibleGuest(Protocol):
    """Optional ``GuestSession`` extension: stop the running eval, keep the interpreter."""

    def interrupt(self) -> bool:
        """Request an interrupt of the running eval; False when this interpreter cannot. Thread-safe."""
        ...


@runtime_checkable
class SessionBackend(Protocol):
    """Optional backend extension: backends that can keep an interpreter alive."""

    def session_unavailable_reason(self, pack: Pack) -> str | None:
        """None when ``open_session`` can serve ``pack``; else why not."""
        ...

    async def open_session(self, request: SessionRequest) -> GuestSession: ...


class SessionState(enum.Enum):
    ALIVE = "alive"
    KILLED = "killed"
    CLOSED = "closed"


class Stopped(enum.Enum):
    """How ``Session.stop`` ended an eval."""

    #: The eval ended in place (or had already ended): the interpreter kept its state.
    IN_PLACE = "in place"
    #: It was interrupted but did not end within the grace period: cancelled, the interpreter killed.
    AFTER_GRACE = "after grace"
    #: This interpreter cannot be interrupted in place: cancelled at once, the interpreter killed.
    CANCELLED = "cancelled"


class Session:
    """A stateful interpreter for one language. Create with ``Sandbox.new_session``.

    Safe to share between tasks of one event loop: evals are serialized.
    """

    def __init__(
        self,
        backend: SessionBackend,
        backend_name: str,
        pack: Pack,
        config: SessionConfig,
        limits: ResolvedLimits,
        *,
        limits_for: Callable[[Pack], ResolvedLimits] | None = None,
    ) -> None:
        self.id = config.id or new_session_id()
        self.lang = pack.name
        self.config = config
        #: The limits now: ``limits_for`` (the config's over a pack's defaults) gives a variant's when the
        #: session moves to one (``_pick_runtime``).
        self.limits = limits
        self._limits_for = limits_for
        self.backend_name = backend_name
        self.created_at = time.monotonic()
        self.last_used = self.created_at
        self.evals = 0
        self._backend = backend
        self._pack = pack
        #: The language's own pack; ``_pack`` may become one of its variants (see ``_pick_runtime``).
        self._base_pack = pack
        #: The variant ``_pack`` runs on ("": the language's own runtime).
        self._runtime_name = ""
        #: True while the current interpreter has run no input (it can still be swapped for a variant).
        self._fresh = True
        self._guest: GuestSession | None = None
        self._vfs: VFS | None = None
        self._state = SessionState.ALIVE
        self._lock = asyncio.Lock()
        self._restart_pending = False
        #: True while an eval runs in the guest; set by ``eval`` only, so ``interrupt`` can tell.
        self._evaluating = False
        #: The running eval was interrupted in place (``Result.interrupted``).
        self._interrupted = False

    @property
    def state(self) -> SessionState:
        return self._state

    @property
    def alive(self) -> bool:
        """True while the session accepts evals (a killed auto-restart session still does)."""
        if self._state is SessionState.CLOSED:
            return False
        if self.config.auto_restart:
            return True
        if self._state is SessionState.KILLED:
            return False
        return self._guest is None or self._guest.alive

    @property
    def vfs(self) -> VFS | None:
        """The session's filesystem (``/work`` and ``/out`` persist across evals)."""
        return self._vfs

    def expired(self, now: float | None = None) -> str | None:
        """Why the session should be reaped now (idle, lifetime), or None."""
        now = time.monotonic() if now is None else now
        if self.config.idle_timeout is not None and now - self.last_used > self.config.idle_timeout:
            return "idle timeout"
        if self.config.max_lifetime is not None and now - self.created_at > self.config.max_lifetime:
            return "maximum lifetime reached"
        return None

    async def start(self) -> None:
        """Start the interpreter now rather than on the first eval."""
        async with self._lock:
            await self._ensure_guest()

    async def _ensure_guest(self) -> GuestSession:
        if self._guest is not None and self._guest.alive:
            return self._guest
        if self._guest is not None:
            self._guest.close()
        self._vfs = VFS.for_limits(self.limits)
        self._fresh = True
        self._guest = await self._backend.open_session(
            SessionRequest(pack=self._pack, limits=self.limits, env=self.config.env, vfs=self._vfs)
        )
        return self._guest

    def _pick_runtime(self, code: str) -> None:
        """Before a fresh interpreter's first input: move to the variant that input needs, if any.

        A session starts on the language's light runtime; an input that
        imports what only a variant has (``import numpy``) and comes first
        (nothing to lose yet) restarts the session on that variant, which it
        then keeps. Later inputs cannot move it: their state would be lost.
        A variant this backend cannot run now is not picked (the import then
        fails as it would have).
        """
        if not self._fresh or self.backend_name != "wasm":  # variants are Wasm runtimes; other tiers have one
            return
        chosen = variants.choose(self._base_pack, code)
        wanted = variants.variant_pack(self._base_pack, chosen)
        if wanted.wasm == self._pack.wasm or self._backend.session_unavailable_reason(wanted) is not None:
            return
        self._pack = wanted
        self._runtime_name = chosen.name if chosen is not None else ""
        if self._limits_for is not None:  # the variant's own defaults (the scientific Python's memory)
            self.limits = self._limits_for(wanted)
        if self._guest is not None:
            self._guest.close()
            self._guest = None

    def hint(self, result: Result) -> str | None:
        """A sentence on what a failed input met and what to do about it, or None (``Sandbox.hint``).

        What no tier of the language can do (``Pack.nowhere``); on the Wasm
        tier, what its runtime cannot do (``WasmSpec.cannot``), else how to get
        the module it could not import: a session keeps the runtime its first
        input picked, so the way to another runtime of the language is a new
        session.
        """
        base, runtime = self._base_pack, self._runtime_name
        nowhere = variants.nowhere_hint(base, result.stderr)
        if nowhere is not None or self.backend_name != "wasm":
            return nowhere
        return variants.cannot_hint(base, result.stderr, runtime=runtime) or variants.missing_module_hint(
            base, result.stderr, runtime=runtime, session=True
        )

    @property
    def editing(self) -> Editing:
        """How front ends read the language's input (``Pack.editing``: when a typed input is complete)."""
        return self._base_pack.editing

    @property
    def runtime(self) -> str:
        """The runtime the session runs on now: the pack's version (a variant's when it moved to one)."""
        return self._pack.version

    async def eval(
        self, code: str, *, on_output: OutputListener | None = None, input: InputStream | None = None
    ) -> Result:
        """Run ``code`` in the session and return what this eval produced.

        ``input`` is the keyboard for this eval (``core.keyboard``): what the
        code reads (``input()``, ``read``) comes from it; without it, reads
        see end of file. A read waiting for a line is bounded by the eval's
        wall time like the rest of the eval.

        Raises:
            SessionClosed: the session was closed (or reaped).
            SessionKilled: an earlier eval killed it and auto-restart is off,
                or ``max_evals`` was reached.
            LimitExceeded: this eval hit a limit; ``.result`` holds its
                partial output. The session is killed by it.
        """
        if not isinstance(code, str):
            raise InvalidSpec("session code must be a str")
        async with self._lock:
            self._check_usable()
            restarted = False
            if self._state is SessionState.KILLED:
                self._state = SessionState.ALIVE
                restarted = True
            elif self._guest is not None and not self._guest.alive:
                if not self.config.auto_restart:
                    self._state = SessionState.KILLED
                    raise SessionKilled(f"session {self.id} died; its state is gone")
                restarted = True
            if self.config.max_evals is not None and self.evals >= self.config.max_evals:
                raise SessionKilled(f"session {self.id} reached its limit of {self.config.max_evals} evals")
            self.evals += 1
            self.last_used = time.monotonic()
            self._pick_runtime(code)
            guest = await self._ensure_guest()
            self._fresh = False
            assert self._vfs is not None
            capture = Capture(
                output=OutputCapture(self.limits.max_output_cap, on_output), vfs=self._vfs,
                limits=self.limits,
            )  # fmt: skip

            def result_of(outcome: Outcome | None) -> Result:
                return capture.result(
                    outcome, backend=self.backend_name, restarted=restarted, interrupted=self._interrupted
                )

            self._interrupted = False
            self._evaluating = True
            try:
                outcome = await guest.eval(
                    code, capture.output, self.limits, input=input, attempts=capture.attempts
                )
            except LimitExceeded as exc:
                self._kill(guest)
                if exc.result is None:
                    exc.result = result_of(exc.outcome)
                raise
            except asyncio.CancelledError:
                self._kill(guest)
                raise
            finally:
                self._evaluating = False
                self.last_used = time.monotonic()
            if not guest.alive:
                self._kill(guest)
            return result_of(outcome)

    def _check_usable(self) -> None:
        if self._state is SessionState.CLOSED:
            raise SessionClosed(f"session {self.id} is closed")
        if self._state is SessionState.KILLED and not self.config.auto_restart:
            raise SessionKilled(f"session {self.id} was killed by a limit; its state is gone")

    def _kill(self, guest: GuestSession) -> None:
        guest.close()
        self._guest = None
        self._state = SessionState.KILLED

    async def reset(self) -> None:
        """Throw the interpreter state (and the session's files) away and start fresh.

        Raises:
            SessionClosed: the session is closed.
        """
        async with self._lock:
            if self._state is SessionState.CLOSED:
                raise SessionClosed(f"session {self.id} is closed")
            if self._guest is not None:
                self._guest.close()
                self._guest = None
            self._state = SessionState.ALIVE
            await self._ensure_guest()

    def interrupt(self) -> bool:
        """Ask the running eval to stop without killing the interpreter; True if the backend can.

        The eval then ends the way the language's own REPL ends on Ctrl-C
        (``KeyboardInterrupt`` in Python, an "interrupted" error in
        JavaScript and Lua, status 130 in bash) and the session keeps its
        state. Code may catch or ignore it, as in a terminal: callers give it
        a grace period, then cancel. False means the interpreter cannot be
        interrupted in place (cancel the eval instead, which kills it).
        Thread-safe; returns at once; harmless when nothing runs.
        """
        guest = self._guest
        if isinstance(guest, InterruptibleGuest) and self._state is SessionState.ALIVE and guest.interrupt():
            if self._evaluating:
                self._interrupted = True
            return True
        return False

    async def stop(self, evaluation: asyncio.Future[Any]) -> Stopped:
        """Stop a running eval of this session as Ctrl-C does: the one rule for every front end.

        ``evaluation`` is the task (on this loop) awaiting this session's
        ``eval``. The rule: ``interrupt()``; when the backend takes it, the
        eval gets ``config.interrupt_grace`` seconds to end on its own (its
        ``Result.interrupted`` is then True and the interpreter keeps its
        state); otherwise, or after the grace, ``evaluation`` is cancelled,
        which kills the interpreter (the next eval starts a fresh one).

        Guarantee: when this returns, and also when the caller is cancelled
        while it waits, ``evaluation`` is done: the guest is stopped first
        (the wait is shielded), then ``CancelledError`` propagates. What the
        eval itself raised stays on ``evaluation`` for its owner.
        """
        stopping = asyncio.ensure_future(self._stop(evaluation))
        try:
            return await asyncio.shield(stopping)
        except asyncio.CancelledError:
            await asyncio.wait({stopping})
            raise

    async def _stop(self, evaluation: asyncio.Future[Any]) -> Stopped:
        if evaluation.done():
            return Stopped.IN_PLACE
        taken = self.interrupt()
        if taken:
            await asyncio.wait({evaluation}, timeout=self.config.interrupt_grace)
            if evaluation.done():
                return Stopped.IN_PLACE
        evaluation.cancel()
        await asyncio.wait({evaluation})
        return Stopped.AFTER_GRACE if taken else Stopped.CANCELLED

    def close(self) -> None:
        """Stop the interpreter. Idempotent; closed means closed even if stopping failed."""
        if self._state is SessionState.CLOSED:
            return
        self._state = SessionState.CLOSED
        guest, self._guest = self._guest, None
        if guest is not None:
            guest.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
