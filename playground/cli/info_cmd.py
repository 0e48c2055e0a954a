"""``playground languages`` and ``playground doctor``: what can run here, and how to fix what cannot."""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable

from playground.cli.pool_flag import WORKER_MEMORY, default_processes
from playground.core import PREFER_WASM, Diagnosable, Diagnostic, Policy, Sandbox

SandboxFactory = Callable[[Policy], Sandbox]


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("languages", help="list languages and where each can run")
    p.set_defaults(handler=languages_command)
    p = sub.add_parser("doctor", help="check Python, backends, runtimes and caches, with fix hints")
    p.set_defaults(handler=doctor_command)


def render_table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def languages_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    sandbox = make_sandbox(PREFER_WASM)
    try:
        sandbox.refresh_availability()  # a command may wait for the daemon's answer; the window never does
        rows = [["language", "aliases", "extensions", "runs on"]]
        for name in sandbox.languages():
            status = sandbox.status(name)
            where = status.backend if status.backend is not None else "unavailable: " + status.why_not
            pack = status.pack
            rows.append([name, ", ".join(pack.aliases) or "-", " ".join(pack.extensions) or "-", where])
        print(render_table(rows))
        return 0
    finally:
        sandbox.close()


def doctor_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    checks = [_python_check()]
    sandbox = make_sandbox(PREFER_WASM)
    try:
        sandbox.refresh_availability()
        for backend in sandbox.backends.values():
            if isinstance(backend, Diagnosable):
                checks.extend(backend.diagnostics())
            else:
                checks.append(Diagnostic(name=f"{backend.name} backend", ok=True, detail="registered"))
        runnable = [n for n in sandbox.languages() if sandbox.status(n).backend is not None]
        checks.append(
            Diagnostic(
                name="languages",
                ok=bool(runnable),
                detail=f"{len(runnable)} of {len(sandbox.languages())} can run: {', '.join(runnable) or 'none'}",
                hint="" if runnable else "see 'playground languages' for the reasons",
            )
        )
    finally:
        sandbox.close()
    checks.append(_mcp_workers_check())
    for check in checks:
        mark = "ok  " if check.ok else "FAIL" if check.required else "warn"
        print(f"[{mark}] {check.name}: {check.detail}")
        if check.hint and not check.ok:
            print(f"       fix: {check.hint}")
    return 0 if all(c.ok or not c.required for c in checks) else 1


def _mcp_workers_check() -> Diagnostic:
    """What ``playground mcp`` will spend on Wasm worker processes by default (this command's sandbox has none)."""
    count = default_processes()
    if count:
        detail = (
            f"playground mcp runs overlapping calls in {count} Wasm worker processes, started when two calls "
            f"first overlap ({WORKER_MEMORY}; --wasm-processes N, 0: none)"
        )
    else:
        detail = "playground mcp starts none by default: this process may use one CPU (--wasm-processes N)"
    return Diagnostic(name="mcp worker processes", ok=True, required=False, detail=detail)


def _python_check() -> Diagnostic:
    ok = sys.version_info >= (3, 11)
    return Diagnostic(
        name="python",
        ok=ok,
        detail=f"{platform.python_implementation()} {platform.python_version()} at {sys.executable}",
        hint="" if ok else "install Python 3.11 or newer",
    )
