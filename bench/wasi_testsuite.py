"""Run the official WASI test suite (wasm32-wasip1) on our WASI, through the public library API; prints a table.

    python bench/wasi_testsuite.py SUITE_DIR [-k SUBSTRING] [-v]

SUITE_DIR holds ``tests/<lang>/testsuite/wasm32-wasip1/`` (WebAssembly/
wasi-testsuite, prebuilt; the suite is not vendored here). Each ``NAME.wasm``
runs as its ``NAME.json`` says (``specification.md`` of the suite; absent:
the defaults): ``args`` and ``env`` as given (the environment holds only
those), ``root`` (a directory next to the test) given to the guest as its
``/`` through ``Spec.root_files`` (a fresh in-memory copy per test, so the
suite's directories are only read; ``*.cleanup`` files are left out as the
specification asks), expected ``exit_code`` (default 0), and ``stdout``/
``stderr`` compared only where the spec names them (as the suite's own
runner does). A test without ``root`` gets an empty writable root.
Operation-based specs (``operations``: run, wait, read) are read the
same way; ``connect``/``send``/``recv`` need sockets, which the Wasm tier
does not have, so such a test fails with that reason.

Every test runs with the same limits, higher than the defaults because
some tests create a thousand files: 4096 files, 64 MiB of files, 60 s.

Prints one row per test (PASS/FAIL, suite/name, seconds, why) and, last,
``passed N/M``. Exit status 0 when all passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from playground.core import WASM_ONLY, Limits, Sandbox, SandboxError, Spec
from playground.packs import wasm

LIMITS = Limits(max_files=4096, fs_quota=64 << 20, wall_time=60.0, cpu_time=60.0)
SUITES = ("c", "assemblyscript", "rust")


@dataclass(frozen=True)
class Case:
    """One test: its module, how to run it and what to expect."""

    suite: str
    name: str
    wasm: Path
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    root: Path | None = None
    exit_code: int = 0
    stdout: str | None = None
    stderr: str | None = None
    unsupported: str = ""


def find_cases(suite_dir: Path) -> list[Case]:
    """Every ``*.wasm`` test under ``SUITE_DIR/tests/<lang>/testsuite/wasm32-wasip1``, in a stable order."""
    cases = []
    for suite in SUITES:
        directory = suite_dir / "tests" / suite / "testsuite" / "wasm32-wasip1"
        for module in sorted(directory.glob("*.wasm")):
            spec_file = module.with_suffix(".json")
            spec = json.loads(spec_file.read_text("utf-8")) if spec_file.is_file() else {}
            cases.append(read_case(suite, module, spec))
    return cases


def read_case(suite: str, module: Path, spec: dict[str, Any]) -> Case:
    """A ``Case`` from a legacy or an operation-based spec."""
    if "operations" not in spec:
        spec = {
            "operations": [
                {"type": "run", **{k: spec[k] for k in ("args", "env", "root") if k in spec}},
                *([{"type": "read", "id": "stdout", "payload": spec["stdout"]}] if "stdout" in spec else []),
                *([{"type": "read", "id": "stderr", "payload": spec["stderr"]}] if "stderr" in spec else []),
                {"type": "wait", "exit_code": spec.get("exit_code", 0)},
            ]
        }
    fields: dict[str, Any] = {}
    unsupported = ""
    for op in spec["operations"]:
        kind = op.get("type")
        if kind == "run":
            fields["args"] = tuple(op.get("args", ()))
            fields["env"] = dict(op.get("env", {}))
            if op.get("root") is not None:
                fields["root"] = module.parent / op["root"]
        elif kind == "wait":
            fields["exit_code"] = int(op.get("exit_code", 0))
        elif kind == "read":
            fields[op.get("id", "stdout")] = op.get("payload", "")
        else:
            unsupported = f"operation {kind!r} needs sockets (the Wasm tier has none)"
    if spec.get("proposals"):
        unsupported = f"proposals {spec['proposals']} are not WASI preview1"
    return Case(suite=suite, name=module.stem, wasm=module, unsupported=unsupported, **fields)


def read_root(root: Path) -> dict[str, bytes]:
    """The regular files under ``root``, keyed by their path relative to it; links and ``*.cleanup`` left out."""
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not (base / d).is_symlink()]
        for filename in filenames:
            path = base / filename
            if filename.endswith(".cleanup") or path.is_symlink() or not path.is_file():
                continue
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


async def run_case(sandbox: Sandbox, case: Case) -> str | None:
    """None when ``case`` passed, else why not."""
    if case.unsupported:
        return case.unsupported
    spec = Spec(
        lang="wasm",
        code=case.wasm.read_bytes(),
        args=case.args,
        env=case.env,
        root_files=read_root(case.root) if case.root is not None else {},
        limits=LIMITS,
    )
    try:
        result = await sandbox.run(spec)
    except SandboxError as exc:
        return f"{type(exc).__name__}: {exc}"
    problems = []
    if result.exit_code != case.exit_code:
        problems.append(f"exit code {result.exit_code}, expected {case.exit_code}")
    for stream, expected in (("stdout", case.stdout), ("stderr", case.stderr)):
        got = getattr(result, stream).decode("utf-8", "replace")
        if expected is not None and got != expected:
            problems.append(f"{stream} {got[:200]!r}, expected {expected[:200]!r}")
    if problems and result.stderr and case.stderr is None:
        problems.append("stderr: " + result.stderr.decode("utf-8", "replace").strip().replace("\n", " | ")[-400:])
    return "; ".join(problems) or None


async def main_async(suite_dir: Path, pattern: str, verbose: bool) -> int:
    cases = [c for c in find_cases(suite_dir) if pattern in f"{c.suite}/{c.name}"]
    if not cases:
        print(f"no tests under {suite_dir}/tests/<lang>/testsuite/wasm32-wasip1", file=sys.stderr)
        return 2
    passed = 0
    with Sandbox(backends=[WasmBackend()], packs=[wasm.PACK], policy=WASM_ONLY) as sandbox:
        for case in cases:
            started = time.monotonic()
            why = await run_case(sandbox, case)
            seconds = time.monotonic() - started
            passed += why is None
            label = f"{case.suite}/{case.name}"
            row = f"{'PASS' if why is None else 'FAIL'}  {label:<50} {seconds:6.2f}s"
            if why is not None:
                row += f"  {why if verbose else why[:300]}"
            print(row, flush=True)
    print(f"passed {passed}/{len(cases)}")
    return 0 if passed == len(cases) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("suite_dir", type=Path, help="holds tests/<lang>/testsuite/wasm32-wasip1/")
    parser.add_argument("-k", default="", help="run only tests whose suite/name contains this")
    parser.add_argument("-v", action="store_true", help="print the whole reason of a failure")
    args = parser.parse_args()
    return asyncio.run(main_async(args.suite_dir, args.k, args.v))


if __name__ == "__main__":
    sys.exit(main())
