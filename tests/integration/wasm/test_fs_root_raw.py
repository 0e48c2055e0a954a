"""Issue #14 for raw WASI modules (the C probe guest, built with wasi-libc): the root, links, a caller's root.

A raw module's working directory is ``/``: wasi-libc starts every program
there and keeps its cwd inside the module, so no host can set it; a module
that wants ``/work`` calls ``chdir`` (the probe's ``cd``).
"""

from __future__ import annotations

import pytest

from playground.core import FSQuotaExceeded, Limits, Sandbox, Spec

EROFS, ELOOP, ENOENT, EPERM, EEXIST = 69, 32, 44, 63, 20
WORK = {"data.csv": b"a,b\n"}


async def probe(sb: Sandbox, wasm: bytes, *args: str, **kw: object) -> tuple[str, int]:
    result = await sb.run(Spec(lang="wasm", code=wasm, args=args, **kw))  # type: ignore[arg-type]
    return result.stdout.decode(), result.exit_code


def names(listing: str) -> list[str]:
    return sorted(n for n in listing.split() if n not in (".", ".."))


async def test_the_root_holds_the_layout_and_is_read_only(sandbox: Sandbox, probe_wasm: bytes) -> None:
    out, _ = await probe(sandbox, probe_wasm, "ls", "/")
    assert names(out) == ["dev", "in", "out", "tmp", "work"]
    assert await probe(sandbox, probe_wasm, "write", "/etc", "x") == (f"open errno={EROFS}\n", 1)
    assert await probe(sandbox, probe_wasm, "mkdir", "/etc") == (f"mkdir errno={EROFS}\n", 1)
    for name in ("/work", "/tmp", "/out"):
        assert await probe(sandbox, probe_wasm, "write", f"{name}/f", "x") == ("write ok\n", 0)


async def test_a_raw_module_starts_in_the_root_and_may_chdir(sandbox: Sandbox, probe_wasm: bytes) -> None:
    assert await probe(sandbox, probe_wasm, "cwd") == ("/\n", 0)
    assert await probe(sandbox, probe_wasm, "write", "rel.txt", "x") == (f"open errno={EROFS}\n", 1)
    assert await probe(sandbox, probe_wasm, "cd", "/work", "cwd") == ("/work\n", 0)
    assert await probe(sandbox, probe_wasm, "cd", "/work", "cat", "data.csv", work_files=WORK) == ("a,b\n", 0)
    out, _ = await probe(sandbox, probe_wasm, "cd", "/work", "ls", ".", work_files=WORK)
    assert names(out) == ["data.csv"]


async def test_work_files_are_there_and_writable(sandbox: Sandbox, probe_wasm: bytes) -> None:
    assert await probe(sandbox, probe_wasm, "cat", "/work/data.csv", work_files=WORK) == ("a,b\n", 0)
    assert await probe(sandbox, probe_wasm, "append", "/work/data.csv", "more", work_files=WORK) == ("write ok\n", 0)


@pytest.mark.parametrize("path", ["/..", "/../..", "/work/../..", "/in/../../../.."])
async def test_dotdot_at_the_root_stays_at_the_root(sandbox: Sandbox, probe_wasm: bytes, path: str) -> None:
    out, code = await probe(sandbox, probe_wasm, "ls", path)
    assert code == 0 and names(out) == ["dev", "in", "out", "tmp", "work"]
    assert await probe(sandbox, probe_wasm, "cat", f"{path}/work/data.csv", work_files=WORK) == ("a,b\n", 0)


async def test_links_create_read_follow(sandbox: Sandbox, probe_wasm: bytes) -> None:
    assert await probe(sandbox, probe_wasm, "symlink", "data.csv", "/work/l", work_files=WORK) == ("symlink ok\n", 0)
    cases = {
        ("readlink", "/work/l"): "data.csv\n",
        ("cat", "/work/l"): "a,b\n",
        ("lstat", "/work/l"): "link 8\n",
        ("cd", "/work", "cat", "l"): "a,b\n",
        ("symlink", "x", "/work/l"): f"symlink errno={EEXIST}\n",
    }
    for args, expected in cases.items():
        out, _ = await probe(sandbox, probe_wasm, "chain", "data.csv", "/work/l", *args, work_files=WORK)
        assert out == "symlink ok\n" + expected, args


