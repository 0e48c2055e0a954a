"""Our Python WASI vs wasmtime's built-in WASI on the same modules; prints figures.

    python bench/wasi_overhead.py [-n RUNS]

Compares (1) one host call (``sched_yield`` in a loop of 100k, from WAT),
(2) a C hello world compiled with ``ziglang`` at run time, and (3) the
installed QuickJS / Lua runtimes when they are in the cache. Both sides
reuse one Engine, Linker and compiled Module; each run gets a fresh Store.
The built-in side preopens a temporary directory (ours uses the VFS).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import wasmtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.wasm import WasmBackend
from backends.wasm.engine import shared_engine
from backends.wasm.runner import Launch, run
from backends.wasm.state import RunControl
from playground.core import VFS, OutputCapture
from playground.packs import javascript, lua, python

HELLO_C = '#include <stdio.h>\nint main(void) { printf("hello world\\n"); return 0; }\n'
YIELD_WAT = """(module
  (import "wasi_snapshot_preview1" "sched_yield" (func $y (result i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $i i32)
    (loop (drop (call $y)) (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if 0 (i32.lt_u (local.get $i) (i32.const 100000))))))"""


def ours(module: wasmtime.Module, argv: list[str], files: dict[str, bytes]) -> Callable[[], None]:
    engine = shared_engine()

    def once() -> None:
        vfs = VFS(fs_quota=16 << 20, max_files=256)
        for path, data in files.items():
            vfs.write_file(path, data)
        launch = Launch(
            module=module, argv=argv, env={}, stdin=b"", vfs=vfs, output=OutputCapture(1 << 20),
            memory_limit=128 << 20, wall_limit=10.0, cpu_limit=10.0,
        )  # fmt: skip
        outcome = run(engine, launch, RunControl(wall_limit=10.0, cpu_limit=10.0))
        assert outcome.exit_code == 0, outcome

    return once


def builtin(wasm: bytes, argv: list[str], files: dict[str, bytes], tmp: Path) -> Callable[[], None]:
    engine = wasmtime.Engine()
    module = wasmtime.Module(engine, wasm)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    for path, data in files.items():
        (work / Path(path).name).write_bytes(data)
    out = tmp / "stdout"

    def once() -> None:
        config = wasmtime.WasiConfig()
        config.argv = argv
        config.stdout_file = str(out)
        config.preopen_dir(str(work), "/work")
        store = wasmtime.Store(engine)
        store.set_wasi(config)
        instance = linker.instantiate(store, module)
        try:
            instance.exports(store)["_start"](store)
        except wasmtime.ExitTrap as exc:
            assert exc.code == 0
        store.close()

    return once


def timed(fn: Callable[[], None], runs: int) -> list[float]:
    result: list[float] = []

    def body() -> None:
        fn()  # warm-up
        for _ in range(runs):
            started = time.perf_counter()
            fn()
            result.append(time.perf_counter() - started)

    threading.stack_size(16 << 20)
    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    return result


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def compare(name: str, a: Callable[[], None], b: Callable[[], None], runs: int, per: int = 1) -> None:
    mine, theirs = timed(a, runs), timed(b, runs)
    p50a, p50b = statistics.median(mine) / per, statistics.median(theirs) / per
    unit, scale = ("us", 1e6) if per > 1 else ("ms", 1e3)
    print(
        f"{name:<28} ours p50 {p50a * scale:8.2f} {unit} p95 {pct(mine, 95) / per * scale:8.2f} | "
        f"built-in p50 {p50b * scale:8.2f} {unit} p95 {pct(theirs, 95) / per * scale:8.2f} | ratio {p50a / p50b:5.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=50)
    args = parser.parse_args()
    engine = shared_engine()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        yield_wasm = wasmtime.wat2wasm(YIELD_WAT)
        compare(
            "host call (sched_yield)",
            ours(wasmtime.Module(engine.engine, yield_wasm), ["y"], {}),
            builtin(bytes(yield_wasm), ["y"], {}, tmp),
            max(5, args.runs // 10),
            per=100_000,
        )
        (tmp / "hello.c").write_text(HELLO_C)
        cc = [sys.executable, "-m", "ziglang", "cc", "-target", "wasm32-wasi", "-O2", "-s"]
        built = subprocess.run([*cc, str(tmp / "hello.c"), "-o", str(tmp / "hello.wasm")], check=False)
        if built.returncode == 0:
            hello = (tmp / "hello.wasm").read_bytes()
            compare(
                "C hello world",
                ours(wasmtime.Module(engine.engine, hello), ["hello"], {}),
                builtin(hello, ["hello"], {}, tmp),
                args.runs,
            )
        backend = WasmBackend()
        for pack, code in (
            (javascript.PACK, 'console.log("hello")'),
            (lua.PACK, 'print("hello")'),
            (python.PACK, "print(1)"),
        ):
            if backend.unavailable_reason(pack) is not None or pack.wasm is None or pack.wasm.module is None:
                print(f"{pack.name}: not installed, skipped")
                continue
            artifact = pack.wasm.module
            path = backend._artifacts.verified_path(artifact, pack.name)
            module = backend.modules.runtime(artifact.sha256, path, label=artifact.name, progress=None)
            main_file = f"/work/{pack.wasm.main_file}"
            argv = [pack.name, *(main_file if a == "{main}" else a for a in pack.wasm.args if a != "{args}")]
            compare(
                f"{pack.name} hello",
                ours(module, argv, {main_file: code.encode()}),
                builtin(path.read_bytes(), argv, {main_file: code.encode()}, tmp),
                args.runs,
            )


if __name__ == "__main__":
    main()
