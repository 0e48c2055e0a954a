"""Errors of the serve proxy, rooted in ``playground.core.SandboxError``.

SandboxError
├── ServeError                 serving failed (outcome)
│   └── ServiceNotReady        the readiness probe never passed; no URL was handed out
└── InvalidServeOptions        (also ValueError) a ProxyConfig value is out of range
"""

from __future__ import annotations

from playground.core import SandboxError


class ServeError(SandboxError):
    """Serving a guest service failed."""


class ServiceNotReady(ServeError):
    """The readiness probe did not pass before its timeout; the proxy never listened.

    ``target`` names what was probed, ``last_error`` says what the last attempt saw.
    """

    def __init__(self, message: str, *, target: str = "", last_error: str = "") -> None:
        super().__init__(message)
        self.target = target
        self.last_error = last_error


class InvalidServeOptions(SandboxError, ValueError):
    """A ``ProxyConfig`` value is malformed or out of range (a caller mistake)."""
