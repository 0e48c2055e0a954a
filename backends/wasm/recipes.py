"""How the runtimes we compile ourselves are built: zig recipes and the zig toolchain.

Two runtimes (QuickJS with our driver, Lua 5.4 with our attempt hooks and allocator:
``runtime_sources/lua/playground_lua.c``) are compiled from registry
sdists on the user's machine; nothing third-party is stored in the
repository. The compiler is PyPI's ``ziglang`` (a zig binary in a wheel, for
every platform pip supports). It is a build tool, not a runtime dependency:
when this interpreter does not already have the pinned version (the ``[dev]``
extra installs it), it is fetched into a temporary directory for the builds
and removed at exit, so a fresh ``pip install`` needs nothing extra. The
build output is checked against the runtime's pinned SHA-256 either way, so
the toolchain is trusted no further than its result.

Builds run in ``<tmp>/b`` (sources under ``<tmp>/b/src``); ``-ffile-prefix-map``
maps that directory to ``.`` so the temporary path cannot leak into the output
(``__FILE__`` in assert messages), and ``--strip-debug`` drops the DWARF that
zig's libc objects carry. Result: identical bytes from any checkout path.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from playground.resource_files import resource_path

ZIG_WASI: Final = ["-target", "wasm32-wasi", "-O2", "-D_WASI_EMULATED_SIGNAL", "-D_WASI_EMULATED_PROCESS_CLOCKS"]
ZIG_WASI_LIBS: Final = [
    "-lwasi-emulated-signal",
    "-lwasi-emulated-process-clocks",
    "-lm",
    "-Wl,--strip-debug",
]

QJS_SOURCES: Final = [
    "upstream-quickjs/" + n
    for n in (
        "quickjs.c", "libregexp.c", "libunicode.c", "dtoa.c",
        "quickjs.h", "quickjs-atom.h", "quickjs-opcode.h", "quickjs-c-atomics.h",
        "cutils.h", "list.h", "dtoa.h", "libregexp.h", "libregexp-opcode.h",
        "libunicode.h", "libunicode-table.h",
        "builtin-array-fromasync.h", "builtin-iterator-zip.h",
        "builtin-iterator-zip-keyed.h",
    )
]  # fmt: skip

LUA_DIR: Final = "third-party/lua54/"
LUA_SOURCES: Final = [
    LUA_DIR + n
    for n in (
        "onelua.c", "lprefix.h", "luaconf.h", "lua.h", "lualib.h", "lauxlib.h",
        "lapi.c", "lapi.h", "lauxlib.c", "lbaselib.c", "lcode.c", "lcode.h",
        "lcorolib.c", "lctype.c", "lctype.h", "ldblib.c", "ldebug.c", "ldebug.h",
        "ldo.c", "ldo.h", "ldump.c", "lfunc.c", "lfunc.h", "lgc.c", "lgc.h",
        "linit.c", "liolib.c", "ljumptab.h", "llex.c", "llex.h", "llimits.h",
        "lmathlib.c", "lmem.c", "lmem.h", "loadlib.c", "lobject.c", "lobject.h",
        "lopcodes.c", "lopcodes.h", "lopnames.h", "loslib.c", "lparser.c",
        "lparser.h", "lstate.c", "lstate.h", "lstring.c", "lstring.h",
        "lstrlib.c", "ltable.c", "ltable.h", "ltablib.c", "ltm.c", "ltm.h",
        "lua.c", "lundump.c", "lundump.h", "lutf8lib.c", "lvm.c", "lvm.h",
        "lzio.c", "lzio.h",
    )
]  # fmt: skip


class BuildError(Exception):
    """A download, extraction or compile step failed; the message has the command's tail."""


