"""The MCP server: lets AI agents run code in the sandbox through the official ``mcp`` SDK.

``build_server(sandbox, config)`` gives an ``MCPServer`` with the tools
``execute_code``, ``eval_session``, ``close_session`` and ``list_languages``;
``run_stdio`` serves it over stdin/stdout, ``run_http`` over streamable HTTP
behind ``AccessGuard`` (loopback, bearer token, Host/Origin checks).
``playground mcp`` wires these to command-line flags.
"""

from playground.mcp.config import ServerConfig
from playground.mcp.http_transport import (
    MCP_PATH,
    AccessGuard,
    HttpOptions,
    build_app,
    generate_token,
    is_loopback,
    run_http,
)
from playground.mcp.results import (
    AppliedLimits,
    CloseOutput,
    LanguageInfo,
    LanguagesOutput,
    OutFile,
    RunOutput,
    SessionOutput,
    UsageInfo,
)
from playground.mcp.server import build_server, resolve_languages, run_stdio
from playground.mcp.state import ServerState

__all__ = [
    "MCP_PATH",
    "AccessGuard",
    "AppliedLimits",
    "CloseOutput",
    "HttpOptions",
    "LanguageInfo",
    "LanguagesOutput",
    "OutFile",
    "RunOutput",
    "ServerConfig",
    "ServerState",
    "SessionOutput",
    "UsageInfo",
    "build_app",
    "build_server",
    "generate_token",
    "is_loopback",
    "resolve_languages",
    "run_http",
    "run_stdio",
]
