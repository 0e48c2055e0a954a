"""Issue #14: where a caller's files go (``files`` -> /in, ``work_files`` -> /work, ``root_files`` -> a root of
the caller's), ``main_file``, and routing a ``root_files`` spec only to a backend that can present it."""

from __future__ import annotations

import pytest

from playground.core import (
    DOCKER_ONLY,
    PREFER_WASM,
    InvalidSpec,
    Outcome,
    Pack,
    Request,
    Sandbox,
    Spec,
    Unsupported,
    WasmSpec,
)
from playground.core.vfs import Dir, File, Layout
from tests.fake_backend import FakeBackend

TEXT = Pack(name="text", aliases=("txt",), wasm=WasmSpec(module=None))


class RootBackend(FakeBackend):
    """A fake backend that, like the Wasm tier, can give the guest the caller's root."""

    def supports_caller_root(self) -> bool:
        return True


def test_work_files_and_main_file_are_checked() -> None:
    spec = Spec(lang="txt", code="", work_files={"lib/util.py": b"X = 1"}, main_file="app.py")
    assert dict(spec.work_files) == {"lib/util.py": b"X = 1"} and spec.main_file == "app.py"
    assert not spec.uses_caller_root
    for bad in ({"work_files": {"../x": b""}}, {"work_files": {"/abs": b""}}, {"work_files": {"x": "text"}},
                {"main_file": "../main.py"}, {"main_file": ""}, {"main_file": 3},
                {"main_file": "a.py", "work_files": {"a.py": b""}}, {"work_files": [("a", b"")]}):  # fmt: skip
        with pytest.raises(InvalidSpec):
            Spec(lang="txt", code="", **bad)  # type: ignore[arg-type]


def test_root_files_are_checked() -> None:
    spec = Spec(lang="wasm", code=b"", root_files={"file": b"f", "dir/x": b""})
    assert spec.uses_caller_root and dict(spec.root_files or {}) == {"file": b"f", "dir/x": b""}
    assert Spec(lang="wasm", code=b"", root_files={}).uses_caller_root
    for bad in ({"in/x": b""}, {"../x": b""}, {"a\x00": b""}, {"x": 1}):
        with pytest.raises(InvalidSpec):
            Spec(lang="wasm", code=b"", root_files=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidSpec, match="also a work_files key"):
        Spec(lang="wasm", code=b"", root_files={"work/a": b""}, work_files={"a": b""})


async def test_the_core_places_each_kind_of_file() -> None:
    seen: list[Request] = []

    def handler(request: Request) -> Outcome:
        seen.append(request)
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", handler)], packs=[TEXT])
    await sb.run(Spec(lang="txt", code="", files={"in.csv": b"i"}, work_files={"data/w.csv": b"w"}))
    vfs = seen[-1].vfs
    assert vfs.layout is Layout.STANDARD and vfs.root.readonly
    inp, work = vfs.lookup("/in/in.csv"), vfs.lookup("/work/data/w.csv")
    assert isinstance(inp, File) and inp.readonly and isinstance(work, File) and not work.readonly


async def test_root_files_run_only_where_a_caller_root_can_be_presented() -> None:
    seen: list[Request] = []

    def handler(request: Request) -> Outcome:
        seen.append(request)
        return Outcome(exit_code=0)

    spec = Spec(lang="txt", code="", root_files={"etc/config": b"c"}, files={"data": b"d"})
    plain = Sandbox(backends=[FakeBackend("docker", handler)], packs=[TEXT], policy=DOCKER_ONLY)
    with pytest.raises(Unsupported, match="root_files"):
        await plain.run(spec)
    routed = Sandbox(
        backends=[FakeBackend("wasm", handler, refuse=lambda _: "no"), RootBackend("docker", handler)],
        packs=[TEXT],
        policy=PREFER_WASM,
    )
    await routed.run(spec)
    vfs = seen[-1].vfs
    assert vfs.layout is Layout.CALLER_ROOT and not vfs.root.readonly
    assert sorted(vfs.root.children) == ["etc", "in"]
    assert isinstance(vfs.lookup("/etc"), Dir) and vfs.read_file("/etc/config") == b"c"
    # The standard layout still routes to a backend without caller roots.
    await plain.run(Spec(lang="txt", code=""))
