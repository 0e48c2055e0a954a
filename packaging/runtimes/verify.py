#!/usr/bin/env python3
"""Dev tool: smoke-test the installed runtimes with wasmtime's built-in WASI.

    python packaging/runtimes/verify.py [--only NAME ...]

Run install.py first. This uses wasmtime.WasiConfig with a temporary preopen
directory: acceptable in a developer tool only. The application must use its
own WASI over the in-memory VFS and never WasiConfig preopens.

Prints, for each runtime, the WASI functions it imports (what our own WASI
preview1 has to provide) and the result of each check; exits 1 on failure.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import wasmtime

HERE = Path(__file__).resolve().parent
MANIFEST = HERE.parent.parent / "resources" / "runtimes.json"
MAX_WASM_STACK = 2 * 1024 * 1024  # never above 2 MiB: wasmtime-py aborts


def cache_root() -> Path:
    if os.environ.get("PLAYGROUND_CACHE_DIR"):
        return Path(os.environ["PLAYGROUND_CACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "sandbox-playground"


class Runner:
    def __init__(self, wasm: Path) -> None:
        cfg = wasmtime.Config()
        cfg.max_wasm_stack = MAX_WASM_STACK
        self.engine = wasmtime.Engine(cfg)
        t0 = time.monotonic()
        self.module = wasmtime.Module.from_file(self.engine, str(wasm))
        self.compile_s = time.monotonic() - t0
        self.linker = wasmtime.Linker(self.engine)
        self.linker.define_wasi()

    def imports(self) -> list[str]:
        return [f"{i.module}.{i.name}" if i.module != "wasi_snapshot_preview1" else i.name
                for i in self.module.imports]

    def run(self, argv: list[str], files: dict[str, str] | None = None,
            stdin: bytes = b"", env: dict[str, str] | None = None):
        """Run a command module; files go in a dir preopened as /sandbox."""
        with tempfile.TemporaryDirectory() as d:
            dp = Path(d)
            work = dp / "sandbox"
            work.mkdir()
            for name, text in (files or {}).items():
                (work / name).write_text(text)
            (dp / "stdin").write_bytes(stdin)
            w = wasmtime.WasiConfig()
            w.argv = argv
            w.env = list((env or {}).items())
            w.stdin_file = str(dp / "stdin")
            w.stdout_file = str(dp / "stdout")
            w.stderr_file = str(dp / "stderr")
            w.preopen_dir(str(work), "/sandbox")
            store = wasmtime.Store(self.engine)
            store.set_wasi(w)
            inst = self.linker.instantiate(store, self.module)
            code: int | str = 0
            t0 = time.monotonic()
            try:
                inst.exports(store)["_start"](store)
            except wasmtime.ExitTrap as e:
                code = e.code
            except wasmtime.Trap as e:
                code = "trap: " + str(e).strip().splitlines()[-1]
            dt = time.monotonic() - t0
            return (code, (dp / "stdout").read_text(errors="replace"),
                    (dp / "stderr").read_text(errors="replace"), dt)


class Checker:
    def __init__(self) -> None:
        self.failures = 0

    def check(self, label: str, result, *, code=0, out=None, err=None) -> None:
        got_code, got_out, got_err, dt = result
        ok = got_code == code
        if out is not None:
            ok = ok and (out(got_out) if callable(out) else got_out == out)
        if err is not None:
            ok = ok and (err(got_err) if callable(err) else got_err == err)
        status = "PASS" if ok else "FAIL"
        print(f"  {status} {label} ({dt * 1000:.1f} ms)")
        if not ok:
            self.failures += 1
            print(f"      exit={got_code!r}\n      stdout={got_out[:500]!r}\n"
                  f"      stderr={got_err[:800]!r}")


def verify_python(r: Runner, c: Checker) -> None:
    c.check("print(1)", r.run(["python", "-c", "print(1)"]), out="1\n")
    c.check("import json, re, sqlite3", r.run(
        ["python", "-c", "import json, re, sqlite3; "
         "db = sqlite3.connect(':memory:'); "
         "print(json.dumps(re.findall(r'\\d', 'a1b2')), "
         "db.execute('select sqlite_version()').fetchone()[0])"]),
        out=lambda s: s.startswith('["1", "2"] 3.'))
    c.check("script file + argv", r.run(
        ["python", "/sandbox/main.py", "x"],
        files={"main.py": "import sys\nprint(sys.argv)\n"}),
        out="['/sandbox/main.py', 'x']\n")
    c.check("sys.exit(4)", r.run(["python", "-c", "import sys; sys.exit(4)"]), code=4)
    c.check("uncaught exception -> 1", r.run(["python", "-c", "1/0"]), code=1,
            err=lambda s: "ZeroDivisionError" in s)


def verify_js(r: Runner, c: Checker) -> None:
    def js(src: str, *args: str, name: str = "main.js"):
        return r.run(["qjs", f"/sandbox/{name}", *args], files={name: src})
    c.check("hello", js("console.log('hello')"), out="hello\n")
    c.check("1n << 70n", js("console.log(1n << 70n)"), out="1180591620717411303424n\n")
    c.check("Promise + setTimeout order", js(
        "setTimeout(() => console.log('timeout'), 5);"
        "Promise.resolve(1).then(v => console.log('then', v));"
        "(async () => { await null; console.log('async'); })();"
        "console.log('sync')"), out="sync\nthen 1\nasync\ntimeout\n")
    c.check("uncaught throw -> exit 1", js("function f() { throw new Error('boom') }\nf()"),
            code=1, err=lambda s: "Error: boom" in s and "at f" in s)
    c.check("unhandled rejection -> exit 1", js("Promise.reject(new TypeError('nope'))"),
            code=1, err=lambda s: "TypeError: nope" in s)
    c.check("deep recursion -> RangeError", js(
        "let n = 0; function r() { n++; r() }\n"
        "try { r() } catch (e) { console.log(e instanceof RangeError, n > 1000) }"),
        out="true true\n")
    c.check("module + top-level await + import", r.run(
        ["qjs", "/sandbox/main.mjs"],
        files={"main.mjs": "import { v } from './lib.js'; await null; console.log(v, import.meta.main)",
               "lib.js": "export const v = 42;"}), out="42 true\n")
    c.check("console formatting", js(
        "console.log('s', 1, [1, 'a', {b: null}], {x: undefined}, new Map([[1, 2]]));"
        "console.error('e')"),
        out="s 1 [ 1, 'a', { b: null } ] { x: undefined } Map(1) { 1 => 2 }\n", err="e\n")
    c.check("scriptArgs / process.exit(3)", js(
        "console.log(scriptArgs.join(',')); process.exit(3)", "a", "b"),
        code=3, out="/sandbox/main.js,a,b\n")
    c.check("ES2023 (findLast, toSorted, hashbang-free)", js(
        "console.log([3, 1, 2].toSorted().join(), [1, 2, 3].findLast(x => x < 3), "
        "Object.groupBy([1, 2, 3], x => x % 2 ? 'odd' : 'even').odd.length)"),
        out="1,2,3 2 2\n")
    c.check("syntax error -> exit 1", js("let = ;"), code=1,
            err=lambda s: "SyntaxError" in s)


def verify_lua(r: Runner, c: Checker) -> None:
    def lua(src: str, *args: str, stdin: bytes = b""):
        return r.run(["lua", "/sandbox/main.lua", *args], files={"main.lua": src}, stdin=stdin)
    c.check("hello", lua("print('hello', ...)", "x"), out="hello\tx\n")
    c.check("os.exit(3)", lua("io.write('bye\\n') os.exit(3)"), code=3, out="bye\n")
    c.check("error() -> exit 1", lua("error('boom')"), code=1,
            err=lambda s: "boom" in s and "stack traceback" in s)
    c.check("io.read from stdin", lua("local l = io.read('l') print(l:upper(), io.read('n'))",
                                      stdin=b"abc\n42\n"), out="ABC\t42\n")
    c.check("pcall(error), stack overflow caught", lua(
        "local function f() return f() + 1 end\n"
        "local ok, m = pcall(error, 'x')\n"
        "print(ok, m, (select(2, pcall(f)):match('stack overflow') ~= nil))"),
        out="false\tx\ttrue\n")
    c.check("io.tmpfile / os.execute stubs", lua(
        "print(io.tmpfile() == nil, os.execute())"),
        out=lambda s: s.startswith("true\t"))


def verify_ts(wasm: Path, c: Checker) -> list[str]:
    sys.path.insert(0, str(HERE))
    import demo_ts_transform as demo

    t = demo.Transformer(wasm)
    t0 = time.monotonic()
    js = t.transform("main.ts", demo.SAMPLE)
    dt = time.monotonic() - t0
    ok = "let x = 1;" in js and "function f(a)" in js and 'E[E["A"] = 0] = "A"' in js
    print(f"  {'PASS' if ok else 'FAIL'} transform sample ({dt * 1000:.1f} ms)")
    if not ok:
        c.failures += 1
        print("      " + repr(js))
    try:
        t.transform("main.ts", "let x = ;")
        ok = False
    except ValueError as e:
        ok = "parse error" in str(e)
    print(f"  {'PASS' if ok else 'FAIL'} parse error reported")
    c.failures += 0 if ok else 1
    return [i.name for i in t.module.imports]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", action="extend", metavar="NAME")
    args = ap.parse_args()
    manifest = json.loads(MANIFEST.read_text())
    c = Checker()
    for rt in manifest["runtimes"]:
        name = rt["name"]
        if args.only and name not in args.only:
            continue
        wasm = cache_root() / "artifacts" / rt["sha256"] / rt["filename"]
        print(f"== {name}: {wasm}")
        if not wasm.is_file():
            print("  FAIL not installed (run packaging/runtimes/install.py)")
            c.failures += 1
            continue
        if name == "typescript-transform":
            imports = verify_ts(wasm, c)
        else:
            r = Runner(wasm)
            print(f"  compiled in {r.compile_s:.2f} s")
            imports = r.imports()
            {"python": verify_python, "quickjs": verify_js, "lua": verify_lua}[name](r, c)
        print(f"  imports ({len(imports)}): {' '.join(imports)}")
    print("all checks passed" if c.failures == 0 else f"{c.failures} check(s) FAILED")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
