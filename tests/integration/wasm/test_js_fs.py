"""JavaScript's node-like ``fs``, stdin, argv and env over our WASI and the in-memory VFS (real QuickJS).

Skipped when the QuickJS runtime is not installed in the user cache
(``python packaging/runtimes/install.py --only quickjs``).
"""

from __future__ import annotations

import json
import os

import pytest

from backends.wasm import WasmBackend
from playground.core import FSQuotaExceeded, Limits, Result, Sandbox, Spec
from playground.packs import javascript


@pytest.fixture(scope="module")
def js() -> Sandbox:
    sb = Sandbox(backends=[WasmBackend()], packs=[javascript.PACK])  # the user's cache, where install.py puts runtimes
    reason = sb.backends["wasm"].unavailable_reason(javascript.PACK)
    if reason is not None:
        pytest.skip(reason)
    return sb


async def run(sb: Sandbox, code: str, **kw: object) -> Result:
    return await sb.run(Spec(lang="js", code=code, **kw))  # type: ignore[arg-type]


async def out(sb: Sandbox, code: str, **kw: object) -> str:
    result = await run(sb, code, **kw)
    assert result.exit_code == 0, result.stderr.decode()
    return result.stdout.decode()


async def test_reads_input_files_as_text_or_bytes(js: Sandbox) -> None:
    code = """
    console.log(fs.readFileSync("/in/data.txt", "utf8"));
    console.log(fs.readFileSync("/in/data.txt", { encoding: "utf-8" }).length);
    const bytes = fs.readFileSync("/in/sub/x.bin");
    console.log(bytes instanceof Uint8Array, Array.from(bytes).join(","));
    """
    files = {"data.txt": "héllo".encode(), "sub/x.bin": b"\x00\x01\xff"}
    assert await out(js, code, files=files) == "héllo\n5\ntrue 0,1,255\n"


async def test_writes_out_files_from_strings_and_bytes(js: Sandbox) -> None:
    code = """
    fs.writeFileSync("/out/a.txt", "first é");
    fs.appendFileSync("/out/a.txt", "\\nsecond");
    fs.writeFileSync("/out/b.bin", new Uint8Array([1, 2, 3]));
    fs.writeFileSync("/out/c.bin", new Uint16Array([0x4241]).buffer);
    fs.writeFileSync("/work/scratch.txt", "not collected");
    """
    result = await run(js, code)
    assert result.exit_code == 0, result.stderr
    assert dict(result.files) == {"a.txt": "first é\nsecond".encode(), "b.bin": b"\x01\x02\x03", "c.bin": b"AB"}


async def test_directories_stat_rename_unlink(js: Sandbox) -> None:
    code = """
    console.log(fs.mkdirSync("/work/a/b/c", { recursive: true }));
    fs.mkdirSync("/work/a/b/c", { recursive: true });
    fs.writeFileSync("/work/a/b/c/f.txt", "12345");
    const st = fs.statSync("/work/a/b/c/f.txt");
    console.log(st.size, st.isFile(), st.isDirectory(), fs.statSync("/work/a").isDirectory());
    console.log(JSON.stringify(fs.readdirSync("/work/a/b/c")), fs.existsSync("/work/a/b/c/f.txt"),
                fs.existsSync("/nope"));
    fs.renameSync("/work/a/b/c/f.txt", "/out/moved.txt");
    fs.writeFileSync("/out/gone.txt", "x");
    fs.unlinkSync("/out/gone.txt");
    console.log(fs.existsSync("/work/a/b/c/f.txt"), fs.statSync("/nope", { throwIfNoEntry: false }));
    fs.rmSync("/work/a", { recursive: true });
    console.log(fs.existsSync("/work/a"), JSON.stringify(fs.readdirSync("/work")));
    try { fs.mkdirSync("/work/x/y"); } catch (e) { console.log(e.code); }
    """
    result = await run(js, code)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "/work/a"
    assert lines[1:] == [
        "5 true false true",
        '["f.txt"] true false',
        "false undefined",
        'false ["main.js"]',
        "ENOENT",
    ]
    assert dict(result.files) == {"moved.txt": b"12345"}


async def test_fs_is_importable_and_requirable(js: Sandbox) -> None:
    code = """
    import fs, { readFileSync } from "node:fs";
    import { readFile } from "fs/promises";
    import * as plain from "fs";
    console.log(fs === globalThis.fs, plain.readFileSync === readFileSync, require("fs") === fs);
    console.log(readFileSync("/in/a.txt", "utf8"), await readFile("/in/a.txt", "utf8"));
    """
    assert await out(js, code, files={"a.txt": b"A"}) == "true true true\nA A\n"


