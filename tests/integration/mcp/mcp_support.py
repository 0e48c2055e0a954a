"""Helpers for the MCP tests: start `playground mcp` in a subprocess and drive it with the SDK client.

This folder has no `__init__.py` on purpose: as a package named `mcp` it would shadow the SDK.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

ROOT = Path(__file__).resolve().parents[3]
PLAYGROUND = ROOT / ".venv" / "bin" / "playground"


def real_server(*flags: str) -> StdioServerParameters:
    """``playground mcp`` exactly as a desktop client launches it (the venv's console script)."""
    return StdioServerParameters(command=str(PLAYGROUND), args=["mcp", *flags], env=_passthrough())


def fake_server(*flags: str) -> StdioServerParameters:
    """The real CLI and server on the scripted fake backend of ``fake_server.py``."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.integration.mcp.fake_server", "mcp", *flags],
        cwd=str(ROOT),
        env={"PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", **_passthrough()},
    )


def _passthrough() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("PLAYGROUND_CACHE_DIR", "XDG_CACHE_HOME")}


@asynccontextmanager
async def connect(params: StdioServerParameters) -> AsyncIterator[Client]:
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(tool, arguments)


def error_text(result: CallToolResult) -> str:
    assert result.is_error, f"expected a tool error, got {result.structured_content!r}"
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def ok(result: CallToolResult) -> dict[str, Any]:
    if result.is_error:
        block = result.content[0]
        raise AssertionError(f"tool error: {block.text if isinstance(block, TextContent) else block!r}")
    assert isinstance(result.structured_content, dict)
    return result.structured_content
