"""Issue #14: the same program gives the same output on the Wasm tier and in a container.

Both tiers present ``/in`` (read-only), ``/work`` (the working directory,
with the caller's work files and the program under the user's name),
``/out`` and ``/tmp``. The programs below print only what both should
agree on: a container's ``/`` also holds the image (``bin``, ``etc`` ...),
so they look at the layout's four directories, and a refused write into
``/in`` is ``EROFS`` on Wasm and ``EACCES`` in the container (read-only by
permission), so they print that it was refused. Needs the daemon and the
python and node images, and the Wasm runtimes (skipped without them,
failed under ``CI=true``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from backends.docker.engine import Engine
from backends.wasm import WasmBackend
from playground.core import WASM_ONLY, Result, Sandbox, Spec
from playground.packs import javascript, node, python

from .conftest import require_image

WORK = {"data.csv": b"a,b\n1,2\n", "lib/helper.py": b"X = 42\n", "lib/helper.mjs": b"export const x = 42;\n"}
INPUTS = {"input.txt": b"read only\n"}

PYTHON = """
import errno, glob, os, sys
sys.path.insert(0, "lib")
import helper
def refused(f):
    try:
        f()
    except OSError as e:
        return errno.errorcode[e.errno] if e.errno in (errno.ELOOP, errno.ENOENT) else "refused"
    return "allowed"
print("cwd", os.getcwd(), sys.argv[0], __file__)
print("layout", [d for d in ("in", "out", "tmp", "work") if os.path.isdir("/" + d)])
with open("notes.txt", "w") as f:
    f.write("hello")
print("read", open("notes.txt").read(), open("data.csv").read().splitlines()[1], helper.X)
print("list", sorted(os.listdir(".")), sorted(glob.glob("*.csv")))
os.makedirs("sub/deeper", exist_ok=True)
open("sub/deeper/x.txt", "w").write("x")
print("walk", [(r, sorted(d), sorted(f)) for r, d, f in sorted(os.walk("/work"))])
print("in", open("/in/input.txt").read().strip(), refused(lambda: open("/in/new.txt", "w")))
open("/tmp/t", "w").write("t")
print("tmp", open("/tmp/t").read())
os.symlink("notes.txt", "link.txt")
print("link", os.readlink("link.txt"), open("link.txt").read(), os.path.islink("link.txt"))
os.symlink("loop", "loop")
os.symlink("missing", "dangling")
print("bad links", refused(lambda: open("loop")), refused(lambda: open("dangling")), os.path.lexists("dangling"))
os.symlink("/in/input.txt", "in_link")
print("into in", open("in_link").read().strip(), refused(lambda: open("in_link", "w")))
open("/out/result.txt", "w").write("done")
os.symlink("result.txt", "/out/result_link")
print("relative", open("../work/notes.txt").read(), os.path.exists("/work/../in/input.txt"))
"""

#: An ES module (main.mjs) on both: relative imports of the caller's files work in QuickJS and node alike.
JAVASCRIPT = """
import fs from "fs";
import { x } from "./lib/helper.mjs";
const refused = (f) => { try { f(); return "allowed"; } catch (e) {
  return ["ELOOP", "ENOENT"].includes(e.code) ? e.code : "refused"; } };
console.log("cwd", process.cwd());
console.log("layout", ["in", "out", "tmp", "work"].filter((d) => fs.statSync("/" + d).isDirectory()).join(","));
fs.writeFileSync("notes.txt", "hello");
console.log("read", fs.readFileSync("notes.txt", "utf8"), fs.readFileSync("data.csv", "utf8").split("\\n")[1], x);
console.log("list", fs.readdirSync(".").sort().join(","));
fs.mkdirSync("sub/deeper", { recursive: true });
fs.writeFileSync("sub/deeper/x.txt", "x");
console.log("deep", fs.readdirSync("sub/deeper").join(","), fs.readFileSync("./sub/../sub/deeper/x.txt", "utf8"));
console.log("in", refused(() => fs.writeFileSync("/in/new.txt", "no")));
fs.symlinkSync("notes.txt", "link.txt");
console.log("link", fs.readlinkSync("link.txt"), fs.readFileSync("link.txt", "utf8"),
            fs.lstatSync("link.txt").isSymbolicLink());
