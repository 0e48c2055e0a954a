"""``playground images``: which Docker image each language uses, and ``images build`` to make them.

``images build [PACK...]`` builds ``playground-<pack>:local`` from Debian
packages with the shell script shipped in ``playground.resources`` (it needs
root and a daemon; its own output is the progress). The Docker backend picks
those images by itself when a pack's official image is absent, so nothing has
to be configured afterwards, and an MCP client that passes no environment
finds them too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable

from playground.cli import exitcodes
from playground.core import PREFER_WASM, Diagnosable, Diagnostic, Policy, Sandbox
from playground.resource_files import resource_path

SandboxFactory = Callable[[Policy], Sandbox]
IMAGE_LINE = "docker image for "


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("images", help="the Docker images each language uses; 'images build' makes local ones")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    b = verbs.add_parser("build", help="build playground-<pack>:local images from Debian packages (root)")
    b.add_argument("packs", nargs="*", metavar="PACK", help="which (default: bash node)")
    b.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    p.set_defaults(handler=images_command)


def images_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    if args.verb == "build":
        return build(args.packs, force=args.force)
    return show(make_sandbox)


def build(packs: list[str], *, force: bool) -> int:
    script = resource_path("images", "build.sh")
    if not script.is_file():
        print(f"playground images: the image builder {script} is missing from this installation", file=sys.stderr)
        return exitcodes.SANDBOX_ERROR
    argv = ["bash", str(script), *(["--force"] if force else []), *packs]
    try:
        return subprocess.run(argv, check=False).returncode
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED


def show(make_sandbox: SandboxFactory) -> int:
    sandbox = make_sandbox(PREFER_WASM)
    try:
        docker = sandbox.backends.get("docker")
        lines: list[Diagnostic] = docker.diagnostics() if isinstance(docker, Diagnosable) else []
    finally:
        sandbox.close()
    images = [d for d in lines if d.name.startswith(IMAGE_LINE)]
    if not images:
        reason = "; ".join(d.detail for d in lines) or "no Docker backend"
        print(f"playground images: no Docker engine to ask ({reason})", file=sys.stderr)
        return exitcodes.SANDBOX_ERROR
    for line in images:
        mark = "ok  " if line.ok else "MISS"
        print(f"[{mark}] {line.name.removeprefix(IMAGE_LINE)}: {line.detail}")
        if not line.ok and line.hint:
            print(f"       fix: {line.hint}")
    return 0 if all(d.ok for d in images) else 1