def run_tool(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a build tool; its output is kept for the error message only."""
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-40:])
        raise BuildError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")
    return proc.stdout


def embedded_sources(files: dict[str, bytes]) -> str:
    """A C header that holds each of ``files`` as ``static const char node_compat_NAME[]`` (NUL-terminated,
    byte by byte), and the table ``node_compat_files`` of the others than ``core``, by name.

    The driver's Node compatibility layer is JavaScript kept in files of its
    own (``node_compat/*.js``): readable and checkable as JavaScript, where C
    string literals would need every quote and backslash escaped. The core
    runs at set-up; the table's files are compiled when first used.
    """
    out = []
    for name, text in files.items():
        rows = [", ".join(f"0x{b:02x}" for b in text[i : i + 16]) for i in range(0, len(text), 16)]
        out.append(f"static const char node_compat_{name}[] = {{\n" + ",\n".join(rows) + ",\n0x00 };\n")
    entries = [f'    {{"{n}", node_compat_{n}, sizeof node_compat_{n} - 1}},' for n in files if n != "core"]
    out.append(
        "static const struct { const char *name; const char *source; size_t length; } node_compat_files[] = {\n"
        + "\n".join(entries)
        + "\n};\n"
    )
    return "".join(out)


def _recipe_quickjs(src_dir: Path, out: Path) -> list[str]:
    q = "src/upstream-quickjs/"
    for name in ("driver.c", "qjs_snapshot.c"):  # qjs_snapshot.c includes quickjs.c (Math.random reseed)
        shutil.copy(resource_path("runtime_sources", "quickjs", name), src_dir / name)
    compat = resource_path("runtime_sources", "quickjs", "node_compat")
    files = {p.stem: p.read_bytes() for p in sorted(compat.iterdir(), key=lambda p: p.name) if p.suffix == ".js"}
    (src_dir / "node_compat.h").write_text(embedded_sources(files))
    return [
        *ZIG_WASI, "-D_GNU_SOURCE", "-I" + q,
        "src/qjs_snapshot.c", q + "libregexp.c", q + "libunicode.c", q + "dtoa.c",
        "src/driver.c",
        *ZIG_WASI_LIBS, "-Wl,-z,stack-size=1048576", "-o", str(out),
    ]  # fmt: skip


def _recipe_lua(src_dir: Path, out: Path) -> list[str]:
    for name in ("wasi_shim.c", "playground_lua.c"):  # playground_lua.c includes onelua.c and lua.c (the hooks)
        shutil.copy(resource_path("runtime_sources", "lua", name), src_dir / name)
    return [
        *ZIG_WASI,
        "-mexception-handling", "-mllvm", "-wasm-enable-sjlj",
        "-mllvm", "-wasm-use-legacy-eh=false",
        "-Dl_system(cmd)=((cmd)==NULL?0:-1)",
        "-Dlua_tmpnam(b,e)={e=1;}", "-DLUA_TMPNAMBUFSIZE=32",
        '-Dlua_writeline()=lua_writestring("\\n",1)',
        "-Wno-deprecated-declarations",
        "-Isrc/" + LUA_DIR, "src/playground_lua.c", "src/wasi_shim.c",
        *ZIG_WASI_LIBS, "-o", str(out),
    ]  # fmt: skip


@dataclass(frozen=True)
class Recipe:
    """Which sdist members a build needs and the zig arguments that compile them."""

    members: list[str]
    arguments: Callable[[Path, Path], list[str]]


RECIPES: Final = {
    "quickjs-ng-qjs": Recipe(QJS_SOURCES, _recipe_quickjs),
    "lua54-onelua": Recipe(LUA_SOURCES, _recipe_lua),
}


@dataclass(frozen=True)
class Zig:
    """A runnable ``python -m ziglang`` (command prefix and the environment it needs)."""

    command: list[str]
    env: dict[str, str]
    version: str


def _probe(env: dict[str, str]) -> str | None:
    proc = subprocess.run(
        [sys.executable, "-m", "ziglang", "version"], capture_output=True, text=True, env=env, check=False
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


_zigs: dict[str, Zig] = {}
_zigs_lock = threading.Lock()


def zig_for(version: str, progress: Callable[[str], None]) -> Zig:
    """The pinned zig: this interpreter's if it has that version, else one fetched from PyPI.

    A fetched copy (about 50 MB from PyPI's ``ziglang`` wheel for this
    platform) is kept in a temporary directory for the rest of the process,
    so one set-up fetches it once for all its builds, and removed at exit.
    """
    with _zigs_lock:
        if version not in _zigs:
            _zigs[version] = _find_or_fetch_zig(version, progress)
        return _zigs[version]


def _find_or_fetch_zig(version: str, progress: Callable[[str], None]) -> Zig:
    base_env = dict(os.environ)
    if _probe(base_env) == version:
        return Zig([sys.executable, "-m", "ziglang"], base_env, version)
    tmp = tempfile.mkdtemp(prefix="playground-zig-")
    atexit.register(shutil.rmtree, tmp, True)
    progress(f"  fetching the zig compiler (PyPI ziglang=={version}, about 50 MB; removed afterwards)")
    run_tool(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-input", "--no-deps", "--only-binary", ":all:", "--target", tmp, f"ziglang=={version}",
        ]
    )  # fmt: skip
    env = dict(base_env, PYTHONPATH=tmp + os.pathsep + base_env.get("PYTHONPATH", ""))
    got = _probe(env)
    if got != version:
        raise BuildError(f"the fetched ziglang reports version {got!r}, expected {version}")
    return Zig([sys.executable, "-m", "ziglang"], env, version)