fs.symlinkSync("loop", "loop");
fs.symlinkSync("missing", "dangling");
console.log("bad links", refused(() => fs.readFileSync("loop")), refused(() => fs.readFileSync("dangling")));
fs.writeFileSync("/out/result.txt", "done");
"""


@pytest.fixture(scope="module")
def wasm() -> Iterator[Sandbox]:
    sb = Sandbox(backends=[WasmBackend()], packs=[python.PACK, javascript.PACK], policy=WASM_ONLY)
    yield sb
    sb.close()


def need_wasm(sb: Sandbox, lang: str) -> None:
    reason = sb.backends["wasm"].unavailable_reason(sb.pack(lang))
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must have every runtime installed: {reason}")
        pytest.skip(reason)


async def both(
    wasm: Sandbox, docker: Sandbox, langs: tuple[str, str], code: str, **kw: object
) -> tuple[Result, Result]:
    results = []
    for sb, lang in ((wasm, langs[0]), (docker, langs[1])):
        result = await sb.run(Spec(lang=lang, code=code, files=INPUTS, work_files=WORK, **kw))  # type: ignore[arg-type]
        assert result.exit_code == 0, (sb.policy, result.stderr.decode())
        results.append(result)
    return results[0], results[1]


async def test_python_behaves_the_same_on_both_tiers(engine: Engine, sandbox: Sandbox, wasm: Sandbox) -> None:
    require_image(engine, python.PACK)
    need_wasm(wasm, "python")
    on_wasm, in_docker = await both(wasm, sandbox, ("python", "python"), PYTHON, main_file="analysis.py")
    assert (on_wasm.backend, in_docker.backend) == ("wasm", "docker")
    assert on_wasm.stdout.decode() == in_docker.stdout.decode()
    assert on_wasm.stdout.decode().splitlines()[:2] == [
        "cwd /work /work/analysis.py /work/analysis.py",
        "layout ['in', 'out', 'tmp', 'work']",
    ]
    assert dict(on_wasm.files) == dict(in_docker.files) == {"result.txt": b"done"}  # links are never exported


async def test_javascript_behaves_the_same_on_both_tiers(engine: Engine, sandbox: Sandbox, wasm: Sandbox) -> None:
    require_image(engine, node.PACK)
    need_wasm(wasm, "javascript")
    on_wasm, in_docker = await both(wasm, sandbox, ("javascript", "node"), JAVASCRIPT, main_file="main.mjs")
    assert on_wasm.stdout.decode() == in_docker.stdout.decode()
    assert on_wasm.stdout.decode().splitlines()[:3] == [
        "cwd /work",
        "layout in,out,tmp,work",
        "read hello 1,2 42",
    ]
    assert dict(on_wasm.files) == dict(in_docker.files) == {"result.txt": b"done"}


async def test_a_traceback_names_the_users_file_on_both_tiers(engine: Engine, sandbox: Sandbox, wasm: Sandbox) -> None:
    require_image(engine, python.PACK)
    need_wasm(wasm, "python")
    for sb in (wasm, sandbox):
        result = await sb.run(Spec(lang="python", code="x = 1\n1 / 0\n", main_file="analysis.py"))
        assert result.exit_code == 1
        assert 'File "/work/analysis.py", line 2, in <module>' in result.stderr.decode(), sb.policy


async def test_work_files_count_and_cannot_replace_the_program(engine: Engine, sandbox: Sandbox) -> None:
    from playground.core import FSQuotaExceeded, InvalidSpec, Limits

    require_image(engine, python.PACK)
    with pytest.raises(InvalidSpec, match=r"main\.py"):
        await sandbox.run(Spec(lang="python", code="print(1)", work_files={"main.py": b"print(2)"}))
    with pytest.raises(FSQuotaExceeded, match="do not fit"):
        await sandbox.run(Spec(lang="python", code="print(1)", work_files={"big": b"x" * (2 << 20)},
                               limits=Limits(fs_quota=1 << 20)))  # fmt: skip
