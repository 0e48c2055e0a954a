"""A ``playground run`` that the Wasm tier serves never imports the Docker SDK (about 0.06 s of every command)."""

from __future__ import annotations

import subprocess
import sys

from playground.packs import python

from .conftest import require_runtime

PROBE = """
import sys
from playground.cli import entry
sys.argv = ["playground", "run", "-l", "python", "--report", "none", "-e", "print(6 * 7)"]
try:
    entry()
except SystemExit as end:
    assert end.code == 0, end.code
print(sorted(m for m in ("docker", "requests", "urllib3") if m in sys.modules))
"""


def test_a_wasm_run_from_the_command_line_does_not_import_the_docker_sdk() -> None:
    from backends.wasm import WasmBackend

    require_runtime(WasmBackend(), python.PACK)
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["42", "[]"], (done.stdout, done.stderr)
