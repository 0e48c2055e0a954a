"""The exception tree of the sandbox.

Two families share one root so that ``except SandboxError`` catches
everything the sandbox raises:

    SandboxError
    ├── LimitExceeded               the guest hit a resource limit (carries .result)
    │   ├── TimeLimitExceeded
    │   │   └── CPUTimeLimitExceeded
    │   ├── MemoryLimitExceeded
    │   ├── OutputLimitExceeded
    │   └── FSQuotaExceeded
    ├── SessionKilled               a session died (timeout, limit) and its state is gone
    ├── BackendUnavailable          no backend permitted by the policy can run the language
    ├── Unsupported                 the chosen backend cannot do what was asked
    ├── NetworkDenied               the guest tried to use the network and may not
    ├── ServeError                  serving failed
    │   └── ServiceNotReady         the readiness probe never passed; no URL was handed out
    ├── SessionClosed / TooManySessions / SessionNotFound / ManagerClosed
    └── caller mistakes (also ValueError / LookupError, so plain Python code can catch them)
        ├── InvalidSpec
        │   └── InvalidServeOptions
        ├── InvalidLimits
        ├── InvalidPack
        └── UnknownLanguage

A guest's non-zero exit code is never an exception: it is ``Result.exit_code``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playground.core.result import Outcome, Result


class SandboxError(Exception):
    """Root of every error the sandbox raises."""


class LimitExceeded(SandboxError):
    """The guest hit a resource limit.

    ``result`` holds what was captured before the limit tripped (stdout,
    stderr, /out files, usage). Backends raise these without a result; the
    ``Sandbox`` attaches the partial result at its boundary, so callers always
    see it set.
    """

    #: Which ``Limits`` field tripped, e.g. ``"wall_time"``.
    limit: str = ""

    def __init__(self, message: str, *, result: Result | None = None, outcome: Outcome | None = None) -> None:
        super().__init__(message)
        self.result: Result | None = result
        #: What the backend knew when the limit tripped (exit code, peak memory), if anything.
        self.outcome: Outcome | None = outcome


class TimeLimitExceeded(LimitExceeded):
    """The wall-clock (or CPU-time) limit expired."""

    limit = "wall_time"


class CPUTimeLimitExceeded(TimeLimitExceeded):
    """The CPU-time limit was spent (best effort on some backends; see their docs)."""

    limit = "cpu_time"


class MemoryLimitExceeded(LimitExceeded):
    """The guest tried to use more memory than allowed."""

    limit = "memory"


class OutputLimitExceeded(LimitExceeded):
    """stdout plus stderr exceeded ``max_output``; the guest was stopped."""

    limit = "max_output"


class FSQuotaExceeded(LimitExceeded):
    """The virtual filesystem's byte quota or file-count limit was exceeded."""

    limit = "fs_quota"


class SessionKilled(SandboxError):
    """The session was destroyed (timeout, limit, crash) and its state is gone."""


class BackendUnavailable(SandboxError):
    """No backend allowed by the routing policy can run the language.

    The message names the language, the policy and why each backend refused.
    """


class Unsupported(SandboxError):
    """The chosen backend cannot do what was asked (e.g. a network policy)."""


class NetworkDenied(SandboxError):
    """The guest tried to reach the network and the policy forbids it."""


class ServeError(SandboxError):
    """Serving a guest service failed."""


class ServiceNotReady(ServeError):
    """The readiness probe did not pass before its timeout; no URL was handed out.

    ``target`` names what was probed, ``last_error`` says what the last attempt saw.
    """

    def __init__(self, message: str, *, target: str = "", last_error: str = "") -> None:
        super().__init__(message)
        self.target = target
        self.last_error = last_error


class SessionClosed(SandboxError):
    """An operation was attempted on a closed session."""


class TooManySessions(SandboxError):
    """The session manager is at its capacity."""


class SessionNotFound(SandboxError, LookupError):
    """No session with that id is registered."""


class ManagerClosed(SandboxError):
    """The session manager was shut down and refuses new work."""


class InvalidSpec(SandboxError, ValueError):
    """A ``Spec`` is malformed (bad file key, bad env, wrong types)."""


class InvalidServeOptions(InvalidSpec):
    """``ServeOpts`` (or a proxy setting) is malformed or out of range."""


class InvalidLimits(SandboxError, ValueError):
    """A ``Limits`` value is out of range or of the wrong type."""


class InvalidPack(SandboxError, ValueError):
    """A language pack definition is malformed or clashes with another."""


class UnknownLanguage(SandboxError, LookupError):
    """No registered pack matches the language name, alias or extension."""
