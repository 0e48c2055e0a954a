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
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

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


_progress_lock = threading.Lock()


def progress_line(line: str) -> None:
    """One progress line on stderr, whole: languages set up side by side print from several threads."""
    with _progress_lock:
        sys.stderr.write(f"playground: {line.strip()}\n")
        sys.stderr.flush()


def prepare_language(sandbox: Sandbox, lang: str, spec: Spec | None = None, *, complete: bool = False) -> bool:
    """Provision ``lang``'s runtime if it is missing; False (and a message) if that failed.

    With ``spec``, the runtime that program needs (a variant such as Python's
    scientific runtime when it imports numpy). An unknown language is left
    to the command itself, which says so in its own words. ``complete``
    (``setup``): also the snapshots a first run would build for itself.
    """
    try:
        sandbox.pack(lang)
    except SandboxError:
        return True
    try:
        sandbox.prepare(lang, progress_line, spec=spec, complete=complete)
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
            sandbox.prepare_pack(status.pack, progress_line, complete=True)
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            ok = False
    return ok


def _prepare_side_by_side(sandbox: Sandbox, languages: list[str]) -> list[str]:
    """``prepare_language`` for every language at once; the ones that failed, in the given order.

    Why at once: a set-up is mostly waiting, on downloads and on zig,
    which compiles each runtime on one core. One after the other, a new
    machine took 105 s (QuickJS 45 s and Lua 35 s of compiling, the Lua
    sdist 12 s to download); side by side the two builds took 57 s
    together. Languages that share a runtime build it once
    (``provision``'s lock per runtime). Every progress line names its
    runtime, so interleaved lines still read.
    """
    with ThreadPoolExecutor(max_workers=max(1, len(languages)), thread_name_prefix="setup") as pool:
        done = list(pool.map(lambda lang: prepare_language(sandbox, lang, complete=True), languages))
    return [lang for lang, ok in zip(languages, done, strict=True) if not ok]


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
        failed = _prepare_side_by_side(sandbox, wanted)
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