async def test_loops_dangling_and_host_looking_links(sandbox: Sandbox, probe_wasm: bytes) -> None:
    checks = [
        (("loop", "/work/loop"), ("cat", "/work/loop"), f"open errno={ELOOP}\n"),
        (("nowhere", "/work/d"), ("cat", "/work/d"), f"open errno={ENOENT}\n"),
        (("nowhere", "/work/d"), ("lstat", "/work/d"), "link 7\n"),
        (("/etc/passwd", "/work/p"), ("cat", "/work/p"), f"open errno={ENOENT}\n"),
        (("../../../../../../etc/passwd", "/work/p"), ("cat", "/work/p"), f"open errno={ENOENT}\n"),
        (("/in/input.txt", "/work/i"), ("write", "/work/i", "x"), f"open errno={EROFS}\n"),
        (("/in/input.txt", "/work/i"), ("cat", "/work/i"), "secret"),
        (("/in", "/work/i"), ("write", "/work/i/new", "x"), f"open errno={EROFS}\n"),
    ]
    for (target, link), check, expected in checks:
        out, _ = await probe(sandbox, probe_wasm, "chain", target, link, *check, files={"input.txt": b"secret"})
        assert out == "symlink ok\n" + expected, (target, check)


async def test_hard_links_are_refused_with_eperm(sandbox: Sandbox, probe_wasm: bytes) -> None:
    assert await probe(sandbox, probe_wasm, "link", "/work/data.csv", "/work/h", work_files=WORK) == (
        f"link errno={EPERM}\n", 1
    )
    assert await probe(sandbox, probe_wasm, "link", "/work/missing", "/work/h") == (f"link errno={ENOENT}\n", 1)


async def test_links_count_against_max_files(sandbox: Sandbox, probe_wasm: bytes) -> None:
    with pytest.raises(FSQuotaExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=("links", "100"), limits=Limits(max_files=20)))
    result = info.value.result
    assert result is not None and result.stdout == b"linked 16 then errno=19\n"  # 4 base directories + 16 links


# -- a root of the caller's ----------------------------------------------------------------------


async def test_a_caller_root_is_the_guests_whole_filesystem(sandbox: Sandbox, probe_wasm: bytes) -> None:
    root = {"file": b"f", "writeable/.gitignore": b"", "etc/config": b"c"}
    out, _ = await probe(sandbox, probe_wasm, "ls", "/", root_files=root, files={"x": b"in"})
    assert names(out) == ["etc", "file", "in", "writeable"]
    assert await probe(sandbox, probe_wasm, "write", "/new.txt", "x", root_files=root) == ("write ok\n", 0)
    assert await probe(sandbox, probe_wasm, "write", "file", "y", root_files=root) == ("write ok\n", 0)
    assert await probe(sandbox, probe_wasm, "cat", "/etc/config", root_files=root) == ("c", 0)
    assert await probe(sandbox, probe_wasm, "write", "/in/x", "y", root_files=root, files={"x": b"in"}) == (
        f"open errno={EROFS}\n", 1
    )
    assert await probe(sandbox, probe_wasm, "ls", "/../..", root_files={}) == (".\n..\n", 0)


async def test_a_caller_root_counts_against_the_quota(sandbox: Sandbox, probe_wasm: bytes) -> None:
    with pytest.raises(FSQuotaExceeded, match="input files do not fit"):
        await sandbox.run(
            Spec(lang="wasm", code=probe_wasm, root_files={"big": b"x" * 2000}, limits=Limits(fs_quota=1000))
        )
    with pytest.raises(FSQuotaExceeded) as info:  # the probe makes /work/f0... in a root that only has /work
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=("many", "100"), root_files={"work/seed": b""},
                               limits=Limits(max_files=10)))  # fmt: skip
    result = info.value.result
    assert result is not None and result.stdout == b"created 8 then errno=19\n"  # work, work/seed and 8 files
