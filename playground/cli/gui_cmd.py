"""``playground gui`` (and bare ``playground``): open the desktop window."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping

from playground.cli import exitcodes
from playground.cli.pool_flag import add_pool_flag
from playground.core import PREFER_WASM, Policy, Sandbox

SandboxFactory = Callable[[Policy], Sandbox]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("gui", help="open the desktop playground window (the default)")
    add_pool_flag(p)
    p.set_defaults(handler=gui_command)


def missing_display(env: Mapping[str, str], platform: str = sys.platform) -> str | None:
    """Why Qt could not open a window here, or None. Qt itself would abort with a cryptic message."""
    if not platform.startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return ("no display: neither DISPLAY nor WAYLAND_DISPLAY is set. Run it in a desktop session "
            "(or set QT_QPA_PLATFORM=offscreen to run headless).")


def gui_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    why = missing_display(os.environ)
    if why is not None:
        print(f"playground gui: {why}", file=sys.stderr)
        return exitcodes.USAGE
    from playground.app import run_gui

    pool = getattr(args, "docker_pool", None)  # absent when gui is the default command
    if pool is None:
        return run_gui(lambda: make_sandbox(PREFER_WASM))
    return run_gui(lambda: make_sandbox(PREFER_WASM), docker_pool=pool)
