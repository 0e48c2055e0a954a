"""Cold start per Wasm language: first compile, warm p50/p95 through the Sandbox, built-in WASI beside it.

    python bench/coldstart.py [-n RUNS]

For each language: the time wasmtime takes to compile its runtime the
first time (what the on-disk module cache then saves), the p50/p95 of a
hello-world ``Sandbox.run`` in one process with a warm cache (everything
a user pays: routing, VFS, our WASI, output capture), and the same
runtime module running the same program under wasmtime's built-in WASI
(a temp dir preopened), side by side, with the ratio. Targets on 2 cores:
JS <= 5 ms, Lua <= 3 ms, raw WASI <= 2 ms, Python <= 70 ms, ours <= 1.3x.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wasmtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from wasi_overhead import HELLO_C, builtin, ours, pct, timed

from backends.wasm import WasmBackend
from backends.wasm.artifacts import artifact_path, cache_root
from playground.core import Limits, Sandbox, Spec
from playground.packs import ALL_PACKS, javascript, lua, python, typescript

PROGRAMS = {
    "javascript": (javascript.PACK, 'console.log("hello world")', "main.js"),
    "typescript": (typescript.PACK, 'const greeting: string = "hello world";\nconsole.log(greeting)', ""),
    "lua": (lua.PACK, 'print("hello world")', "main.lua"),
    "python": (python.PACK, 'print("hello world")', "main.py"),
}


def sandbox_runs(sb: Sandbox, spec: Spec, runs: int) -> list[float]:
    async def go() -> list[float]:
        await sb.run(spec)  # warm-up (fills the in-process module cache)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = await sb.run(spec)
            times.append(time.perf_counter() - started)
            assert result.exit_code == 0, result.stderr
        return times

    return asyncio.run(go())


def first_compile(path: Path) -> float:
    engine = wasmtime.Engine()
    data = path.read_bytes()
    started = time.perf_counter()
    wasmtime.Module(engine, data)
    return time.perf_counter() - started


def row(
    name: str, compile_s: float | None, full: list[float], wasi: list[float] | None, theirs: list[float] | None
) -> None:
    p50 = statistics.median(full) * 1e3
    text = f"{name:<11} compile {f'{compile_s:6.2f} s' if compile_s is not None else '     -  '} | "
    text += f"Sandbox.run p50 {p50:6.2f} ms p95 {pct(full, 95) * 1e3:6.2f}"
    if wasi and theirs:
        o50 = statistics.median(wasi) * 1e3
        b50 = statistics.median(theirs) * 1e3
        text += f" | our WASI p50 {o50:6.2f} | built-in WASI p50 {b50:6.2f} ms p95 {pct(theirs, 95) * 1e3:6.2f}"
        text += f" | WASI ratio {o50 / b50:4.2f} | Sandbox/built-in {p50 / b50:4.2f}"
    print(text, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=40)
    args = parser.parse_args()
    sb = Sandbox(backends=[WasmBackend(packs=ALL_PACKS)], packs=ALL_PACKS, default_limits=Limits(wall_time=30.0))
    root = cache_root()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name, (pack, code, main_file) in PROGRAMS.items():
            assert pack.wasm is not None and pack.wasm.module is not None
            path = artifact_path(pack.wasm.module, root)
            if not path.is_file():
                print(f"{name:<11} runtime not installed (python packaging/runtimes/install.py)")
                continue
            full = sandbox_runs(sb, Spec(lang=name, code=code), args.runs)
            wasi = theirs = None
            if main_file:
                args_ = [a for a in pack.wasm.args if a != "{args}"]
                argv = [pack.name, *("/work/" + main_file if a == "{main}" else a for a in args_)]
                module = sb.backends["wasm"].modules.runtime(  # type: ignore[attr-defined]
                    pack.wasm.module.sha256, path, label=name, progress=None
                )
                wasi = timed(ours(module, argv, {"/work/" + main_file: code.encode()}), args.runs)
                theirs = timed(builtin(path.read_bytes(), argv, {main_file: code.encode()}, tmp), args.runs)
            row(name, first_compile(path), full, wasi, theirs)
        (tmp / "hello.c").write_text(HELLO_C)
        cc = [sys.executable, "-m", "ziglang", "cc", "-target", "wasm32-wasi", "-O2", "-s"]
        subprocess.run([*cc, str(tmp / "hello.c"), "-o", str(tmp / "hello.wasm")], check=True)
        hello = (tmp / "hello.wasm").read_bytes()
        full = sandbox_runs(sb, Spec(lang="wasm", code=hello), args.runs)
        module = wasmtime.Module(sb.backends["wasm"].modules._engine.engine, hello)  # type: ignore[attr-defined]
        wasi = timed(ours(module, ["hello"], {}), args.runs)
        row("raw WASI", None, full, wasi, timed(builtin(hello, ["hello"], {}, tmp), args.runs))


if __name__ == "__main__":
    main()
