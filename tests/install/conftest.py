"""Shared parts of the install tests: a clean environment and command helpers.

These tests install the project the way a new user does (a fresh clone, a
wheel, an sdist, pipx) into temporary directories, with an empty runtime
cache, and run ``playground`` from outside the checkout. They are slow
(minutes: virtualenvs with PySide6, runtime downloads and builds) and run
in the full test command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Variables a new user's shell would not have (ours or a virtualenv's), dropped from the environment.
_DROP_PREFIXES = ("PLAYGROUND_", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIPX_", "CONDA_")


def clean_env(cache: Path, **extra: str) -> dict[str, str]:
    """The caller's environment minus anything of ours, with an empty runtime cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env["PLAYGROUND_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


def sh(
    command: list[str] | str, *, cwd: Path, env: Mapping[str, str], timeout: float = 900, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion; its output is kept for the assertion messages."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=dict(env),
        shell=isinstance(command, str),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-6000:]}"
