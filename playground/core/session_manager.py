"""``SessionManager``: many sessions for many clients, with caps, reaping and a clean shutdown.

The MCP server and the GUI hold sessions through a manager so that a
forgetful client cannot pile up interpreters: the number of sessions is
capped, idle and over-age sessions are reaped by a background task, and
``shutdown()`` closes everything and refuses new work. Bound to the event
loop that first uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace

from playground.core.errors import InvalidSpec, ManagerClosed, SessionNotFound, TooManySessions
from playground.core.limits import Limits
from playground.core.sandbox import Sandbox
from playground.core.session import Session, SessionConfig

log = logging.getLogger(__name__)


class SessionManager:
    """Creates, finds and reaps sessions of one ``Sandbox``.

    Defaults (seed): 64 sessions, 5 min idle, 1 h lifetime, reaped every 10 s.
    A config's own ``idle_timeout``/``max_lifetime`` win over these.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_sessions: int = 64,
        idle_timeout: float = 300.0,
        max_lifetime: float = 3600.0,
        reap_interval: float = 10.0,
        default_limits: Limits | None = None,
        auto_restart: bool = False,
    ) -> None:
        if max_sessions < 1 or idle_timeout <= 0 or max_lifetime <= 0 or reap_interval <= 0:
            raise ValueError("session manager limits must be positive")
        self._sandbox = sandbox
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.max_lifetime = max_lifetime
        self.reap_interval = reap_interval
        self.default_limits = default_limits
        self.auto_restart = auto_restart
        self._sessions: dict[str, Session] = {}
        self._starting = 0
        self._closed = False
        self._reaper: asyncio.Task[None] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def count(self) -> int:
        return len(self._sessions)

    def ids(self) -> list[str]:
        return list(self._sessions)

    async def create(self, lang: str, config: SessionConfig | None = None) -> Session:
        """Start a session with the manager's defaults filled in.

        Raises:
            ManagerClosed: after ``shutdown()``.
            TooManySessions: ``max_sessions`` are alive (or starting).
            InvalidSpec: the requested id is already in use.
            Everything ``Sandbox.new_session`` raises.
        """
        if self._closed:
            raise ManagerClosed("the session manager is shut down")
        self.reap()
        config = config or SessionConfig(auto_restart=self.auto_restart)
        if config.id and config.id in self._sessions:
            raise InvalidSpec(f"session id {config.id!r} is already in use")
        if len(self._sessions) + self._starting >= self.max_sessions:
            raise TooManySessions(f"at most {self.max_sessions} sessions may be open at once")
        limits = self.default_limits.merged(config.limits) if self.default_limits else config.limits
        config = replace(
            config,
            limits=limits,
            idle_timeout=config.idle_timeout if config.idle_timeout is not None else self.idle_timeout,
            max_lifetime=config.max_lifetime if config.max_lifetime is not None else self.max_lifetime,
        )
        self._starting += 1
        try:
            session = await self._sandbox.new_session(lang, config)
        finally:
            self._starting -= 1
        if self._closed:
            session.close()
            raise ManagerClosed("the session manager was shut down while the session started")
        if session.id in self._sessions:
            session.close()
            raise InvalidSpec(f"session id {session.id!r} is already in use")
        self._sessions[session.id] = session
        self._ensure_reaper()
        return session

    def get(self, session_id: str) -> Session:
        """The live session with this id.

        Raises:
            ManagerClosed: after ``shutdown()``.
            SessionNotFound: no such session (never existed, closed or reaped).
        """
        if self._closed:
            raise ManagerClosed("the session manager is shut down")
        self.reap()
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r} (closed, reaped, or never created)")
        return session

    def close(self, session_id: str) -> None:
        """Close and forget one session.

        Raises:
            SessionNotFound: no such session.
        """
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        session.close()

    def reap(self) -> list[str]:
        """Close sessions that are idle too long, too old, or no longer usable; return their ids."""
        reaped = []
        for session_id, session in list(self._sessions.items()):
            why = session.expired() or (None if session.alive else "dead")
            if why is None:
                continue
            log.info("reaping session %s: %s", session_id, why)
            self._sessions.pop(session_id, None)
            session.close()
            reaped.append(session_id)
        return reaped

    def _ensure_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever(), name="session-reaper")

    async def _reap_forever(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.reap_interval)
            self.reap()

    async def shutdown(self) -> None:
        """Close every session, stop the reaper, refuse new work. Idempotent."""
        self._closed = True
        reaper, self._reaper = self._reaper, None
        if reaper is not None:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
        sessions, self._sessions = self._sessions, {}
        for session in sessions.values():
            session.close()

    async def __aenter__(self) -> SessionManager:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()
