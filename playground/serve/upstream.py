"""What the reverse proxy forwards to: a TCP address or an in-process handler."""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.serve import Handler, Headers
from playground.serve.errors import InvalidServeOptions

__all__ = ["Handler", "HandlerUpstream", "Headers", "TCPUpstream", "Upstream"]

@dataclass(frozen=True, slots=True, kw_only=True)
class TCPUpstream:
    """A guest server reachable at ``host:port`` (e.g. a container's address on its internal network)."""

    host: str
    port: int

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host or "/" in self.host:
            raise InvalidServeOptions(f"upstream host must be an address, got {self.host!r}")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise InvalidServeOptions(f"upstream port out of range: {self.port!r}")

    @property
    def authority(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerUpstream:
    """A guest reached by calling ``handler`` in-process (the Wasm handler bridge).

    The proxy calls the handler on its event loop, at most ``max_connections``
    calls at once; the handler must not block the loop (run guest code in a
    worker thread). The request body is complete and within
    ``max_request_body``; the returned body counts against
    ``max_response_body``.
    """

    handler: Handler
    name: str = "handler"

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise InvalidServeOptions("handler must be an async callable")

    @property
    def authority(self) -> str:
        return self.name


Upstream = TCPUpstream | HandlerUpstream
