"""Issue #14: the container's input archive carries the caller's /work files, and the program under its name."""

from __future__ import annotations

import io
import tarfile

import pytest

from backends.docker.wrapper import for_request, input_archive, main_path
from playground.core import VFS, DockerSpec, InvalidSpec, Spec

SPEC = DockerSpec(image="i", cmd=("python3", "{main}"), main_file="main.py")


def names(blob: bytes) -> dict[str, bytes | None]:
    with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
        out: dict[str, bytes | None] = {}
        for member in archive.getmembers():
            assert member.isreg() or member.isdir()
            handle = archive.extractfile(member) if member.isreg() else None
            out[member.name] = handle.read() if handle is not None else None
        return out


def test_work_files_go_into_work_next_to_the_program() -> None:
    vfs = VFS(fs_quota=None, max_files=None)
    vfs.seed_inputs({"in.txt": b"i"})
    vfs.seed_work({"lib/helper.py": b"X = 1", "data.csv": b"a"})
    members = names(input_archive(vfs, SPEC, b"print(1)", b""))
    assert {k: v for k, v in members.items() if k.startswith(("in", "work/")) and ".playground" not in k} == {
        "in/in.txt": b"i", "work/data.csv": b"a", "work/lib": None, "work/lib/helper.py": b"X = 1",
        "work/main.py": b"print(1)",
    }  # fmt: skip


def test_the_program_takes_the_users_name_and_never_replaces_a_work_file() -> None:
    named = for_request(SPEC, Spec(lang="python", code="", main_file="analysis.py"))
    assert main_path(named) == "/work/analysis.py" and for_request(SPEC, Spec(lang="python", code="")) is SPEC
    vfs = VFS(fs_quota=None, max_files=None)
    vfs.seed_work({"main.py": b"mine"})
    with pytest.raises(InvalidSpec, match=r"main\.py"):
        input_archive(vfs, SPEC, b"print(1)", b"")
    assert "work/analysis.py" in names(input_archive(vfs, named, b"print(1)", b""))
