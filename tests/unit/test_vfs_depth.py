"""Issue #12, item 3: deep trees never crash the host side.

Two lines of defence, tested separately: every host-side walk over a
guest-shaped tree is iterative (checked on hand-built chains far deeper
than any limit), and the VFS refuses to grow a tree past ``MAX_DEPTH``
(InvalidSpec for a caller's key, ENAMETOOLONG for a guest).
"""

from __future__ import annotations

import errno
import io
import pickle
import sys
from pathlib import Path

import pytest

from playground.cli import main
from playground.core import VFS, InvalidSpec, Limits, Outcome, Pack, Policy, Request, Sandbox, Spec, VFSError, WasmSpec
from playground.core.vfs import MAX_DEPTH, Dir, File, clean_key
from tests.fake_backend import FakeBackend

TEXT = Pack(name="text", aliases=("txt",), wasm=WasmSpec(module=None))
#: Deeper than Python's default recursion limit (1000), and still a valid key of at most 4096 characters.
DEEP_KEY = "a/" * 2000 + "f"


def base(v: VFS, name: str) -> Dir:
    node = v.root.children[name]
    assert isinstance(node, Dir)
    return node


def chain(parent: Dir, depth: int, ino: int = 1000) -> Dir:
    """Hang ``depth`` nested directories named ``d`` below ``parent`` without the VFS's checks; return the last."""
    current = parent
    for i in range(depth):
        child = Dir(ino + i, parent.readonly, current)
        current.children["d"] = child
        current = child
    return current


# -- callers: Spec.files keys --------------------------------------------------------


def test_a_spec_key_thousands_deep_is_invalid_spec_not_recursion_error() -> None:
    assert len(DEEP_KEY) <= 4096
    with pytest.raises(InvalidSpec, match="components deep"):
        Spec(lang="txt", code="", files={DEEP_KEY: b"x"})
    with pytest.raises(InvalidSpec, match="components deep"):
        VFS(fs_quota=None, max_files=None).seed_inputs({DEEP_KEY: b"x"})


def test_key_depth_limit_is_exact() -> None:
    assert len(clean_key("d/" * (MAX_DEPTH - 2) + "f")) == MAX_DEPTH - 1  # /in + 255 components: allowed
    with pytest.raises(InvalidSpec):
        clean_key("d/" * (MAX_DEPTH - 1) + "f")
    v = VFS(fs_quota=None, max_files=None)
    v.seed_inputs({"d/" * (MAX_DEPTH - 2) + "f": b"deepest"})
    assert v.read_file("/in/" + "d/" * (MAX_DEPTH - 2) + "f") == b"deepest"


# -- guests: the VFS refuses to grow past MAX_DEPTH --------------------------------------


def test_mkdir_and_create_stop_at_max_depth_with_enametoolong() -> None:
    v = VFS(fs_quota=None, max_files=None)
    current = base(v, "out")  # depth 1
    for _ in range(MAX_DEPTH - 1):
        current = v.mkdir(current, "d")
    assert v.depth(current) == MAX_DEPTH
    for attempt in (lambda: v.mkdir(current, "d"), lambda: v.create_file(current, "f")):
        with pytest.raises(VFSError) as info:
            attempt()
        assert info.value.errno == errno.ENAMETOOLONG
    v.create_file(current.parent, "f")
    assert list(v.collect_out()) == ["d/" * (MAX_DEPTH - 2) + "f"]


def test_rename_cannot_move_a_subtree_past_max_depth() -> None:
    v = VFS(fs_quota=None, max_files=None)
    work, out = base(v, "work"), base(v, "out")
    deep = work
    for _ in range(MAX_DEPTH - 11):
        deep = v.mkdir(deep, "d")
    assert v.depth(deep) == MAX_DEPTH - 10
    tree = v.mkdir(out, "t")
    leaf = tree
    for _ in range(10):
        leaf = v.mkdir(leaf, "s")
    nodes = v.nodes_used
    with pytest.raises(VFSError) as info:
        v.rename(out, "t", deep, "t")  # its leaf would sit at MAX_DEPTH + 1
    assert info.value.errno == errno.ENAMETOOLONG
    assert out.children["t"] is tree and "t" not in deep.children and v.nodes_used == nodes
    v.rename(out, "t", deep.parent, "t")  # its leaf at exactly MAX_DEPTH: fits
    assert v.depth(leaf) == MAX_DEPTH
    v.write_file("/work/x", b"")
    with pytest.raises(VFSError) as info:
        v.rename(work, "x", leaf, "x")
    assert info.value.errno == errno.ENAMETOOLONG


# -- the host side never recurses, whatever the tree --------------------------------------


def test_collecting_and_sealing_a_tree_thousands_deep_does_not_recurse() -> None:
    v = VFS(fs_quota=None, max_files=None)
    chain(base(v, "out"), 5000).children["f"] = File(1, False, b"bottom")
    assert v.collect_out() == {"d/" * 5000 + "f": b"bottom"}
    assert [path for path, _ in v.iter_files(v.root)] == ["out/" + "d/" * 5000 + "f"]
    bottom = chain(base(v, "in"), 5000, ino=10000)
    v.seed_inputs({})  # seals /in
    assert bottom.readonly


def test_a_tree_thousands_deep_crosses_to_a_worker_process_and_back() -> None:
    """A Wasm worker process gets the run's tree and sends it back (pickle): pickle's own form of a node graph
    recursed per level and a guest's tree at ``MAX_DEPTH`` made the worker die with the run's result."""
    v = VFS(fs_quota=None, max_files=None)
    chain(base(v, "out"), 5000).children["f"] = File(1, False, b"bottom")
    back = pickle.loads(pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL))
    assert back.collect_out() == {"d/" * 5000 + "f": b"bottom"}


def guest_digs(request: Request) -> Outcome:
    """A guest that digs a chain of ``d`` directories under /out until the VFS says no, then leaves a file.

    The file goes one level above the deepest directory (which holds no more entries at the limit).
    """
    vfs = request.vfs
    current = base(vfs, "out")
    made = 0
    for _ in range(int(request.spec.code_bytes.decode().split()[1])):
        try:
            current = vfs.mkdir(current, "d")
        except VFSError as exc:
            request.output.write_stdout(f"mkdir errno={errno.errorcode[exc.errno or 0]}\n".encode())
            break
        made += 1
    vfs.write_file("/out/" + "d/" * (made - 1) + "leaf.txt", b"leaf")
    return Outcome(exit_code=0)


async def test_a_guest_digging_under_out_with_max_files_raised_completes() -> None:
    with Sandbox(backends=[FakeBackend("wasm", guest_digs)], packs=[TEXT]) as sb:
        result = await sb.run(Spec(lang="txt", code="dig 3000", limits=Limits(max_files=5000)))
    assert result.stdout == b"mkdir errno=ENAMETOOLONG\n"
    assert list(result.files) == ["d/" * (MAX_DEPTH - 2) + "leaf.txt"]


def test_cli_out_writes_a_deep_out_tree_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))

    def factory(policy: Policy) -> Sandbox:
        return Sandbox(backends=[FakeBackend("wasm", guest_digs)], packs=[TEXT], policy=policy)

    out_dir = tmp_path / "results"
    code = main(["run", "-e", "dig 3000", "-l", "txt", "--max-files", "5000", "--out", str(out_dir)],
                make_sandbox=factory)  # fmt: skip
    err = capfd.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    assert (out_dir / ("d/" * (MAX_DEPTH - 2) + "leaf.txt")).read_bytes() == b"leaf"
