"""Errors of the serve proxy; they live in the core (``Sandbox.serve`` raises them too).

SandboxError
├── ServeError                 serving failed (outcome)
│   └── ServiceNotReady        the readiness probe never passed; no URL was handed out
└── InvalidSpec
    └── InvalidServeOptions    (also ValueError) a ServeOpts/ProxyConfig value is out of range
"""

from playground.core.errors import InvalidServeOptions, ServeError, ServiceNotReady

__all__ = ["InvalidServeOptions", "ServeError", "ServiceNotReady"]
