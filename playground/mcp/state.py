"""``ServerState``: what the server lifespan owns, and the one place it is opened and closed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from playground.core import Sandbox, SessionManager
from playground.mcp.config import ServerConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerState:
    """Shared by every request of one server run.

    ``allowed`` holds the canonical names of the languages the user enabled
    (every registered pack when the user named none). ``gate`` bounds how
    many guests run at once; further calls wait their turn.
    """

    sandbox: Sandbox
    config: ServerConfig
    sessions: SessionManager
    gate: asyncio.Semaphore
    allowed: frozenset[str]


@asynccontextmanager
async def open_state(sandbox: Sandbox, config: ServerConfig, allowed: frozenset[str]) -> AsyncIterator[ServerState]:
    """Create the session manager on the running loop; on exit shut it down and close ``sandbox``.

    Ownership: ``sandbox`` belongs to the state from entry on; it is closed
    on exit even when shutting the sessions down fails. Cancellation: exit
    runs in full (the manager's shutdown only awaits its own reaper task).
    """
    sessions = SessionManager(
        sandbox,
        max_sessions=config.max_sessions,
        idle_timeout=config.session_idle_timeout,
    )
    state = ServerState(
        sandbox=sandbox,
        config=config,
        sessions=sessions,
        gate=asyncio.Semaphore(config.max_concurrent),
        allowed=allowed,
    )
    log.info("playground MCP server ready: %s", config.describe())
    try:
        yield state
    finally:
        try:
            await sessions.shutdown()
        finally:
            sandbox.close()
            log.info("playground MCP server stopped")
