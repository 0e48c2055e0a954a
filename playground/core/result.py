"""What a run produced: ``Result``, ``Usage``, the backend's ``Outcome``, ``NetLogEntry``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from playground.core.attempts import Attempt


@dataclass(frozen=True, slots=True, kw_only=True)
class NetLogEntry:
    """One outbound request the guest made, allowed or denied."""

    timestamp: float
    method: str
    url: str
    status_code: int = 0
    bytes_transferred: int = 0
    duration: float = 0.0
    error: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Resources one execution consumed. Wall time in seconds, sizes in bytes.

    ``peak_memory`` is 0 when the backend cannot measure it.
    """

    wall: float = 0.0
    peak_memory: int = 0
    fs_bytes: int = 0
    fs_files: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What a backend reports about a run that ended without a limit error.

    ``limits_reached``: see ``Result.limits_reached``.
    """

    exit_code: int
    peak_memory: int = 0
    net_log: tuple[NetLogEntry, ...] = ()
    limits_reached: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """What an execution produced.

    ``stdout`` and ``stderr`` together are capped by ``Limits.max_output``
    (``truncated`` says the cap cut them). ``files`` maps paths relative to
    ``/out`` to their bytes. A non-zero ``exit_code`` is not an error.

    ``limits_reached`` names the ``Limits`` fields the guest ran into
    *without* being stopped by them: ``"max_procs"`` when the process limit
    refused to start a process (a fork bomb, contained). The program ran on
    and ``exit_code`` is its own, so this is not an exception (a program may
    cope with a refused fork, and its output is complete), but the user must
    be told: every front end says it, and ``playground run`` exits with 125.
    A limit that stops the guest is a ``LimitExceeded`` instead.

    ``attempts`` is what the guest tried beyond its sandbox (files outside
    its tree, the network, processes, ...; ``core.attempts``), each record
    saying who observed it; ``attempts_dropped`` counts distinct records
    the size cap cut. A limit in ``limits_reached`` is one of them too.

    ``interrupted`` (session evals): ``Session.interrupt``/``stop`` ended this
    eval in place, as Ctrl-C does; the interpreter kept its state.
    """

    stdout: bytes = b""
    stderr: bytes = b""
    truncated: bool = False
    exit_code: int = 0
    files: Mapping[str, bytes] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    backend: str = ""
    restarted: bool = False
    interrupted: bool = False
    net_log: tuple[NetLogEntry, ...] = ()
    limits_reached: tuple[str, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    attempts_dropped: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))
