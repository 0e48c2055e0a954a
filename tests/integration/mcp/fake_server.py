"""``playground mcp`` on a scripted fake backend, for protocol-level tests that need no runtime.

Run as ``python -m tests.integration.mcp.fake_server mcp [flags]`` from the
repository root. The language ``fakelang`` (alias ``fl``) interprets one
command per line: ``print TEXT``, ``eprint TEXT``, ``stdin``, ``args``,
``cat PATH``, ``out NAME TEXT``, ``outbin NAME HEX``, ``flood``,
``sleep SECONDS``, ``exit N``, and for guest-chosen bytes that are not
UTF-8 (names decoded with surrogateescape, as the real backends do):
``printhex HEX``, ``eprinthex HEX``, ``outhex NAMEHEX TEXT``,
``quotahex NAMEHEX`` (a filesystem-quota stop whose message quotes the
name) and ``failhex NAMEHEX`` (a sandbox error quoting it). Sessions use the fake interpreter of
``tests/fake_backend.py`` (``set K V``, ``get K``, ``sleep S``, ``die``).
Everything else (CLI, server, tools, transport) is the real code.
"""

from __future__ import annotations

import asyncio
import sys

from playground.cli import main
from playground.core import (
    FSQuotaExceeded,
    Outcome,
    Pack,
    Policy,
    Request,
    Sandbox,
    SandboxError,
    WasmSpec,
)
from tests.fake_backend import FakeSessionBackend

PACK = Pack(name="fakelang", aliases=("fl",), extensions=(".fl",), version="1.0", wasm=WasmSpec(module=None))
NO_SESSIONS = Pack(name="plainlang", aliases=("pl",), wasm=WasmSpec(module=None))


async def guest(req: Request) -> Outcome:
    for line in req.spec.code_bytes.decode().splitlines():
        cmd, _, rest = line.partition(" ")
        if cmd == "print":
            req.output.write_stdout(rest.encode() + b"\n")
        elif cmd == "eprint":
            req.output.write_stderr(rest.encode() + b"\n")
        elif cmd == "stdin":
            req.output.write_stdout(req.stdin)
        elif cmd == "args":
            req.output.write_stdout(" ".join(req.spec.args).encode() + b"\n")
        elif cmd == "cat":
            req.output.write_stdout(req.vfs.read_file(rest))
        elif cmd == "out":
            name, _, data = rest.partition(" ")
            req.vfs.write_file("/out/" + name, data.encode())
        elif cmd == "outbin":
            name, _, data = rest.partition(" ")
            req.vfs.write_file("/out/" + name, bytes.fromhex(data))
        elif cmd == "printhex":
            req.output.write_stdout(bytes.fromhex(rest))
        elif cmd == "eprinthex":
            req.output.write_stderr(bytes.fromhex(rest))
        elif cmd == "outhex":
            name, _, data = rest.partition(" ")
            req.vfs.write_file("/out/" + bytes.fromhex(name).decode("utf-8", "surrogateescape"), data.encode())
        elif cmd == "quotahex":
            raise FSQuotaExceeded(f"/out/{bytes.fromhex(rest).decode('utf-8', 'surrogateescape')} does not fit")
        elif cmd == "failhex":
            raise SandboxError(f"cannot use {bytes.fromhex(rest).decode('utf-8', 'surrogateescape')}")
        elif cmd == "flood":
            while True:
                req.output.write_stdout(b"z" * 4096)
        elif cmd == "sleep":
            await asyncio.sleep(float(rest))
        elif cmd == "exit":
            return Outcome(exit_code=int(rest))
    return Outcome(exit_code=0)


class _Backend(FakeSessionBackend):
    def session_unavailable_reason(self, pack: Pack) -> str | None:
        return None if pack.name == PACK.name else "this pack has no REPL driver"


def make_sandbox(policy: Policy) -> Sandbox:
    return Sandbox(backends=[_Backend("wasm", handler=guest)], packs=[PACK, NO_SESSIONS], policy=policy)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], make_sandbox=make_sandbox))
