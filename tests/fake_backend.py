"""An in-process backend for unit tests of the core's routing and bookkeeping only.

It runs a handler function instead of a guest, so tests can script exactly
what a "guest" does: print, write files, sleep, exceed a limit. Everything a
user runs for real is tested against the real backends elsewhere.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

from playground.core import (
    AttemptLog,
    InputStream,
    Outcome,
    OutputCapture,
    Pack,
    Request,
    ResolvedLimits,
    SessionRequest,
    TimeLimitExceeded,
)

Handler = Callable[[Request], Outcome | Awaitable[Outcome]]


def echo_handler(request: Request) -> Outcome:
    """Prints the code to stdout, stdin to stderr, exits with len(args)."""
    request.output.write_stdout(request.spec.code_bytes)
    if request.stdin:
        request.output.write_stderr(request.stdin)
    return Outcome(exit_code=len(request.spec.args))


class FakeBackend:
    """Runs ``handler(request)`` as if it were a guest; honours wall time."""

    def __init__(
        self,
        name: str = "fake",
        handler: Handler = echo_handler,
        *,
        refuse: Callable[[Pack], str | None] | None = None,
        supports_network: bool = False,
    ) -> None:
        self._name = name
        self.handler = handler
        self.refuse = refuse
        self.supports_network = supports_network
        self.runs: list[Request] = []
        self.closed = 0

    @property
    def name(self) -> str:
        return self._name

    def unavailable_reason(self, pack: Pack) -> str | None:
        return self.refuse(pack) if self.refuse else None

    async def run(self, request: Request) -> Outcome:
        self.runs.append(request)
        wall = request.limits.wall_time_cap

        async def call() -> Outcome:
            value = self.handler(request)
            if inspect.isawaitable(value):
                return await value
            return value

        try:
            return await asyncio.wait_for(call(), wall)
        except TimeoutError:
            raise TimeLimitExceeded(f"wall-time limit of {wall}s exceeded") from None

    def close(self) -> None:
        self.closed += 1


class FakeGuestSession:
    """A scripted interpreter: ``set K V``, ``get K``, ``sleep S``, ``die``, ``held LIMIT``; state is a dict."""

    instances = 0

    def __init__(self, request: SessionRequest) -> None:
        FakeGuestSession.instances += 1
        self.request = request
        self.state: dict[str, str] = {}
        self._alive = True
        self.closed = 0

    @property
    def alive(self) -> bool:
        return self._alive

    async def eval(
        self, code: str, output: OutputCapture, limits: ResolvedLimits, *, input: InputStream | None = None,
        attempts: AttemptLog | None = None,
    ) -> Outcome:
        wall = limits.wall_time_cap
        try:
            return await asyncio.wait_for(self._eval(code, output), wall)
        except TimeoutError:
            self._alive = False
            raise TimeLimitExceeded(f"eval exceeded {wall}s") from None

    async def _eval(self, code: str, output: OutputCapture) -> Outcome:
        for line in code.splitlines():
            cmd, *rest = line.split()
            if cmd == "set":
                self.state[rest[0]] = rest[1]
            elif cmd == "get":
                output.write_stdout(self.state.get(rest[0], "<unset>").encode() + b"\n")
            elif cmd == "sleep":
                await asyncio.sleep(float(rest[0]))
            elif cmd == "file":
                self.request.vfs.write_file("/work/" + rest[0], rest[1].encode())
            elif cmd == "die":
                self._alive = False
                return Outcome(exit_code=1)
            elif cmd == "held":  # ran into a limit and was held to it (e.g. a fork bomb's max_procs)
                return Outcome(exit_code=0, limits_reached=(rest[0],))
        return Outcome(exit_code=0)

    def close(self) -> None:
        self._alive = False
        self.closed += 1


class FakeInterruptibleGuest(FakeGuestSession):
    """Also ``interrupt``: a ``sleep`` ends at once with exit 130 (as Ctrl-C ends an input); ``stubborn`` ignores it."""

    def __init__(self, request: SessionRequest) -> None:
        super().__init__(request)
        self.interrupts = 0
        self._interrupted = asyncio.Event()

    def interrupt(self) -> bool:
        self.interrupts += 1
        self._interrupted.set()
        return True

    async def _eval(self, code: str, output: OutputCapture) -> Outcome:
        self._interrupted.clear()
        for line in code.splitlines():
            cmd, *rest = line.split()
            if cmd == "sleep":
                try:
                    await asyncio.wait_for(self._interrupted.wait(), float(rest[0]))
                except TimeoutError:
                    continue
                output.write_stderr(b"KeyboardInterrupt\n")
                return Outcome(exit_code=130)
            if cmd == "stubborn":
                await asyncio.sleep(float(rest[0]))
                continue
            outcome = await super()._eval(line, output)
            if outcome.exit_code:
                return outcome
        return Outcome(exit_code=0)


class FakeSessionBackend(FakeBackend):
    """A FakeBackend that also keeps scripted interpreters alive (interruptible ones with ``interruptible``)."""

    def __init__(self, name: str = "fake", *, interruptible: bool = False, **kwargs: object) -> None:
        super().__init__(name, **kwargs)  # type: ignore[arg-type]
        self.guests: list[FakeGuestSession] = []
        self._interruptible = interruptible

    def session_unavailable_reason(self, pack: Pack) -> str | None:
        return None

    async def open_session(self, request: SessionRequest) -> FakeGuestSession:
        guest = FakeInterruptibleGuest(request) if self._interruptible else FakeGuestSession(request)
        self.guests.append(guest)
        return guest
