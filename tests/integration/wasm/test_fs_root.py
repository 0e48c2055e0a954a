"""Issue #14: one filesystem rooted at ``/`` and ``/work`` as the working directory, in every language.

Real runtimes (skipped without them, failed under ``CI=true``). Each
language reads, writes and lists relative paths, sees ``/`` as
``dev in out tmp work`` (``/dev``: ``test_devices``), reads files the
caller put in ``/work``, and (where its standard library can) makes and follows symbolic links: a link, a
loop (ELOOP), a dangling link, a link into read-only ``/in``.
"""

from __future__ import annotations

import json

import pytest

from backends.wasm import WasmBackend
from playground.core import InvalidSpec, Result, Sandbox, Session, SessionConfig, Spec
from playground.packs import javascript, lua, python, typescript
from playground.serve import start_service_proxy
from tests.integration.wasm.conftest import require_runtime

PACKS = [python.PACK, javascript.PACK, typescript.PACK, lua.PACK]
WORK = {"data.csv": b"a,b\n1,2\n", "lib/helper.py": b"X = 42\n", "lib.js": b"export const x = 42;\n"}
INPUTS = {"input.txt": b"read only\n"}


@pytest.fixture(scope="module")
def real() -> Sandbox:
    # the user's cache, where install.py puts runtimes
    return Sandbox(backends=[WasmBackend()], packs=PACKS, proxy_starter=start_service_proxy)


def need(sb: Sandbox, lang: str) -> None:
    require_runtime(sb.backends["wasm"], sb.pack(lang))


async def run(sb: Sandbox, lang: str, code: str, **kw: object) -> Result:
    need(sb, lang)
    result = await sb.run(Spec(lang=lang, code=code, files=INPUTS, work_files=WORK, **kw))  # type: ignore[arg-type]
    assert result.exit_code == 0, result.stderr.decode()
    return result


# -- relative paths, listing, the caller's files ----------------------------------------------

PY_FILES = """
import glob, os, sys
sys.path.insert(0, "lib")
import helper
print("cwd", os.getcwd())
print("root", sorted(os.listdir("/")))
with open("notes.txt", "w") as f:
    f.write("hello")
print("read", open("notes.txt").read(), open("data.csv").read().splitlines()[1], helper.X)
print("list", sorted(os.listdir(".")))
print("glob", sorted(glob.glob("*.csv")))
os.makedirs("sub/deeper", exist_ok=True)
open("sub/deeper/x.txt", "w").write("x")
open("/out/result.txt", "w").write(open("/in/input.txt").read().upper())
for root, dirs, files in os.walk("/"):
    print("walk", root, sorted(dirs), sorted(files))
"""


async def test_python_relative_paths_listing_and_walk(real: Sandbox) -> None:
    result = await run(real, "python", PY_FILES)
    assert result.stdout.decode().splitlines() == [
        "cwd /work",
        "root ['dev', 'in', 'out', 'tmp', 'work']",
        "read hello 1,2 42",
        "list ['data.csv', 'lib', 'lib.js', 'main.py', 'notes.txt']",
        "glob ['data.csv']",
        "walk / ['dev', 'in', 'out', 'tmp', 'work'] []",
        "walk /dev [] ['null', 'random', 'urandom', 'zero']",
        "walk /in [] ['input.txt']",
        "walk /out [] ['result.txt']",
        "walk /tmp [] []",
        "walk /work ['lib', 'sub'] ['data.csv', 'lib.js', 'main.py', 'notes.txt']",
        "walk /work/lib [] ['helper.py']",
        "walk /work/sub ['deeper'] []",
        "walk /work/sub/deeper [] ['x.txt']",
    ]
    assert dict(result.files) == {"result.txt": b"READ ONLY\n"}


