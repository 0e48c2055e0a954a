import errno
import pickle

import pytest

from playground.core import VFS, InvalidSpec, Limits, VFSError, clean_key
from playground.core.limits import DEFAULT_LIMITS
from playground.core.vfs import BASE_DIRS, DEVICES, Device, Dir, File, Layout, Node, Symlink


def make(quota: int | None = 1000, files: int | None = 20) -> VFS:
    return VFS(fs_quota=quota, max_files=files)


def work(v: VFS) -> Dir:
    node = v.lookup("/work")
    assert isinstance(node, Dir)
    return node


# -- caller keys -------------------------------------------------------------

@pytest.mark.parametrize(
    "key",
    [
        "", "/etc/passwd", "\\windows", "../x", "a/../../x", "a/..", "..", ".", "./a", "a/./b",
        "a//b", "a/", "a\x00b", "C:evil", "c:/x", "C:\\x", "a\\b", "CON", "nul.txt", "LPT1", "com9.log",
        "dir/aux", "stream:zone", "trailing.", "trailing ", "x" * 300, "ctl\x01char",
    ],
)
def test_clean_key_rejects(key: str) -> None:
    with pytest.raises(InvalidSpec):
        clean_key(key)


@pytest.mark.parametrize("key", ["a", "a/b/c.txt", "data.csv", ".hidden", "con_fig", "名前.txt", "a..b"])
def test_clean_key_accepts(key: str) -> None:
    assert "/".join(clean_key(key)) == key


def test_clean_key_rejects_non_strings() -> None:
    with pytest.raises(InvalidSpec):
        clean_key(b"bytes")  # type: ignore[arg-type]


# -- guest paths -------------------------------------------------------------

@pytest.mark.parametrize(
    "path", ["/..", "/../etc/passwd", "/in/../../etc/passwd", "/work/../../../../x", "/work/a/../../../b"]
)
def test_dotdot_cannot_escape_the_root(path: str) -> None:
    """``..`` at the root stays at the root (``/..`` is ``/``, as on Linux): nothing above it exists."""
    v = make()
    v.write_file("/work/a/f", b"")
    try:
        node = v.walk(v.root, path)
    except VFSError as exc:
        assert exc.errno == errno.ENOENT
    else:
        assert node is v.root


def test_dotdot_is_clamped_at_the_preopen_floor() -> None:
    v = make()
    w = work(v)
    with pytest.raises(VFSError) as info:
        v.walk(w, "../in", floor=w)
    assert info.value.errno == errno.EPERM
    with pytest.raises(VFSError):
        v.walk(w, "sub/../../out", floor=w)


def test_dotdot_inside_stays_inside() -> None:
    v = make()
    v.write_file("/work/a/b/f.txt", b"hi")
    assert v.walk(work(v), "a/b/../b/./f.txt").__class__ is File
    assert v.read_file("/work/a/../a/b/f.txt") == b"hi"


def test_host_paths_do_not_exist() -> None:
    v = make()
    for path in ("/etc/passwd", "/proc/self/environ", "/root", "/home"):
        with pytest.raises(VFSError) as info:
            v.lookup(path)
        assert info.value.errno == errno.ENOENT


def test_nul_in_guest_path() -> None:
    v = make()
    with pytest.raises(VFSError) as info:
        v.walk(v.root, "/work/a\x00/etc")
    assert info.value.errno == errno.EINVAL


@pytest.mark.parametrize("name", ["a/b", "..", ".", "", "x\x00", "a\\b", "n" * 256])
def test_guest_cannot_create_bad_names(name: str) -> None:
    v = make()
    with pytest.raises(VFSError):
        v.create_file(work(v), name)
    with pytest.raises(VFSError):
        v.mkdir(work(v), name)
    assert v.listdir("/work") == []


# -- /in is read-only ----------------------------------------------------------

def test_in_is_read_only_for_every_operation() -> None:
    v = make()
    v.seed_inputs({"data.txt": b"secret", "sub/x.txt": b"x"})
    inbox = v.lookup("/in")
    sub = v.lookup("/in/sub")
    data = v.lookup("/in/data.txt")
    assert isinstance(inbox, Dir) and isinstance(sub, Dir) and isinstance(data, File)
    attempts = [
        lambda: v.create_file(inbox, "new"),
        lambda: v.create_file(sub, "new"),
        lambda: v.mkdir(inbox, "d"),
        lambda: v.write(data, 0, b"X"),
        lambda: v.write(data, 6, b"more"),
        lambda: v.truncate(data, 0),
        lambda: v.unlink(inbox, "data.txt"),
        lambda: v.rmdir(inbox, "sub"),
        lambda: v.rename(inbox, "data.txt", work(v), "stolen"),
        lambda: v.rename(work(v), "x", inbox, "data.txt"),
        lambda: v.write_file("/in/data.txt", b"overwrite"),
        lambda: v.write_file("/in/fresh.txt", b"new"),
    ]
    v.write_file("/work/x", b"replacement")
    for attempt in attempts:
        with pytest.raises(VFSError):
            attempt()
    assert v.read_file("/in/data.txt") == b"secret"
    assert v.listdir("/in") == ["data.txt", "sub"]
    assert v.read_file("/work/x") == b"replacement"


