"""``playground images``: which Docker image each language uses, and ``images build`` to make them.

``images build [PACK...]`` builds ``playground-<pack>:local`` from Debian
packages with the shell script shipped in ``playground.resources`` (it needs
root and a daemon; its own output is the progress). Which packages is each
pack's data (``DockerSpec.image_packages``): this command hands the script
``NAME=PKG,PKG`` recipes, so the script knows no language. The Docker backend picks
those images by itself when a pack's official image is absent, so nothing has
to be configured afterwards, and an MCP client that passes no environment
finds them too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence

from playground.cli import exitcodes
from playground.core import PREFER_WASM, Diagnosable, Diagnostic, Pack, Policy, Sandbox
from playground.resource_files import resource_path

SandboxFactory = Callable[[Policy], Sandbox]
IMAGE_LINE = "docker image for "
#: What ``images build`` makes when given no pack: the images the test suite's Docker tier needs.
DEFAULT_BUILD = ("bash", "node")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("images", help="the Docker images each language uses; 'images build' makes local ones")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    b = verbs.add_parser("build", help="build playground-<pack>:local images from Debian packages (root)")
    b.add_argument("packs", nargs="*", metavar="PACK", help="which (default: bash node)")
    b.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    p.set_defaults(handler=images_command)


def images_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    if args.verb == "build":
        return build(args.packs, force=args.force, make_sandbox=make_sandbox)
    return show(make_sandbox)


def build(packs: list[str], *, force: bool, make_sandbox: SandboxFactory) -> int:
    script = resource_path("images", "build.sh")
    if not script.is_file():
        print(f"playground images: the image builder {script} is missing from this installation", file=sys.stderr)
        return exitcodes.SANDBOX_ERROR
    sandbox = make_sandbox(PREFER_WASM)
    try:
        recipes = image_recipes(sandbox.packs, packs or list(DEFAULT_BUILD))
    except ValueError as exc:
        print(f"playground images: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    finally:
        sandbox.close()
    argv = ["bash", str(script), *(["--force"] if force else []), *recipes]
    try:
        return subprocess.run(argv, check=False).returncode
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED


def image_recipes(packs: Sequence[Pack], names: Sequence[str]) -> list[str]:
    """``NAME=PKG,PKG`` for each pack name or alias in ``names`` (``DockerSpec.image_packages``).

    An argument that already is ``NAME=PKG,PKG`` (an image no pack names)
    passes through for the script to check.

    Raises:
        ValueError: a name no pack has, or a pack without a local image recipe.
    """
    by_name = {name: pack for pack in packs for name in pack.names}
    buildable = sorted(p.name for p in packs if p.docker is not None and p.docker.image_packages)
    recipes = []
    for name in names:
        if "=" in name:
            recipes.append(name)
            continue
        pack = by_name.get(name)
        if pack is None or pack.docker is None or not pack.docker.image_packages:
            raise ValueError(f"no local image recipe for {name!r} (packs with one: {' '.join(buildable)})")
        recipes.append(f"{pack.name}={','.join(pack.docker.image_packages)}")
    return recipes


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