JS_FILES = """
import { x } from "./lib.js";
const fs = require("fs");
console.log("cwd", process.cwd());
console.log("root", JSON.stringify(fs.readdirSync("/")));
fs.writeFileSync("notes.txt", "hello");
console.log("read", fs.readFileSync("notes.txt", "utf8"), fs.readFileSync("data.csv", "utf8").split("\\n")[1], x);
console.log("list", JSON.stringify(fs.readdirSync(".")));
fs.mkdirSync("sub/deeper", { recursive: true });
fs.writeFileSync("sub/deeper/x.txt", "x");
console.log("deep", fs.readFileSync("./sub/../sub/deeper/x.txt", "utf8"));
"""


@pytest.mark.parametrize("lang", ["javascript", "typescript"])
async def test_js_and_ts_relative_paths_and_listing(real: Sandbox, lang: str) -> None:
    code = JS_FILES if lang == "javascript" else JS_FILES.replace("import { x }", "const y: number = 1;\nimport { x }")
    result = await run(real, lang, code)
    assert result.stdout.decode().splitlines() == [
        "cwd /work",
        'root ["dev","in","out","tmp","work"]',
        "read hello 1,2 42",
        # the program is stored as the user's file: main.ts for TypeScript (so errors name it)
        f'list ["data.csv","lib","lib.js","main.{"js" if lang == "javascript" else "ts"}","notes.txt"]',
        "deep x",
    ]


async def test_lua_relative_paths_and_work_files(real: Sandbox) -> None:
    # Plain Lua has no directory listing and no link calls; it reads and writes relative paths.
    code = """
local f = assert(io.open("notes.txt", "w")); f:write("hello"); f:close()
print("read", io.open("notes.txt"):read("a"), io.open("data.csv"):read("a"):match("\\n(.-)\\n"))
print("up", io.open("../work/notes.txt"):read("a"), io.open("../../in/input.txt"):read("l"))
local ok, err = io.open("/in/new.txt", "w")
print("in", ok, err)
"""
    result = await run(real, "lua", code)
    assert result.stdout.decode().splitlines() == [
        "read\thello\t1,2",
        "up\thello\tread only",
        "in\tnil\t/in/new.txt: Read-only file system",
    ]


async def test_the_program_file_keeps_the_users_name(real: Sandbox) -> None:
    need(real, "python")
    result = await real.run(Spec(lang="python", code="import os\nprint(os.listdir('.'))\n1 / 0\n",
                                 main_file="analysis.py"))  # fmt: skip
    assert result.exit_code == 1
    assert result.stdout == b"['analysis.py']\n"
    stderr = result.stderr.decode()
    assert 'File "/work/analysis.py", line 3, in <module>' in stderr and "<string>" not in stderr
    assert stderr.startswith("Traceback (most recent call last):\n")


async def test_a_work_file_named_like_the_program_is_refused(real: Sandbox) -> None:
    need(real, "python")
    with pytest.raises(InvalidSpec, match=r"main\.py"):
        await real.run(Spec(lang="python", code="print(1)", work_files={"main.py": b"print(2)"}))


# -- symbolic links ------------------------------------------------------------------------------

PY_LINKS = """
import errno, os
def err(f):
    try:
        f()
    except OSError as e:
        return errno.errorcode[e.errno]
os.symlink("notes.txt", "link.txt")
open("link.txt", "w").write("through the link")
print("follow", open("notes.txt").read(), os.readlink("link.txt"), os.path.islink("link.txt"))
os.symlink("loop", "loop")
print("loop", err(lambda: open("loop")))
os.symlink("missing", "dangling")
print("dangling", os.path.exists("dangling"), os.path.lexists("dangling"), err(lambda: open("dangling")))
os.symlink("/in/input.txt", "in_link")
print("in", open("in_link").read().strip(), err(lambda: open("in_link", "w")))
os.symlink("/etc/passwd", "host")
print("host", err(lambda: open("host")))
os.symlink("/work", "/out/work_link")
os.symlink("../../../../tmp", "up")
print("up", os.listdir("up"), sorted(os.listdir("up/..")))
print("lstat", os.lstat("link.txt").st_size, os.stat("link.txt").st_size)
"""


