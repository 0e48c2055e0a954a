"""Issue #14: symbolic links resolved inside the VFS, the root layouts, and ``..`` at the root.

Links are text the VFS resolves against its own tree; these tests make
links that would reach the host if anything resolved them on the host,
and check that they only ever reach VFS nodes (or nothing).
"""

from __future__ import annotations

import errno

import pytest

from playground.core import VFS, InvalidSpec, VFSError
from playground.core.fspath import MAX_HOPS
from playground.core.vfs import BASE_DIRS, MAX_DEPTH, Dir, File, Layout, Symlink


def make(quota: int | None = 1000, files: int | None = 40) -> VFS:
    return VFS(fs_quota=quota, max_files=files)


def d(v: VFS, path: str) -> Dir:
    node = v.lookup(path)
    assert isinstance(node, Dir)
    return node


def code(call: object) -> int:
    assert callable(call)
    with pytest.raises(VFSError) as info:
        call()
    assert info.value.errno is not None
    return info.value.errno


# -- the standard layout ----------------------------------------------------------------


def test_the_standard_root_is_read_only_and_holds_the_layout() -> None:
    v = make()
    assert sorted(v.root.children) == sorted(BASE_DIRS) and v.root.readonly
    assert code(lambda: v.create_file(v.root, "x")) == errno.EROFS
    assert code(lambda: v.mkdir(v.root, "etc")) == errno.EROFS
    assert code(lambda: v.symlink(v.root, "l", "/work")) == errno.EROFS
    assert code(lambda: v.rename(v.root, "work", v.root, "w")) == errno.EBUSY
    for name in ("work", "out", "tmp"):
        v.write_file(f"/{name}/f", b"ok")
    assert code(lambda: v.write_file("/in/f", b"no")) == errno.EROFS


@pytest.mark.parametrize("path", ["/..", "/../..", "../../..", "/work/../..", "/in/../../../tmp/.."])
def test_dotdot_at_the_root_stays_at_the_root(path: str) -> None:
    v = make()
    assert v.walk(d(v, "/work"), path) is v.root


def test_dotdot_above_a_floor_is_eperm() -> None:
    v = make()
    v.write_file("/work/a/b/f", b"")
    a = d(v, "/work/a")
    assert code(lambda: v.walk(a, "..", floor=a)) == errno.EPERM
    assert code(lambda: v.walk(a, "b/../../x", floor=a)) == errno.EPERM
    assert isinstance(v.walk(a, "b/../b/f", floor=a), File)
    # The floor is the directory itself, even when it is the root (a root reopened through path_open).
    assert code(lambda: v.walk(v.root, "..", floor=v.root)) == errno.EPERM


# -- links -------------------------------------------------------------------------------


def test_create_read_follow_and_not_follow() -> None:
    v = make()
    v.write_file("/work/data.csv", b"a,b\n")
    work = d(v, "/work")
    link = v.symlink(work, "latest.csv", "data.csv")
    assert link.target == "data.csv" and link.size == len("data.csv")
    assert v.read_file("/work/latest.csv") == b"a,b\n"
    assert v.walk(work, "latest.csv", follow=False) is link
    assert sorted(v.listdir("/work")) == ["data.csv", "latest.csv"]
    v.symlink(work, "up", "..")
    assert v.walk(work, "up/work/up/work/data.csv").__class__ is File
    v.symlink(work, "dir", "/out")
    v.write_file("/out/x", b"reached through a link to a directory")
    assert v.walk(work, "dir") is v.lookup("/out") and v.read_file("/work/dir/x").startswith(b"reached")