def test_base_dirs_cannot_be_removed_or_renamed() -> None:
    v = make()
    for name in BASE_DIRS:
        with pytest.raises(VFSError):
            v.rmdir(v.root, name)
        with pytest.raises(VFSError):
            v.rename(v.root, name, work(v), "moved")
    out = v.lookup("/out")
    assert isinstance(out, Dir)
    v.write_file("/work/d/f", b"1")
    with pytest.raises(VFSError):
        v.rename(work(v), "d", v.root, "out")  # replace /out by a directory
    with pytest.raises(VFSError):
        v.create_file(v.root, "etc")  # nothing new at the root
    assert sorted(v.root.children) == ["in", "out", "tmp", "work"]


def test_rename_out_of_out_stays_inside_the_tree() -> None:
    v = make()
    v.write_file("/out/result.txt", b"r")
    out = v.lookup("/out")
    assert isinstance(out, Dir)
    with pytest.raises(VFSError):
        v.rename(out, "result.txt", out, "../../etc/passwd")
    v.rename(out, "result.txt", work(v), "moved.txt")
    assert v.collect_out() == {}
    assert v.read_file("/work/moved.txt") == b"r"


def test_directory_cannot_move_into_itself() -> None:
    v = make()
    v.write_file("/work/a/b/f", b"")
    a = v.lookup("/work/a")
    b = v.lookup("/work/a/b")
    assert isinstance(a, Dir) and isinstance(b, Dir)
    with pytest.raises(VFSError) as info:
        v.rename(work(v), "a", b, "a")
    assert info.value.errno == errno.EINVAL


# -- quotas ----------------------------------------------------------------

def snapshot(v: VFS) -> tuple[int, int, dict[str, bytes]]:
    work_files = {p: bytes(f.data) for p, f in v.iter_files(v.root)}
    return v.bytes_used, v.nodes_used, work_files


def test_one_big_write_over_quota_leaves_fs_unchanged() -> None:
    v = make(quota=100)
    f = v.write_file("/work/a", b"x" * 60)
    before = snapshot(v)
    with pytest.raises(VFSError) as info:
        v.write(f, 60, b"y" * 41)
    assert info.value.errno == errno.EDQUOT
    assert snapshot(v) == before
    assert v.quota_hit
    v.write(f, 60, b"y" * 40)  # exactly at the quota is fine
    assert v.bytes_used == 100


def test_quota_by_many_small_files() -> None:
    v = make(quota=50, files=1000)
    written = 0
    with pytest.raises(VFSError) as info:
        for i in range(100):
            v.write_file(f"/work/f{i}", b"12345")
            written += 1
    assert info.value.errno == errno.EDQUOT
    assert written == 10
    assert v.bytes_used == 50


def test_file_count_limit_counts_base_dirs_and_directories() -> None:
    v = make(quota=None, files=len(BASE_DIRS) + 3)
    assert v.nodes_used == len(BASE_DIRS)
    v.mkdir(work(v), "d")
    v.create_file(work(v), "a")
    v.create_file(work(v), "b")
    before = snapshot(v)
    with pytest.raises(VFSError) as info:
        v.create_file(work(v), "c")
    assert info.value.errno == errno.EDQUOT
    with pytest.raises(VFSError):
        v.mkdir(work(v), "e")
    assert snapshot(v) == before
    v.unlink(work(v), "a")
    v.create_file(work(v), "c")  # deleting frees a slot


def test_sparse_write_counts_the_hole() -> None:
    v = make(quota=1000)
    f = v.write_file("/work/sparse", b"")
    with pytest.raises(VFSError):
        v.write(f, 10_000, b"x")
    assert f.size == 0
    v.write(f, 500, b"x")
    assert f.size == 501 and v.bytes_used == 501


def test_truncate_grow_is_under_quota_and_shrink_frees() -> None:
    v = make(quota=100)
    f = v.write_file("/work/t", b"x" * 10)
    with pytest.raises(VFSError):
        v.truncate(f, 101)
    assert f.size == 10
    v.truncate(f, 100)
    v.truncate(f, 0)
    assert v.bytes_used == 0


