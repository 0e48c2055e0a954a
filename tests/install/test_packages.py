"""A built wheel, a built sdist and ``pipx install .``, each used from outside the checkout.

Each goes into a fresh virtualenv (pipx makes its own), then ``playground``
runs a program in every Wasm language from a temporary directory with no
path into the checkout: what it needs (examples, drivers, the runtime
manifest, the runtimes' build recipes) must come from the installed
package. The first test sets the runtimes up with ``playground setup`` into
a new empty cache; the others reuse that cache (what they check is the
package, not the download again).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.install.conftest import REPO, clean_env, explain, sh

pytestmark = pytest.mark.slow

PROGRAMS = {
    "hello.py": ("import os, sys\nprint('py', sys.version_info[:2] >= (3, 12), os.getcwd() != '')\n", "py True True"),
    "hello.js": ("console.log('js', [1, 2, 3].map(x => x * 2).join(','))\n", "js 2,4,6"),
    "hello.ts": ("const n: number = 6 * 7;\nconsole.log(`ts ${n}`);\n", "ts 42"),
    "hello.lua": ("print('lua', 6 * 7)\n", "lua\t42"),
    "hello.wat": (
        '(module (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))\n'
        ' (memory (export "memory") 1) (data (i32.const 16) "wat\\n")\n'
        ' (func (export "_start") (i32.store (i32.const 0) (i32.const 16)) (i32.store (i32.const 4) (i32.const 4))\n'
        "  (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))\n",
        "wat",
    ),
}


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and sdist of the committed tree (built from a clean export, as a release would be)."""
    root = tmp_path_factory.mktemp("dist")
    tree = root / "tree"
    export = sh(f"git -C {REPO} archive --format=tar HEAD | (mkdir -p {tree} && tar -x -C {tree})", cwd=root,
                env=clean_env(root))  # fmt: skip
    assert export.returncode == 0, explain(export)
    out = root / "out"
    built = sh([sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(out), str(tree)], cwd=root,
               env=clean_env(root))  # fmt: skip
    assert built.returncode == 0, explain(built)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runtime-cache")


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A working directory with the test programs and no way into the checkout."""
    for name, (source, _) in PROGRAMS.items():
        (tmp_path / name).write_text(source)
    yield tmp_path


def venv_with(target: str, where: Path, cache: Path) -> Path:
    """A fresh virtualenv with ``target`` pip-installed; returns its ``playground``."""
    created = sh([sys.executable, "-m", "venv", str(where)], cwd=where.parent, env=clean_env(cache))
    assert created.returncode == 0, explain(created)
    pip = sh([str(where / "bin" / "python"), "-m", "pip", "install", "-q", target], cwd=where.parent,
             env=clean_env(cache))  # fmt: skip
    assert pip.returncode == 0, explain(pip)
    return where / "bin" / "playground"


def check_every_wasm_language(playground: Path, cwd: Path, cache: Path) -> None:
    for name, (_, expected) in PROGRAMS.items():
        proc = sh([str(playground), "run", name], cwd=cwd, env=clean_env(cache), timeout=600)
        assert proc.returncode == 0, f"{name}: {explain(proc)}"
        assert proc.stdout.strip() == expected, f"{name}: {explain(proc)}"
    repl = sh(
        [str(playground), "repl", "--lang", "python"], cwd=cwd, env=clean_env(cache), stdin="x = 6\nprint(x * 7)\n"
    )
    assert repl.returncode == 0 and "42" in repl.stdout, explain(repl)
    doctor = sh([str(playground), "doctor"], cwd=cwd, env=clean_env(cache))
    assert "runtime python-3.12.0.wasm: sha256" in doctor.stdout, explain(doctor)


def test_wheel_sets_itself_up_and_runs_every_wasm_language(
    dists: dict[str, Path], cache: Path, outside: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    playground = venv_with(str(dists["wheel"]), tmp_path_factory.mktemp("wheel") / "venv", cache)
    assert not any(cache.iterdir()), "the runtime cache was not empty"
    setup = sh([str(playground), "setup"], cwd=outside, env=clean_env(cache), timeout=1500)
    assert setup.returncode == 0, explain(setup)
    lines = setup.stderr.splitlines()
    for line in ("fetching runtime python", "building runtime quickjs", "building runtime lua"):
        assert f"playground: {line}" in lines, explain(setup)
    # The languages are set up side by side: QuickJS is built once for JavaScript and TypeScript, and every
    # line comes out whole.
    assert lines.count("playground: building runtime quickjs") == 1, explain(setup)
    assert all(line.startswith("playground: ") for line in lines), explain(setup)
    assert lines[-1].startswith("playground: ready: "), explain(setup)
    check_every_wasm_language(playground, outside, cache)


def test_sdist_installs_and_runs_every_wasm_language(
    dists: dict[str, Path], cache: Path, outside: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    playground = venv_with(str(dists["sdist"]), tmp_path_factory.mktemp("sdist") / "venv", cache)
    check_every_wasm_language(playground, outside, cache)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pipx_install_of_the_checkout(cache: Path, outside: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("pipx")
    env = clean_env(cache, PIPX_HOME=str(home / "home"), PIPX_BIN_DIR=str(home / "bin"),
                    PIPX_MAN_DIR=str(home / "man"))  # fmt: skip
    tree = home / "tree"
    export = sh(f"git -C {REPO} archive --format=tar HEAD | (mkdir -p {tree} && tar -x -C {tree})", cwd=home, env=env)
    assert export.returncode == 0, explain(export)
    installed = sh([sys.executable, "-m", "pipx", "install", "."], cwd=tree, env=env)
    assert installed.returncode == 0, explain(installed)
    check_every_wasm_language(home / "bin" / "playground", outside, cache)