async def test_python_symlinks(real: Sandbox) -> None:
    result = await run(real, "python", "open('notes.txt', 'w').write('x')\n" + PY_LINKS)
    assert result.stdout.decode().splitlines() == [
        "follow through the link notes.txt True",
        "loop ELOOP",
        "dangling False True ENOENT",
        "in read only EROFS",
        "host ENOENT",
        "up [] ['dev', 'in', 'out', 'tmp', 'work']",  # ".." climbs no higher than /
        "lstat 9 16",
    ]
    assert dict(result.files) == {}  # a link under /out is not exported


JS_LINKS = """
const fs = require("fs");
const err = (f) => { try { f(); return "ok"; } catch (e) { return e.code; } };
fs.writeFileSync("notes.txt", "x");
fs.symlinkSync("notes.txt", "link.txt");
fs.writeFileSync("link.txt", "through the link");
console.log("follow", fs.readFileSync("notes.txt", "utf8"), fs.readlinkSync("link.txt"),
            fs.lstatSync("link.txt").isSymbolicLink(), fs.statSync("link.txt").isFile());
fs.symlinkSync("loop", "loop");
console.log("loop", err(() => fs.readFileSync("loop")));
fs.symlinkSync("missing", "dangling");
console.log("dangling", fs.existsSync("dangling"), err(() => fs.readFileSync("dangling")));
fs.symlinkSync("/in/input.txt", "in_link");
console.log("in", err(() => fs.writeFileSync("in_link", "no")));
fs.symlinkSync("/etc/passwd", "host");
console.log("host", err(() => fs.readFileSync("host")));
fs.mkdirSync("d"); fs.writeFileSync("d/keep", "k"); fs.symlinkSync("d", "dlink");
fs.rmSync("dlink", { recursive: true });
console.log("rm", fs.existsSync("d/keep"), fs.existsSync("dlink"));
"""


async def test_js_symlinks(real: Sandbox) -> None:
    result = await run(real, "javascript", JS_LINKS)
    assert result.stdout.decode().splitlines() == [
        "follow through the link notes.txt true true",
        "loop ELOOP",
        "dangling false ENOENT",
        "in EROFS",
        "host ENOENT",
        "rm true false",  # removing a link to a directory removes the link, never the directory's files
    ]


# -- REPL sessions and served programs start in /work too ------------------------------------------

REPL = {
    "python": ("import os; open('s.txt', 'w').write('kept'); print(os.getcwd())", "print(open('s.txt').read())"),
    "javascript": ("fs.writeFileSync('s.txt', 'kept'); console.log(process.cwd())",
                   "console.log(fs.readFileSync('s.txt', 'utf8'))"),
    "lua": ("local f = io.open('s.txt', 'w'); f:write('kept'); f:close(); print(io.open('/work/s.txt'):read('a'))",
            "print(io.open('s.txt'):read('a'))"),
}  # fmt: skip


@pytest.mark.parametrize("lang", sorted(REPL))
async def test_sessions_start_in_work(real: Sandbox, lang: str) -> None:
    need(real, lang)
    session: Session = await real.new_session(lang, SessionConfig())
    try:
        first, second = REPL[lang]
        one = await session.eval(first)
        two = await session.eval(second)
        assert (one.exit_code, two.exit_code) == (0, 0), (one.stderr, two.stderr)
        assert one.stdout.decode().strip() in ("/work", "kept")
        assert two.stdout == b"kept\n"
    finally:
        session.close()


async def test_a_served_program_starts_in_work_with_its_files(real: Sandbox) -> None:
    import aiohttp

    need(real, "javascript")
    code = 'export default { fetch() { return Response.json({ cwd: process.cwd(), data: fs.readFileSync("data.csv", "utf8") }); } };'  # noqa: E501
    service = await real.serve(Spec(lang="js", code=code, work_files={"data.csv": b"a,b\n"}))
    try:
        async with (
            aiohttp.ClientSession() as client,
            client.get(service.url, headers={"Authorization": f"Bearer {service.token}"}) as response,
        ):
            assert json.loads(await response.read()) == {"cwd": "/work", "data": "a,b\n"}
    finally:
        await service.stop()
