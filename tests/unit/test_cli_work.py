"""Issue #14 on the command line: ``--work`` files and directories, the program under its own name, and ``--out``
into a prepared directory full of host links (the fake backend; the real tiers are tested elsewhere)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from playground.cli import exitcodes, main
from playground.cli.hostfiles import HostFileError, read_tree
from playground.core import Outcome, Pack, Request, Sandbox, WasmSpec
from tests.fake_backend import FakeBackend

TEXT = Pack(name="text", aliases=("txt",), extensions=(".txt",), wasm=WasmSpec(module=None))
seen: list[Request] = []


def guest(req: Request) -> Outcome:
    """Lists the files it was given, and writes ``/out`` files named by its code's lines (``out NAME``)."""
    seen.append(req)
    for line in req.spec.code_bytes.decode().splitlines():
        if line.startswith("out "):
            req.vfs.write_file("/out/" + line[4:], b"guest data")
    return Outcome(exit_code=0)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., int]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    backend = FakeBackend("wasm", guest)

    def run(*argv: str) -> int:
        return main(list(argv), make_sandbox=lambda policy: Sandbox(backends=[backend], packs=[TEXT], policy=policy))

    return run


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "util.py").write_text("X = 1\n")
    (root / "data.csv").write_text("a,b\n")
    outside = tmp_path / "secret"
    outside.write_text("host secret")
    os.symlink(outside, root / "leak.txt")  # a link to a host file outside the project
    os.symlink(tmp_path, root / "lib" / "up")  # a link to a host directory
    return root


def test_read_tree_copies_files_and_skips_every_link(tmp_path: Path) -> None:
    root = project(tmp_path)
    tree = read_tree([str(root)], "--work")
    assert tree.files == {"proj/data.csv": b"a,b\n", "proj/lib/util.py": b"X = 1\n"}
    assert sorted(Path(s.split(" (")[0]).name for s in tree.skipped) == ["leak.txt", "up"]
    assert read_tree([f"={root}"], "--work").files.keys() == {"data.csv", "lib/util.py"}
    assert read_tree([f"src={root / 'lib'}"], "--work").files == {"src/util.py": b"X = 1\n"}
    assert read_tree([str(root / "data.csv"), f"copy.csv={root / 'data.csv'}"], "--work").files == {
        "data.csv": b"a,b\n", "copy.csv": b"a,b\n"}  # fmt: skip


@pytest.mark.parametrize("item", ["../x={}", "a/../b={}", "CON={}", "/abs={}"])
def test_read_tree_refuses_unsafe_names(tmp_path: Path, item: str) -> None:
    data = tmp_path / "d"
    data.write_text("x")
    with pytest.raises(HostFileError):
        read_tree([item.format(data)], "--work")


def test_read_tree_refuses_a_name_given_twice_and_missing_files(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.write_text("x")
    with pytest.raises(HostFileError, match="twice"):
        read_tree([str(data), str(data)], "--work")
    with pytest.raises(HostFileError, match="No such file"):
        read_tree([str(tmp_path / "missing")], "--work")


def test_run_puts_work_files_next_to_the_program_under_its_own_name(
    cli: Callable[..., int], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    prog = tmp_path / "analysis.txt"
    prog.write_text("")
    assert cli("run", str(prog), "--work", f"={root}", "--in", str(root / "data.csv")) == 0
    request = seen[-1]
    assert request.spec.main_file == "analysis.txt"
    assert sorted(request.vfs.listdir("/work")) == ["data.csv", "lib"]  # the fake backend writes no program
    assert request.vfs.read_file("/work/lib/util.py") == b"X = 1\n" and request.vfs.read_file("/in/data.csv")
    assert "skipped" in capfd.readouterr().err
    assert cli("run", str(prog), "--work", str(tmp_path / "missing")) == exitcodes.USAGE


def test_out_never_writes_through_links_in_a_prepared_directory(cli: Callable[..., int], tmp_path: Path) -> None:
    """The target holds links (to a host file, to a host directory, a dangling one) where the guest's names go."""
    host_dir = tmp_path / "host_dir"
    host_dir.mkdir()
    host_file = tmp_path / "host_file"
    host_file.write_text("precious")
    target = tmp_path / "target"
    target.mkdir()
    os.symlink(host_file, target / "a.txt")
    os.symlink(host_dir, target / "sub")
    os.symlink(tmp_path / "nowhere", target / "dangling.txt")
    code = "out a.txt\nout sub/b.txt\nout dangling.txt\nout fresh.txt"
    assert cli("run", "-e", code, "-l", "txt", "--out", str(target)) == 0
    assert host_file.read_text() == "precious" and list(host_dir.iterdir()) == []
    assert not (tmp_path / "nowhere").exists()
    assert (target / "fresh.txt").read_bytes() == b"guest data"
    assert all((target / name).is_symlink() for name in ("a.txt", "sub", "dangling.txt"))
