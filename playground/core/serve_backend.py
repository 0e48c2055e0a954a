"""The backend side of serving: what a backend is handed to start a guest server, and what it gives back.

A backend that can serve (``ServeBackend``) starts the guest server from a
``ServeRequest`` and returns a ``GuestService`` that says how to reach each
guest port: a ``TCPAddress`` on a network only the host can reach (a
container on an internal Docker network) or an in-process ``Handler`` (the
Wasm handler bridge: one request, one call into the live instance). The
guest's output goes to a ``LogBuffer``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from playground.core.limits import ResolvedLimits
from playground.core.output import Stream
from playground.core.pack import Pack
from playground.core.result import Outcome
from playground.core.spec import Spec
from playground.core.vfs import VFS

#: Request or response headers as (name, value) pairs; repeated names are kept.
Headers = Sequence[tuple[str, str]]
#: ``async (method, path_qs, headers, body) -> (status, headers, body)``: one request, one call.
Handler = Callable[[str, str, Headers, bytes], Awaitable[tuple[int, Headers, bytes]]]


@dataclass(frozen=True, slots=True)
class TCPAddress:
    """Where the host reaches a guest port: an address only the host can reach."""

    host: str
    port: int


Upstream = TCPAddress | Handler


class LogBuffer:
    """The service's stdout/stderr as a bounded ring of bytes; never stops the guest.

    Thread-safe: the guest's worker appends, anyone reads.
    """

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Stream, bytes], None]] = []

    def write(self, stream: Stream, data: bytes) -> int:
        data = bytes(data)
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            while self._size > self._max and self._chunks:
                dropped = self._chunks.popleft()
                self._size -= len(dropped)
                self._dropped += len(dropped)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(stream, data)
        return len(data)

    def write_stdout(self, data: bytes) -> int:
        return self.write(Stream.STDOUT, data)

    def write_stderr(self, data: bytes) -> int:
        return self.write(Stream.STDERR, data)

    def subscribe(self, listener: Callable[[Stream, bytes], None]) -> None:
        """Also call ``listener`` with every chunk from now on (on the writing thread)."""
        with self._lock:
            self._listeners.append(listener)

    def text(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")

    @property
    def dropped(self) -> int:
        """Bytes that fell off the front of the ring."""
        with self._lock:
            return self._dropped


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeRequest:
    """What the core hands a backend to start a guest server.

    Guest output goes to ``logs`` (a ring, never a cap). ``limits`` apply to
    the guest (memory, files; ``wall_time`` bounds each handler call on the
    handler bridge); the service's life is bounded by ``ServeOpts.ttl``.
    """

    pack: Pack
    spec: Spec
    limits: ResolvedLimits
    vfs: VFS
    logs: LogBuffer
    stdin: bytes
    ports: tuple[int, ...]


@runtime_checkable
class GuestService(Protocol):
    """A running guest server inside a backend."""

    def upstream(self, guest_port: int) -> Upstream:
        """How the proxy reaches ``guest_port``: a private TCP address or a handler."""
        ...

    async def wait(self) -> Outcome:
        """Return when the guest exits on its own (or raise the limit it hit)."""
        ...

    async def stop(self) -> None:
        """Stop the guest and free everything. Idempotent."""
        ...


@runtime_checkable
class ServeBackend(Protocol):
    """Optional backend extension: backends that can run servers."""

    def serve_unavailable_reason(self, pack: Pack) -> str | None: ...

    async def serve(self, request: ServeRequest) -> GuestService: ...
