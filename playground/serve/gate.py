"""The reverse proxy's admission of one request: its guards, in order, and the refusal each answers.

:meth:`RequestGate.check` runs: header size (431), bearer token (sorts the
request into the authenticated or the unauthenticated class), probation
(503: a connection over ``max_connections`` whose request lacks the token),
rate limit of that class per client (429), ``Host`` header (421), missing
or wrong token (401), request target (400), body size by
``Content-Length`` (413). The connection cap itself is
:mod:`playground.serve.connections`'.

Why authentication comes before the rate limit: every local client has the
same address (127.0.0.1), so a limit that does not know who is asking lets
anyone who can reach the port spend the token holder's share.
Unauthenticated requests therefore draw from their own buckets (a flood of
them is answered 429 and its connections are closed), and only requests
with the right token draw from the token holder's. Every refusal of a
request without the right token closes its connection, so unauthenticated
clients cannot sit on connection slots with keep-alive.

Threads and loops: a gate belongs to its proxy's loop.
"""

from __future__ import annotations

from aiohttp import web

from playground.serve.config import ProxyConfig
from playground.serve.connections import ProxyConnection
from playground.serve.guards import CHALLENGE, BearerCheck, RateLimiter, allowed_hosts, host_ok
from playground.serve.responses import closing, plain

__all__ = ["RequestGate"]


class RequestGate:
    """The guards of one proxy: its token check, its two rate limiters and its accepted ``Host`` names.

    ``token`` None means no authentication. Until :meth:`listening_on` is
    called no ``Host`` is accepted.
    """

    def __init__(self, config: ProxyConfig, token: str | None) -> None:
        self._config = config
        self._bearer = BearerCheck(token) if token else None
        # Separate buckets: unauthenticated traffic can only ever exhaust its own (see the module docstring).
        self._limiter = RateLimiter(config.rate, config.burst)
        self._anon_limiter = RateLimiter(config.rate, config.burst)
        self._allowed: frozenset[str] = frozenset()

    @property
    def authenticates(self) -> bool:
        """Whether requests must carry the bearer token (and the proxy strips ``Authorization``)."""
        return self._bearer is not None

    def listening_on(self, port: int) -> None:
        """Accept the ``Host`` names of ``port`` (the bound one) from now on."""
        self._allowed = allowed_hosts(port, self._config.bind, self._config.extra_hosts)

    def check(self, request: web.BaseRequest, client: str, connection: object) -> tuple[web.Response, str] | None:
        """The refusal for ``request`` and its access-log note, or None to forward it.

        ``connection`` is the request's protocol; a :class:`ProxyConnection`
        is marked ``trusted`` once a request on it carries the token.
        """
        cfg = self._config
        head = len(request.method) + len(request.raw_path) + 12
        head += sum(len(k) + len(v) + 4 for k, v in request.raw_headers)
        if head > cfg.max_header_bytes:
            return plain(431, f"request headers exceed {cfg.max_header_bytes} bytes"), "header cap"
        problem = self._bearer.check(request.headers.get("Authorization")) if self._bearer is not None else None
        trusted = problem is None
        probation = isinstance(connection, ProxyConnection) and connection.probation
        if trusted and isinstance(connection, ProxyConnection):
            connection.trusted = True
        elif probation:
            resp = plain(503, "too many connections")
            resp.headers["Retry-After"] = "1"
            return closing(resp), "over max_connections without the token"
        wait = (self._limiter if trusted else self._anon_limiter).take(client)
        if wait:
            resp = plain(429, "rate limit exceeded")
            resp.headers["Retry-After"] = RateLimiter.retry_after(wait)
            return (resp, "rate limited") if trusted else (closing(resp), f"rate limited, auth {problem}")
        if not host_ok(request.headers.get("Host"), self._allowed):
            resp = plain(421, "this proxy does not serve that Host")
            return (resp if trusted else closing(resp)), "host mismatch"
        if problem is not None:
            resp = plain(401, "bearer token required")
            challenge = CHALLENGE if problem == "missing" else f'{CHALLENGE}, error="invalid_token"'
            resp.headers["WWW-Authenticate"] = challenge
            return closing(resp), f"auth {problem}"
        if not request.raw_path.startswith("/"):
            return plain(400, "only origin-form request targets are served"), "bad target"
        length = request.content_length
        if length is not None and length > cfg.max_request_body:
            return plain(413, f"request body exceeds {cfg.max_request_body} bytes"), "body cap"
        return None
