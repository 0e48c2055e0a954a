"""``playground``: run | repl | serve | doctor | mcp | languages | gui | setup | images | install-desktop.

Only the CLI prints. Every sub-command gets a factory for the ``Sandbox``
it uses, so tests can hand it one with a fake backend.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from collections.abc import Callable, Sequence

from playground.cli import (
    desktop_cmd,
    exitcodes,
    gui_cmd,
    images_cmd,
    info_cmd,
    mcp_cmd,
    repl_cmd,
    run_cmd,
    serve_cmd,
    setup_cmd,
)
from playground.core import Policy, Sandbox

SandboxFactory = Callable[[Policy], Sandbox]

#: Sub-commands that later work fills in; until then they say so plainly.
NOT_YET: dict[str, str] = {}


def _default_factory(policy: Policy, docker_pool: int | None = None, wasm_processes: int = 0) -> Sandbox:
    from playground.assembly import default_sandbox

    return default_sandbox(policy=policy, docker_pool=docker_pool, wasm_processes=wasm_processes)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="playground",
        description="Run untrusted or AI-generated code without it touching your machine.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the sandbox does")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_cmd.add_parser(sub)
    repl_cmd.add_parser(sub)
    info_cmd.add_parsers(sub)
    serve_cmd.add_parser(sub)
    mcp_cmd.add_parser(sub)
    gui_cmd.add_parser(sub)
    setup_cmd.add_parser(sub)
    desktop_cmd.add_parsers(sub)
    images_cmd.add_parser(sub)
    for name, what in NOT_YET.items():
        p = sub.add_parser(name, help=f"{what} (not available in this version yet)")
        p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        p.set_defaults(handler=_not_yet, what=what)
    return parser


def _not_yet(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    print(
        f"playground {args.command} ({args.what}) is not available in this version yet. "
        "Available now: run, repl, serve, languages, doctor, mcp, gui.",
        file=sys.stderr,
    )
    return exitcodes.USAGE


def main(argv: Sequence[str] | None = None, *, make_sandbox: SandboxFactory | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    guest_args: list[str] = []
    if "--" in argv:  # everything after -- belongs to the guest program, options included
        split = argv.index("--")
        argv, guest_args = argv[:split], argv[split + 1 :]
    args = parser.parse_args(argv)
    args.guest_args = guest_args
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(name)s: %(message)s")
    if args.command is None:
        args.command = "gui"
        args.handler = gui_cmd.gui_command
    handler: Callable[[argparse.Namespace, SandboxFactory], int] = args.handler
    if make_sandbox is None:
        pool: int | None = getattr(args, "docker_pool", None)
        processes: int = getattr(args, "wasm_processes", 0)
        make_sandbox = _default_factory
        if pool is not None and processes:
            make_sandbox = functools.partial(_default_factory, docker_pool=pool, wasm_processes=processes)
        elif pool is not None:
            make_sandbox = functools.partial(_default_factory, docker_pool=pool)
        elif processes:
            make_sandbox = functools.partial(_default_factory, wasm_processes=processes)
    return handler(args, make_sandbox)


def entry() -> None:
    sys.exit(main())