def test_overwrite_via_rename_frees_the_target() -> None:
    v = make(quota=100, files=10)
    v.write_file("/work/a", b"a" * 40)
    v.write_file("/work/b", b"b" * 50)
    v.rename(work(v), "a", work(v), "b")
    assert v.bytes_used == 40
    assert v.nodes_used == len(BASE_DIRS) + 1
    assert v.read_file("/work/b") == b"a" * 40


def test_inputs_count_against_the_quota() -> None:
    v = make(quota=10)
    with pytest.raises(VFSError):
        v.seed_inputs({"big": b"x" * 11})
    v2 = make(quota=10)
    v2.seed_inputs({"ok": b"x" * 10})
    with pytest.raises(VFSError):
        v2.write_file("/work/one", b"1")


def test_input_key_conflicts_are_refused() -> None:
    v = make()
    with pytest.raises(InvalidSpec):
        v.seed_inputs({"a": b"file", "a/b": b"needs a dir"})


def test_no_hard_links_can_exist() -> None:
    """Symbolic links exist (see test_vfs_links); hard links do not: one name per node."""
    v = make()
    assert not hasattr(v, "link")
    f = v.write_file("/out/a", b"data")
    v.symlink(v.lookup("/out"), "b", "a")  # type: ignore[arg-type]
    assert f.links == 1 and isinstance(v.walk(v.root, "/out/b", follow=False), Symlink)
    assert v.collect_out() == {"a": b"data"}  # links are not exported


def test_collect_out() -> None:
    v = make()
    v.write_file("/out/a.txt", b"A")
    v.write_file("/out/sub/b.bin", b"\x00\x01")
    v.write_file("/work/c", b"not collected")
    assert v.collect_out() == {"a.txt": b"A", "sub/b.bin": b"\x00\x01"}


def test_unlimited_quota() -> None:
    v = make(quota=None, files=None)
    for i in range(300):
        v.write_file(f"/work/{i}", b"x" * 1000)
    assert v.bytes_used == 300_000


def test_a_tree_takes_on_the_report_of_a_copy_that_ran_elsewhere() -> None:
    """A Wasm worker process runs the guest on a pickled copy of the run's tree and answers with the
    copy's report (``backends/wasm/procpool``): the run's own VFS then reads as the copy does, for
    everything the result is made of (``/out``, the counters, a quota hit)."""
    mine = VFS(fs_quota=1000, max_files=20)
    mine.seed_inputs({"data.txt": b"in"})
    assert mine.report() == ({}, 2, len(BASE_DIRS) + 1, False)
    copy: VFS = pickle.loads(pickle.dumps(mine))
    copy.write_file("/out/result.txt", b"made there")
    copy.write_file("/out/sub/deep.txt", b"deeper")
    copy.quota_hit = True
    report = copy.report()
    assert report.out == {"result.txt": b"made there", "sub/deep.txt": b"deeper"}
    mine.adopt_report(pickle.loads(pickle.dumps(report)))
    assert mine.collect_out() == report.out and mine.report() == report
    assert (mine.bytes_used, mine.nodes_used, mine.quota_hit) == (copy.bytes_used, copy.nodes_used, True)
    mine.collect_out()["result.txt"] = b"changed by a caller"
    assert mine.collect_out() == report.out  # each caller gets its own dict


def test_only_the_empty_layout_for_the_limits_is_empty() -> None:
    """``is_empty_for``: a run's tree goes to a Wasm worker process as a marker when it is empty, and the
    worker makes its own; so nothing a caller, a host or a guest can put in a tree may pass as empty."""
    limits = DEFAULT_LIMITS.validate()
    assert VFS.for_limits(limits).is_empty_for(limits)
    assert not VFS.for_limits(limits).is_empty_for(limits.merged(Limits(max_files=limits.max_files_cap + 1)))
    assert not VFS.for_limits(limits, Layout.CALLER_ROOT).is_empty_for(limits)
    left: list[tuple[str, VFS]] = []
    for base in BASE_DIRS:
        v = VFS.for_limits(limits)
        v.base_dir(base).children["x"] = Dir(99, False, v.base_dir(base))  # host-made, uncharged: still there
        left.append((f"a node in /{base}", v))
    written = VFS.for_limits(limits)
    written.write_file("/work/a", b"")  # an empty file: counted, nothing charged
    left.append(("an empty file", written))
    mounted = VFS.for_limits(limits)
    mounted.root.children["usr"] = Dir(98, True, mounted.root)  # a runtime's mount, uncharged
    left.append(("a mount in the root", mounted))
    hit = VFS.for_limits(limits)
    hit.quota_hit = True
    left.append(("a quota hit", hit))
    for what, v in left:
        assert not v.is_empty_for(limits), what
    undone = VFS.for_limits(limits)
    undone.mkdir(undone.base_dir("tmp"), "d")
    undone.write_file("/work/f", b"data")
    undone.rmdir(undone.base_dir("tmp"), "d")
    undone.unlink(undone.base_dir("work"), "f")
    assert undone.is_empty_for(limits)


