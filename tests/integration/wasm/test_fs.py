"""The guest's filesystem: /in read-only, /work and /out writable, no way out, quotas enforced."""

from __future__ import annotations

import pytest

from playground.core import FSQuotaExceeded, Limits, Sandbox, Spec

# wasi-libc errno values are the WASI ones.
EPERM, ENOENT, EROFS, ENOTCAPABLE, EDQUOT = 63, 44, 69, 76, 19


async def probe(sb: Sandbox, wasm: bytes, *args: str, **kw: object) -> tuple[str, int]:
    result = await sb.run(Spec(lang="wasm", code=wasm, args=args, **kw))  # type: ignore[arg-type]
    return result.stdout.decode(), result.exit_code


async def test_reads_input_files(sandbox: Sandbox, probe_wasm: bytes) -> None:
    files = {"data.txt": b"payload", "sub/dir/x.bin": b"\x00\x01"}
    assert await probe(sandbox, probe_wasm, "cat", "/in/data.txt", files=files) == ("payload", 0)
    assert await probe(sandbox, probe_wasm, "cat", "/in/sub/dir/x.bin", files=files) == ("\x00\x01", 0)
    out, _ = await probe(sandbox, probe_wasm, "ls", "/in", files=files)
    assert out.split() == [".", "..", "data.txt", "sub"]


async def test_out_files_are_collected(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["write", "/out/report.txt", "hi there"]))
    assert result.stdout == b"write ok\n"
    assert dict(result.files) == {"report.txt": b"hi there"}


async def test_work_is_writable_but_not_collected(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["write", "/work/tmp.txt", "x"]))
    assert result.stdout == b"write ok\n"
    assert dict(result.files) == {}


@pytest.mark.parametrize("path", ["/in/data.txt", "/in/new.txt", "/in/sub/new.txt"])
async def test_writing_into_in_fails(sandbox: Sandbox, probe_wasm: bytes, path: str) -> None:
    files = {"data.txt": b"original", "sub/keep": b""}
    out, code = await probe(sandbox, probe_wasm, "write", path, "evil", files=files)
    assert (out, code) == (f"open errno={EROFS}\n", 1)
    assert await probe(sandbox, probe_wasm, "cat", "/in/data.txt", files=files) == ("original", 0)


async def test_in_cannot_be_modified_by_unlink_rename_or_mkdir(sandbox: Sandbox, probe_wasm: bytes) -> None:
    files = {"data.txt": b"x"}
    assert await probe(sandbox, probe_wasm, "unlink", "/in/data.txt", files=files) == (f"unlink errno={EROFS}\n", 1)
    assert (await probe(sandbox, probe_wasm, "rename", "/in/data.txt", "/work/d", files=files))[1] == 1
    assert await probe(sandbox, probe_wasm, "mkdir", "/in/d", files=files) == (f"mkdir errno={EROFS}\n", 1)


@pytest.mark.parametrize(
    "path",
    ["/in/../../etc/passwd", "/work/../../../etc/passwd", "../../../etc/passwd", "/etc/passwd", "/proc/self/environ",
     "/work/../in/../../x"],
)  # fmt: skip
async def test_no_path_leads_out_of_the_sandbox(sandbox: Sandbox, probe_wasm: bytes, path: str) -> None:
    out, code = await probe(sandbox, probe_wasm, "cat", path)
    assert code == 1
    assert out.startswith("open errno=")
    assert int(out.split("=")[1]) in (EPERM, ENOENT, ENOTCAPABLE)


async def test_dotdot_inside_the_tree_works(sandbox: Sandbox, probe_wasm: bytes) -> None:
    out, code = await probe(sandbox, probe_wasm, "cat", "/work/../in/a.txt", files={"a.txt": b"A"})
    assert (out, code) in (("A", 0), (f"open errno={EPERM}\n", 1))


async def test_rename_and_append(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["seek"]))
    assert result.stdout == b"cd 6\n"


async def test_too_many_files_is_fs_quota_with_partial_result(sandbox: Sandbox, probe_wasm: bytes) -> None:
    with pytest.raises(FSQuotaExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["many", "100"], limits=Limits(max_files=20)))
    result = info.value.result
    assert result is not None
    # 4 base directories (/in /work /out /tmp) + 16 files fit; the 17th create fails with EDQUOT.
    assert result.stdout == f"created 16 then errno={EDQUOT}\n".encode()
    assert result.usage.fs_files == 20


async def test_one_big_write_over_quota_is_refused_whole(sandbox: Sandbox, probe_wasm: bytes) -> None:
    with pytest.raises(FSQuotaExceeded) as info:
        await sandbox.run(
            Spec(lang="wasm", code=probe_wasm, args=["big", str(2 << 20)], limits=Limits(fs_quota=1 << 20))
        )
    result = info.value.result
    assert result is not None
    assert result.stdout == f"wrote -1 errno={EDQUOT}\n".encode()
    assert result.usage.fs_bytes == 0
