"""The host-side reverse proxy that exposes one guest service port.

``start_proxy(ProxyConfig(...), TCPUpstream(...) | HandlerUpstream(...))``
probes the upstream, then listens (127.0.0.1 by default) behind bearer-token
auth, a Host check, per-client rate limits and size/time caps, and returns a
``RunningProxy``. A service with several ports runs one proxy per port;
``start_service_proxy`` is the ``ProxyStarter`` that ``Sandbox.serve`` is
handed by the assembly point (``playground.assembly``).
"""

from playground.serve.config import (
    ALL_INTERFACES,
    LOOPBACK,
    AuthMode,
    HTTPReady,
    ProxyConfig,
    ReadinessProbe,
    TCPReady,
    generate_token,
)
from playground.serve.errors import InvalidServeOptions, ServeError, ServiceNotReady
from playground.serve.guards import BearerCheck, RateLimiter
from playground.serve.proxy import RunningProxy, StopReason, UpstreamErrorHook, start_proxy
from playground.serve.readiness import wait_ready
from playground.serve.service_proxy import start_service_proxy
from playground.serve.upstream import Handler, HandlerUpstream, Headers, TCPUpstream, Upstream

__all__ = [
    "ALL_INTERFACES",
    "LOOPBACK",
    "AuthMode",
    "BearerCheck",
    "HTTPReady",
    "Handler",
    "HandlerUpstream",
    "Headers",
    "InvalidServeOptions",
    "ProxyConfig",
    "RateLimiter",
    "ReadinessProbe",
    "RunningProxy",
    "ServeError",
    "ServiceNotReady",
    "StopReason",
    "TCPReady",
    "TCPUpstream",
    "Upstream",
    "UpstreamErrorHook",
    "generate_token",
    "start_proxy",
    "start_service_proxy",
    "wait_ready",
]