# -- the tree crosses to a Wasm worker process and back (pickle) ---------------------------


def _shape(v: VFS) -> list[tuple[object, ...]]:
    """Every node as (path, kind, inode, read-only, links, opens, times, charged here, content), parents first."""
    rows: list[tuple[object, ...]] = []
    pending: list[tuple[str, Node]] = [("/", v.root)]
    while pending:
        path, node = pending.pop(0)
        content = (
            node.data if isinstance(node, File) else node.target if isinstance(node, Symlink)
            else node.kind if isinstance(node, Device) else None
        )  # fmt: skip
        times = (node.mtime_ns, node.atime_ns, node.ctime_ns)
        counts = (node.links, node.opens)
        rows.append((path, type(node), node.ino, node.readonly, counts, times, node.owner is v, content))
        if isinstance(node, Dir):
            assert all(child.parent is node for child in node.children.values() if isinstance(child, Dir))
            pending.extend((path + name + "/", child) for name, child in node.children.items())
    return rows


def _dir(v: VFS, path: str) -> Dir:
    node = v.lookup(path)
    assert isinstance(node, Dir)
    return node


def test_a_pickled_tree_comes_back_node_for_node() -> None:
    v = VFS(fs_quota=10_000, max_files=40)
    v.seed_inputs({"in.txt": b"input", "sub/more.txt": b"more"})
    v.write_file("/work/a/b/c.txt", b"hello")
    v.symlink(v.lookup("/work"), "link", "a/b")
    v.write_file("/out/z.bin", bytes(range(256)))
    v.write_file("/out/a.txt", b"first after z")  # children keep their order
    host_made = Dir(999, True, v.root)  # a runtime's mount: no quota covers it
    v.root.children["host"] = host_made
    host_made.children["null"] = Device(1000, "null")  # a device (backends/wasm/devices): host-made as well
    opened = v.lookup("/work/a/b/c.txt")
    v.retain(opened)
    v.quota_hit = True
    back = pickle.loads(pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL))
    assert _shape(back) == _shape(v)
    assert (back.bytes_used, back.nodes_used, back.layout) == (v.bytes_used, v.nodes_used, v.layout)
    assert back.quota_hit
    assert list(_dir(back, "/out").children) == ["z.bin", "a.txt"]
    assert back.lookup("/host").owner is None
    device = back.lookup("/host/null")
    assert isinstance(device, Device) and device.kind == "null" and device.readonly and device.owner is None
    # It goes on as the same tree: quotas, new inode numbers, the layout's directories, read-only inputs.
    assert back.create_file(_dir(back, "/work"), "new").ino == v.create_file(_dir(v, "/work"), "new").ino
    assert back.is_base(back.lookup("/out")) and not back.is_base(back.lookup("/work/a"))
    with pytest.raises(VFSError) as caught:
        back.write_file("/in/in.txt", b"changed")
    assert caught.value.errno == errno.EROFS
    with pytest.raises(VFSError) as caught:
        back.write_file("/work/big", bytes(10_000))
    assert caught.value.errno == errno.EDQUOT
    back.release(back.lookup("/work/a/b/c.txt"))  # its descriptor's count came along


def test_a_caller_root_tree_pickles_too() -> None:
    v = VFS(fs_quota=None, max_files=None, layout=Layout.CALLER_ROOT)
    v.seed_root({"top.txt": b"t"})
    back = pickle.loads(pickle.dumps(v))
    assert _shape(back) == _shape(v) and back.layout is Layout.CALLER_ROOT and back.fs_quota is None


def test_a_node_of_another_tree_does_not_pickle() -> None:
    v, other = VFS(fs_quota=None, max_files=None), VFS(fs_quota=None, max_files=None)
    v.root.children["stray"] = other.lookup("/tmp")
    with pytest.raises(ValueError, match="another VFS"):
        pickle.dumps(v)


def test_a_device_is_no_file_to_the_tree() -> None:
    """``Device``: no bytes to read or write through the VFS, nothing charged; only the known kinds exist."""
    v = VFS(fs_quota=100, max_files=10)
    dev = Dir(999, True, v.root)
    v.root.children["dev"] = dev
    dev.children["zero"] = Device(1000, "zero")
    with pytest.raises(VFSError):
        v.read_file("/dev/zero")
    with pytest.raises(VFSError):
        v.write_file("/dev/zero", b"x")
    assert (v.bytes_used, v.nodes_used) == (0, len(BASE_DIRS)) and v.collect_out() == {}
    assert set(DEVICES) == {"null", "zero", "random", "urandom"}
    with pytest.raises(ValueError, match="unknown device"):
        Device(1, "tty")
