"""``playground images`` and ``images build`` against the real daemon, with no image variables set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends.docker.engine import Engine

PLAYGROUND = Path(sys.executable).parent / "playground"


def bare_env() -> dict[str, str]:
    """What an MCP client passes: no PLAYGROUND_IMAGE_* and no image config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAYGROUND_IMAGE_")}
    env["XDG_CONFIG_HOME"] = "/nonexistent"
    return env


def test_images_lists_the_local_builds_it_will_use(engine: Engine) -> None:
    assert engine.image_present("playground-bash:local"), "build it: playground images build bash"
    proc = subprocess.run([str(PLAYGROUND), "images"], env=bare_env(), capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip
    lines = proc.stdout.splitlines()
    bash_line = next(line for line in lines if line.startswith(("[ok  ] bash:", "[MISS] bash:")))
    if not engine.image_present("bash:5"):
        expected = "playground-bash:local (present; from local build (playground images build bash))"
        assert bash_line == f"[ok  ] bash: {expected}"
    assert proc.returncode in (0, 1), proc.stderr


def test_images_build_reuses_an_existing_image_and_runs_from_anywhere(engine: Engine, tmp_path: Path) -> None:
    assert engine.image_present("playground-bash:local")
    proc = subprocess.run([str(PLAYGROUND), "images", "build", "bash"], cwd=tmp_path, env=bare_env(),
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "playground-bash:local exists" in proc.stderr and "reusing it" in proc.stderr


def test_a_docker_language_runs_with_no_image_variable(engine: Engine, tmp_path: Path) -> None:
    if engine.image_present("bash:5"):
        pytest.skip("the official bash:5 image is here and would be used")
    argv = [str(PLAYGROUND), "run", "--policy", "docker-only", "-l", "bash", "-e", "echo local:$((6*7))"]
    proc = subprocess.run(argv, cwd=tmp_path, env=bare_env(), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout == "local:42\n", proc.stderr
