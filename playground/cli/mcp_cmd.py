"""``playground mcp``: serve the sandbox to AI agents over MCP (stdio, or streamable HTTP with a token).

In stdio mode stdout is the protocol channel: this command writes nothing
there itself, and logs and messages go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable

from playground.cli import exitcodes
from playground.cli.limit_flags import argument_type
from playground.cli.pool_flag import add_pool_flag, add_processes_flag
from playground.core import PREFER_WASM, WASM_ONLY, Policy, Sandbox, SandboxError, parse_duration, parse_size

SandboxFactory = Callable[[Policy], Sandbox]

TOKEN_ENV = "PLAYGROUND_MCP_TOKEN"
DEFAULT_PORT = 8765


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the sandbox to AI agents over MCP (stdio by default)",
        description="Run an MCP server with the tools execute_code, eval_session, close_session and "
        "list_languages. By default it speaks MCP over stdin/stdout, which is what Claude Desktop, "
        "Cursor and other MCP clients launch. With --http it serves streamable HTTP on 127.0.0.1 and "
        f"requires a bearer token (--token, or ${TOKEN_ENV}, or a generated one printed to stderr). "
        "Agents may request limits up to the --max-* values and never above them.",
    )
    p.add_argument("--max-timeout", type=argument_type(parse_duration), default=60.0, metavar="DURATION",
                   help="highest wall-time limit an agent may request, e.g. 30s (default 60s)")
    p.add_argument("--max-memory", type=argument_type(parse_size), default=512 << 20, metavar="SIZE",
                   help="highest memory limit an agent may request, e.g. 256M (default 512M)")
    p.add_argument("--max-output", type=argument_type(parse_size), default=4 << 20, metavar="SIZE",
                   help="highest stdout+stderr cap an agent may request (default 4M)")
    p.add_argument("--languages", type=_names, default=(), metavar="LIST",
                   help="comma-separated languages agents may use, e.g. py,js (default: all installed)")
    p.add_argument("--wasm-only", action="store_true",
                   help="run everything on the Wasm backend, never in containers (policy WASM_ONLY)")
    p.add_argument("--max-sessions", type=_positive, default=8, metavar="N",
                   help="REPL sessions open at once (default 8)")
    p.add_argument("--max-concurrent", type=_positive, default=4, metavar="N",
                   help="programs running at once; further calls wait (default 4)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on with --http (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=DEFAULT_PORT,
                   help=f"port to listen on with --http (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--token", help=f"bearer token for --http (prefer ${TOKEN_ENV}: arguments are visible to "
                   "other local users); generated when neither is given")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow --host to be a non-loopback address (exposes the server to the network)")
    add_pool_flag(p)
    add_processes_flag(p)
    p.set_defaults(handler=mcp_command)


def _names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError("give at least one language, e.g. py,js")
    return names


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}") from None
    if not 0 <= value < 65536:
        raise argparse.ArgumentTypeError("a port is 0-65535")
    return value


def _say(message: str) -> None:
    print(f"playground mcp: {message}", file=sys.stderr, flush=True)


def mcp_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    from playground.mcp import HttpOptions, ServerConfig, build_server, generate_token, run_http, run_stdio

    try:
        config = ServerConfig(
            max_timeout=args.max_timeout, max_memory=args.max_memory, max_output=args.max_output,
            policy=WASM_ONLY if args.wasm_only else PREFER_WASM, languages=args.languages,
            max_sessions=args.max_sessions, max_concurrent=args.max_concurrent,
        )
    except (ValueError, SandboxError) as exc:
        _say(str(exc))
        return exitcodes.USAGE
    options: HttpOptions | None = None
    generated = False
    if args.http:
        token = args.token or os.environ.get(TOKEN_ENV, "")
        if not token:
            token, generated = generate_token(), True
        try:
            options = HttpOptions(token=token, host=args.host, port=args.port, allow_remote=args.allow_remote)
        except ValueError as exc:
            _say(str(exc))
            return exitcodes.USAGE

    sandbox = make_sandbox(config.policy)
    try:
        try:
            server = build_server(sandbox, config)
        except SandboxError as exc:  # UnknownLanguage in --languages
            _say(f"--languages: {exc}")
            return exitcodes.USAGE
        if options is None:
            asyncio.run(run_stdio(server))
            return 0

        def ready(url: str) -> None:
            # The address line says the server is ready: whoever waits for it has the token by then.
            if generated:
                _say(f"bearer token (send 'Authorization: Bearer <token>'): {options.token}")
            _say(f"serving MCP over streamable HTTP at {url}")

        try:
            asyncio.run(run_http(server, options, on_ready=ready))
        except OSError as exc:
            _say(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
            return exitcodes.SANDBOX_ERROR
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        sandbox.close()