async def test_errors_are_node_style(js: Sandbox) -> None:
    code = """
    try { fs.readFileSync("/in/missing.txt"); } catch (e) {
      console.log(JSON.stringify([e instanceof Error, e.code, e.syscall, e.path, e.message]));
    }
    """
    got = json.loads(await out(js, code))
    message = "ENOENT: no such file or directory, open '/in/missing.txt'"
    assert got == [True, "ENOENT", "open", "/in/missing.txt", message]


@pytest.mark.parametrize("path", ["/in/data.txt", "/in/new.txt"])
async def test_writing_into_in_fails_read_only(js: Sandbox, path: str) -> None:
    code = f"""
    try {{ fs.writeFileSync({path!r}, "evil"); console.log("wrote"); }} catch (e) {{ console.log(e.code); }}
    console.log(fs.readFileSync("/in/data.txt", "utf8"));
    """
    assert await out(js, code, files={"data.txt": b"original"}) == "EROFS\noriginal\n"


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "/in/../../etc/passwd", "/proc/self/environ"])
async def test_no_path_leads_out_of_the_sandbox(js: Sandbox, path: str) -> None:
    code = f"""
    try {{ console.log(fs.readFileSync({path!r}, "utf8")); }} catch (e) {{ console.log(e.code); }}
    try {{ fs.writeFileSync({path!r}, "x"); console.log("wrote"); }} catch (e) {{ console.log(e.code); }}
    """
    codes = (await out(js, code)).split()
    assert len(codes) == 2
    assert all(c in ("ENOENT", "EACCES", "EPERM") for c in codes), codes


async def test_more_files_than_max_files_is_fs_quota(js: Sandbox) -> None:
    code = """
    let made = 0;
    try { for (let i = 0; i < 100; i++) { fs.writeFileSync("/work/f" + i, "x"); made++; } }
    catch (e) { console.log(e.code, made); }
    """
    with pytest.raises(FSQuotaExceeded) as info:
        await run(js, code, limits=Limits(max_files=20))
    result = info.value.result
    assert result is not None
    code_word, made = result.stdout.decode().split()
    assert code_word == "EDQUOT" and 0 < int(made) < 20


async def test_a_big_write_over_fs_quota_is_fs_quota(js: Sandbox) -> None:
    code = """
    try { fs.writeFileSync("/out/big.bin", new Uint8Array(3 * 1024 * 1024)); } catch (e) { console.log(e.code); }
    """
    with pytest.raises(FSQuotaExceeded) as info:
        await run(js, code, limits=Limits(fs_quota=1 << 20))
    assert info.value.result is not None
    assert info.value.result.stdout == b"EDQUOT\n"


async def test_stdin_whole(js: Sandbox) -> None:
    stdin = "line 1\nline 2\n"
    assert await out(js, "console.log(JSON.stringify(readStdin()))", stdin=stdin) == '"line 1\\nline 2\\n"\n'
    assert await out(js, "process.stdout.write(fs.readFileSync(0, 'utf8').toUpperCase())", stdin="abc") == "ABC"
    assert await out(js, "console.log(JSON.stringify(readStdin()))") == '""\n'


async def test_exit_codes(js: Sandbox) -> None:
    assert (await run(js, "process.exit(7)")).exit_code == 7
    assert (await run(js, "process.exitCode = 3")).exit_code == 3
    assert (await run(js, "throw new Error('x')")).exit_code == 1
    assert (await run(js, "console.log('fine')")).exit_code == 0


async def test_argv_and_script_args(js: Sandbox) -> None:
    code = "console.log(JSON.stringify([process.argv.slice(1), scriptArgs]))"
    got = json.loads(await out(js, code, args=["one", "two words"]))
    assert got == [["/work/main.js", "one", "two words"], ["/work/main.js", "one", "two words"]]


async def test_env_is_only_the_spec_env(js: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAYGROUND_HOST_SECRET", "leak")
    assert "PLAYGROUND_HOST_SECRET" in os.environ
    code = "console.log(JSON.stringify(process.env))"
    assert json.loads(await out(js, code, env={"GREETING": "hi", "N": "1"})) == {"GREETING": "hi", "N": "1"}
    assert json.loads(await out(js, code)) == {}


async def test_text_encoding_round_trip(js: Sandbox) -> None:
    code = """
    const bytes = new TextEncoder().encode("ü€");
    console.log(Array.from(bytes).join(","), new TextDecoder().decode(bytes));
    """
    assert await out(js, code) == "195,188,226,130,172 ü€\n"
