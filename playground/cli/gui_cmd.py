"""``playground gui`` (and bare ``playground``): open the desktop window."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from playground.core import PREFER_WASM, Policy, Sandbox

SandboxFactory = Callable[[Policy], Sandbox]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("gui", help="open the desktop playground window (the default)")
    p.set_defaults(handler=gui_command)


def gui_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    from playground.app import run_gui

    return run_gui(lambda: make_sandbox(PREFER_WASM))