def test_a_link_to_a_host_path_reaches_nothing_on_the_host() -> None:
    v = make()
    work = d(v, "/work")
    for name, target in [("p", "/etc/passwd"), ("e", "/proc/self/environ"), ("r", "../../../../../../root"),
                         ("h", "/home"), ("t", "/tmp/../../etc/shadow")]:  # fmt: skip
        v.symlink(work, name, target)
        assert code(lambda n=name: v.lookup(f"/work/{n}")) == errno.ENOENT  # type: ignore[misc]
    # Absolute targets start at the VFS root, where the guest's own /tmp is.
    v.write_file("/tmp/x", b"mine")
    v.symlink(work, "t2", "/tmp/x")
    assert v.read_file("/work/t2") == b"mine"


def test_dangling_and_loops() -> None:
    v = make()
    work = d(v, "/work")
    v.symlink(work, "dangling", "nowhere")
    assert code(lambda: v.lookup("/work/dangling")) == errno.ENOENT
    assert isinstance(v.walk(work, "dangling", follow=False), Symlink)
    found = v.resolve(work, "dangling")
    assert (found.parent, found.name, found.node) == (work, "nowhere", None)  # O_CREAT would create it there
    v.symlink(work, "self", "self")
    v.symlink(work, "a", "b")
    v.symlink(work, "b", "a")
    for path in ("self", "a", "a/x", "self/../x"):
        assert code(lambda p=path: v.walk(work, p)) == errno.ELOOP  # type: ignore[misc]


def test_the_hop_limit_is_exact() -> None:
    v = make(files=200)
    work = d(v, "/work")
    v.write_file("/work/end", b"end")
    previous = "end"
    for i in range(MAX_HOPS + 1):
        v.symlink(work, f"l{i}", previous)
        previous = f"l{i}"
    assert v.read_file(f"/work/l{MAX_HOPS - 1}") == b"end"  # 40 links followed
    assert code(lambda: v.lookup(f"/work/l{MAX_HOPS}")) == errno.ELOOP  # 41


def test_links_past_a_floor_are_eperm() -> None:
    v = make()
    v.write_file("/work/a/f", b"")
    a = d(v, "/work/a")
    v.symlink(a, "abs", "/work/a/f")
    v.symlink(a, "up", "../a/f")
    v.symlink(a, "in", "f")
    assert code(lambda: v.walk(a, "abs", floor=a)) == errno.EPERM
    assert code(lambda: v.walk(a, "up", floor=a)) == errno.EPERM
    assert isinstance(v.walk(a, "in", floor=a), File)
    assert isinstance(v.walk(v.root, "work/a/up"), File)  # from the root preopen the same link works


def test_in_stays_read_only_through_a_link() -> None:
    v = make()
    v.seed_inputs({"data.txt": b"secret", "sub/x": b""})
    work = d(v, "/work")
    v.symlink(work, "data", "/in/data.txt")
    v.symlink(work, "sub", "../in/sub")
    target = v.lookup("/work/data")
    assert isinstance(target, File) and target.readonly
    assert code(lambda: v.write(target, 0, b"X")) == errno.EROFS
    assert code(lambda: v.create_file(d(v, "/work/sub"), "new")) == errno.EROFS
    assert v.read_file("/in/data.txt") == b"secret"


def test_links_are_charged_and_freed() -> None:
    v = make(quota=20, files=len(BASE_DIRS) + 2)
    work = d(v, "/work")
    v.symlink(work, "a", "x" * 15)
    assert (v.bytes_used, v.nodes_used) == (15, len(BASE_DIRS) + 1)
    before = (v.bytes_used, v.nodes_used, sorted(work.children))
    assert code(lambda: v.symlink(work, "b", "y" * 6)) == errno.EDQUOT  # bytes
    assert (v.bytes_used, v.nodes_used, sorted(work.children)) == before
    v.symlink(work, "b", "y" * 5)
    assert code(lambda: v.symlink(work, "c", "z")) == errno.EDQUOT  # file count
    assert v.quota_hit
    v.unlink(work, "a")
    v.rename(work, "b", work, "c")
    assert (v.bytes_used, v.nodes_used) == (5, len(BASE_DIRS) + 1)
    v.unlink(work, "c")
    assert (v.bytes_used, v.nodes_used) == (0, len(BASE_DIRS))


