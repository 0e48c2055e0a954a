"""The contract between the core and an isolation backend.

A backend is small on purpose: a name, a way to say why it cannot run a
pack, one ``run`` and ``close``. Everything around a run (routing, limits,
the VFS, output capture, building the ``Result``, attaching partial
results to limit errors) happens once, in ``Sandbox``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from playground.core.attempts import AttemptLog
from playground.core.keyboard import InputStream
from playground.core.limits import ResolvedLimits
from playground.core.output import OutputCapture
from playground.core.pack import Pack
from playground.core.result import Outcome
from playground.core.spec import Spec
from playground.core.vfs import VFS

#: Called with a human message and a fraction in [0, 1] (or -1 when unknown),
#: e.g. while a runtime is compiled for the first time.
ProgressCallback = Callable[[str, float], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What the core hands a backend. Limits are merged and validated.

    A backend must:

    * write guest stdout/stderr only through ``output`` and stop the guest
      when it raises ``OutputLimitExceeded`` (then let that error out);
    * enforce ``limits.wall_time`` itself, and stop the guest and return
      promptly when its task is cancelled;
    * present ``vfs`` as the guest's filesystem (the standard layout: ``/in``
      read-only, ``/work`` the working directory with the program file,
      ``/out``, ``/tmp``), never follow a guest's link on the host, and
      write nothing to the host filesystem;
    * grant no network unless ``spec.net`` allows it (and refuse a policy
      it cannot enforce, via ``supports_network``);
    * raise limit violations as the matching ``LimitExceeded`` subclass;
    * give the guest ``stdin`` and then, when ``input`` is set, what is typed
      into it until it is closed (end of file after that). A guest blocked
      reading it must still be stopped at ``limits.wall_time`` and on
      cancellation, and (where the tier measures CPU time itself) not be
      charged CPU time while it waits;
    * record in ``attempts`` what the guest tried beyond its sandbox, as far
      as the tier can see it (``core.attempts``): what code of ours refused
      as ``Observer.HOST``, what an in-guest hook reported only through
      ``parse_guest_report``.
    """

    pack: Pack
    spec: Spec
    limits: ResolvedLimits
    vfs: VFS
    output: OutputCapture
    stdin: bytes
    progress: ProgressCallback | None = None
    #: The keyboard (``Sandbox.run(..., input=)``): read after ``stdin``; None means end of file after ``stdin``.
    input: InputStream | None = None
    #: What the guest tried beyond its sandbox (``Result.attempts``).
    attempts: AttemptLog = field(default_factory=AttemptLog)


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """One line of ``playground doctor``: what was checked, whether it is fine, how to fix it."""

    name: str
    ok: bool
    detail: str
    hint: str = ""
    #: An optional part (the Docker tier) that is missing warns; it does not fail ``doctor``.
    required: bool = True


@runtime_checkable
class Diagnosable(Protocol):
    """Optional backend extension: report on its own health for ``playground doctor``."""

    def diagnostics(self) -> list[Diagnostic]: ...


@runtime_checkable
class Provisionable(Protocol):
    """Optional backend extension: fetch or build what a pack needs before its first run.

    The Wasm tier's runtimes are pinned downloads and builds that take a
    minute on a new machine; front ends (``playground setup``, the CLI on a
    language's first use) call this, never the run path, so a download is
    never charged to a program's time limit.
    """

    def missing(self, pack: Pack, *, complete: bool = False) -> list[str]:
        """Names of what ``pack`` still needs here (empty when ready). Cheap: no hashing, no network.

        ``complete``: also what a run builds for itself the first time it
        needs it (before its clock starts), as ``provision`` says.
        """
        ...

    def provision(self, pack: Pack, progress: Callable[[str], None], *, complete: bool = False) -> None:
        """Fetch or build what ``pack`` is missing; blocks; one ``progress`` line per step.

        ``complete``: also what only some programs use, which the first of
        them would otherwise build for itself (a set-up done ahead of use:
        ``playground setup``).

        Raises:
            BackendUnavailable: a download, build or hash check failed (the message says which).
        """
        ...


@runtime_checkable
class CallerRootBackend(Protocol):
    """Optional backend extension: it can give the guest a root of the caller's (``Spec.root_files``).

    A backend without it (a container has its image as ``/``) is never
    routed a spec with ``root_files``.
    """

    def supports_caller_root(self) -> bool: ...


@runtime_checkable
class Backend(Protocol):
    @property
    def name(self) -> str:
        """Stable identifier the routing policy refers to (``"wasm"``)."""
        ...

    @property
    def supports_network(self) -> bool:
        """Whether this backend can enforce a ``NetPolicy``."""
        ...

    def unavailable_reason(self, pack: Pack) -> str | None:
        """None when this backend can run ``pack`` now; else why not, in words.

        Never blocks: the GUI thread and the event loop call it. A backend
        that must ask something slow (a daemon) answers from a snapshot and
        says so by implementing ``SlowAvailability``.
        """
        ...

    async def run(self, request: Request) -> Outcome:
        """Run one request to completion. See ``Request`` for the contract."""
        ...

    def close(self) -> None:
        """Release resources. Idempotent."""
        ...


#: What a ``SlowAvailability`` backend says of a pack before it has learned anything.
CHECKING: Final = "still checking whether it can run here"


@runtime_checkable
class SlowAvailability(Protocol):
    """Optional ``Backend`` extension: learning what it can run takes I/O (a daemon to ask, images to look up).

    ``unavailable_reason`` then answers at once from the last snapshot:
    ``CHECKING`` for a pack it has not learned about yet (it starts learning
    on a thread of its own, and again whenever the snapshot is stale; it
    never waits for it). ``refresh`` learns now, blocking the calling
    thread: ``Sandbox`` calls it off the event loop when a routing decision
    needs an answer that is still ``CHECKING``; ``playground doctor`` calls
    it directly.
    """

    @property
    def name(self) -> str: ...

    def refresh(self) -> None:
        """Learn what can run here now (every pack asked about so far); blocks, bounded by the backend's timeouts."""
        ...


class MissingBackend:
    """Stands in for a backend that could not be loaded, so routing can say why.

    ``default_sandbox()`` registers one when, say, wasmtime is not installed:
    the language table and ``BackendUnavailable`` then carry the reason
    instead of the backend silently not existing.
    """

    supports_network = False

    def __init__(self, name: str, reason: str, *, required: bool = True) -> None:
        self._name = name
        self.reason = reason
        self.required = required

    @property
    def name(self) -> str:
        return self._name

    def unavailable_reason(self, pack: Pack) -> str | None:
        return self.reason

    async def run(self, request: Request) -> Outcome:
        from playground.core.errors import BackendUnavailable

        raise BackendUnavailable(f"{self._name} backend unavailable: {self.reason}")

    def close(self) -> None:
        return None

    def diagnostics(self) -> list[Diagnostic]:
        return [Diagnostic(name=f"{self._name} backend", ok=False, detail=self.reason, required=self.required)]
