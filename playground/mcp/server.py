"""``build_server``: the ``MCPServer`` with the four tools, its lifespan, and the stdio runner."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from playground.core import Sandbox
from playground.mcp import tools
from playground.mcp.config import ServerConfig
from playground.mcp.inputs import strict_tool
from playground.mcp.state import ServerState, open_state

log = logging.getLogger(__name__)

SERVER_NAME = "playground"

INSTRUCTIONS = """\
Sandbox Playground runs code in an isolated sandbox on the user's machine: no network, no access to \
the user's files or environment, hard limits on time, memory and output. Use execute_code for one-off \
runs (nothing persists between calls) and eval_session for a REPL whose state persists across calls. \
Call list_languages to see the languages, their availability and the highest limits you may request. \
A limit that stops a program is reported in the result ('limit_exceeded'), not as an error. \
Server limits: {limits}."""


def resolve_languages(sandbox: Sandbox, names: tuple[str, ...]) -> frozenset[str]:
    """Canonical names for an allowed list of names or aliases; every pack when ``names`` is empty.

    Raises:
        UnknownLanguage: a name matches no registered pack.
    """
    if not names:
        return frozenset(sandbox.languages())
    return frozenset(sandbox.pack(name).name for name in names)


def build_server(sandbox: Sandbox, config: ServerConfig) -> MCPServer[ServerState]:
    """An MCP server exposing ``sandbox`` under ``config``'s ceilings.

    Ownership: the server's lifespan takes ``sandbox`` over and closes it
    (and every REPL session) when the server stops. Run the result once.

    Raises:
        UnknownLanguage: ``config.languages`` names a language the sandbox does not have.
    """
    allowed = resolve_languages(sandbox, config.languages)

    @asynccontextmanager
    async def lifespan(_: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        async with open_state(sandbox, config, allowed) as state:
            yield state

    sandboxed = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                open_world_hint=False)
    # Registered through strict_tool: unknown, mistyped, null and NaN arguments are refused (inputs.py).
    registered = [
        strict_tool(tools.execute_code, title="Run code in the sandbox",
                    annotations=sandboxed.model_copy(update={"title": "Run code in the sandbox"})),
        strict_tool(tools.eval_session, title="Evaluate code in a REPL session",
                    annotations=sandboxed.model_copy(update={"title": "Evaluate code in a REPL session"})),
        strict_tool(tools.close_session, title="Close a REPL session",
                    annotations=sandboxed.model_copy(update={"title": "Close a REPL session",
                                                             "idempotent_hint": True})),
        strict_tool(tools.list_languages, title="List languages",
                    annotations=ToolAnnotations(title="List languages", read_only_hint=True,
                                                idempotent_hint=True, open_world_hint=False)),
    ]
    server: MCPServer[ServerState] = MCPServer(
        SERVER_NAME,
        title="Sandbox Playground",
        instructions=INSTRUCTIONS.format(limits=config.describe()),
        version=_version(),
        lifespan=lifespan,
        log_level="WARNING",
        tools=registered,
    )
    return server


async def run_stdio(server: MCPServer[ServerState]) -> None:
    """Serve over this process's stdin/stdout until the client closes stdin.

    While serving, the SDK points fd 1 at stderr, so stray writes from any
    library cannot corrupt the protocol stream. Cancellation: the lifespan
    exits in full (sessions shut down, the sandbox closed).
    """
    await server.run_stdio_async()


def _version() -> str:
    try:
        return version("sandbox-playground")
    except PackageNotFoundError:
        return "0"
