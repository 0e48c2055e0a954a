"""``playground setup``: fetch and build the Wasm runtimes now, with progress, instead of on first use.

The runtimes are pinned downloads from PyPI (CPython, the TypeScript
transform) and two builds from PyPI sdists (QuickJS with our driver, Lua),
about 30 MB and a minute or two of compiling on a new machine. ``run``,
``repl`` and ``serve`` do the same for one language on its first use
(``prepare_language``), so the first command works either way; this command
is for doing it ahead of time (set-up scripts, before a class, before an
agent's first call).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from playground.cli import exitcodes
from playground.core import PREFER_WASM, Policy, Sandbox, SandboxError, Spec

SandboxFactory = Callable[[Policy], Sandbox]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "setup",
        help="fetch and build the WebAssembly runtimes now (otherwise done on first use)",
        description="Fetch (and where needed compile) the pinned runtimes of the languages that run in "
        "WebAssembly, into the cache ($PLAYGROUND_CACHE_DIR or ~/.cache/sandbox-playground).",
    )
    p.add_argument("languages", nargs="*", metavar="LANG", help="only these languages (default: all)")
    p.add_argument(
        "--scientific", action="store_true",
        help="also set up the languages' heavier runtimes (Python with numpy, pandas, matplotlib: "
        "about 100 MB and a minute or two of compiling; otherwise done when a program first imports them)",
    )
    p.set_defaults(handler=setup_command)


def progress_line(line: str) -> None:
    print(f"playground: {line.strip()}", file=sys.stderr, flush=True)


def prepare_language(sandbox: Sandbox, lang: str, spec: Spec | None = None) -> bool:
    """Provision ``lang``'s runtime if it is missing; False (and a message) if that failed.

    With ``spec``, the runtime that program needs (a variant such as Python's
    scientific runtime when it imports numpy). An unknown language is left
    to the command itself, which says so in its own words.
    """
    try:
        sandbox.pack(lang)
    except SandboxError:
        return True
    try:
        sandbox.prepare(lang, progress_line, spec=spec)
    except SandboxError as exc:
        print(f"playground: {exc}", file=sys.stderr)
        return False
    return True


def prepare_variants(sandbox: Sandbox, lang: str) -> bool:
    """Provision every variant runtime of ``lang`` (``setup --scientific``); False if one failed."""
    ok = True
    for name, status in sandbox.variant_status(lang).items():
        progress_line(f"{lang} ({name} runtime)")
        try:
            sandbox.prepare_pack(status.pack, progress_line)
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            ok = False
    return ok


def setup_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    sandbox = make_sandbox(PREFER_WASM)
    try:
        wanted = args.languages or [p.name for p in sandbox.packs if p.wasm is not None]
        for lang in wanted:
            try:
                sandbox.pack(lang)
            except SandboxError as exc:
                print(f"playground setup: {exc}", file=sys.stderr)
                return exitcodes.USAGE
        failed = [lang for lang in wanted if not prepare_language(sandbox, lang)]
        if args.scientific:
            failed += [lang for lang in wanted if not prepare_variants(sandbox, lang)]
        sandbox.refresh_availability()
        ready = [lang for lang in wanted if sandbox.status(lang).backend is not None]
        ready += [
            f"{lang} ({name})"
            for lang in wanted
            for name, status in sandbox.variant_status(lang).items()
            if status.backend is not None and not sandbox.missing(status.pack)
        ]
        print(f"playground: ready: {', '.join(ready) or 'none'}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        sandbox.close()