def test_link_names_and_targets_are_checked() -> None:
    v = make()
    work = d(v, "/work")
    assert code(lambda: v.symlink(work, "l", "")) == errno.ENOENT
    assert code(lambda: v.symlink(work, "l", "a\x00b")) == errno.EINVAL
    assert code(lambda: v.symlink(work, "l", "x" * 4097)) == errno.ENAMETOOLONG
    assert code(lambda: v.symlink(work, "a/b", "x")) == errno.EINVAL
    v.symlink(work, "l", "x")
    assert code(lambda: v.symlink(work, "l", "y")) == errno.EEXIST
    assert code(lambda: v.rmdir(work, "l")) == errno.ENOTDIR
    assert code(lambda: v.create_file(work, "l")) == errno.EEXIST


def test_a_link_deeper_than_max_depth_is_refused() -> None:
    v = VFS(fs_quota=None, max_files=None)
    current = d(v, "/out")
    for _ in range(MAX_DEPTH - 1):
        current = v.mkdir(current, "d")
    assert code(lambda: v.symlink(current, "l", "x")) == errno.ENAMETOOLONG


def test_out_exports_regular_files_only() -> None:
    v = make()
    v.write_file("/out/real.txt", b"data")
    out = d(v, "/out")
    v.symlink(out, "copy.txt", "real.txt")
    v.symlink(out, "secret", "/in")
    v.symlink(out, "host", "/etc/passwd")
    assert v.collect_out() == {"real.txt": b"data"}


# -- the caller's root --------------------------------------------------------------------


def test_a_caller_root_is_writable_and_holds_only_what_was_placed() -> None:
    v = VFS(fs_quota=1000, max_files=20, layout=Layout.CALLER_ROOT)
    assert v.root.children == {} and v.nodes_used == 0 and not v.root.readonly
    v.seed_root({"file": b"f", "writeable/.gitignore": b"", "dir/nested/x": b"x"})
    v.seed_inputs({"data": b"in"})
    v.seed_work({"w.txt": b"w"})
    assert sorted(v.root.children) == ["dir", "file", "in", "work", "writeable"]
    v.create_file(v.root, "new")
    assert code(lambda: v.write_file("/in/data", b"x")) == errno.EROFS
    assert code(lambda: v.rmdir(v.root, "in")) == errno.EBUSY
    assert v.collect_out() == {}
    assert v.walk(v.root, "/..") is v.root


def test_a_caller_root_without_inputs_has_no_in() -> None:
    v = VFS(fs_quota=None, max_files=None, layout=Layout.CALLER_ROOT)
    v.seed_inputs({})
    v.seed_work({})
    assert v.root.children == {}


@pytest.mark.parametrize(
    "files", [{"in/x": b""}, {"../x": b""}, {"/abs": b""}, {"a": b"", "a/b": b""}, {"a/b": b"", "a": b""}]
)
def test_root_keys_are_checked(files: dict[str, bytes]) -> None:
    v = VFS(fs_quota=None, max_files=None, layout=Layout.CALLER_ROOT)
    with pytest.raises(InvalidSpec):
        v.seed_root(files)


def test_root_files_need_a_caller_root() -> None:
    with pytest.raises(ValueError, match="CALLER_ROOT"):
        make().seed_root({"x": b""})


def test_work_files_are_writable_and_checked() -> None:
    v = make()
    v.seed_work({"main_helper.py": b"X = 1\n", "data/input.csv": b"1,2\n"})
    f = v.lookup("/work/data/input.csv")
    assert isinstance(f, File) and not f.readonly
    v.write(f, 0, b"3")
    assert v.read_file("/work/data/input.csv") == b"3,2\n"
    with pytest.raises(InvalidSpec):
        make().seed_work({"../escape": b""})
    w = make()
    w.seed_work({"a": b""})
    with pytest.raises(InvalidSpec, match="twice"):
        w.seed_work({"a": b""})
