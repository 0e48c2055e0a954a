#!/usr/bin/env python3
"""Demo: TypeScript -> JavaScript with the OXC transform reactor (_transform.wasm).

    python packaging/runtimes/demo_ts_transform.py [FILE.ts]

Uses wasmtime directly. The module imports 5 WASI functions (random_get,
environ_get, environ_sizes_get, fd_write, proc_exit); in this demo they come
from wasmtime's built-in WASI with no preopens, no env, no args (the app
supplies its own). The runtime is taken from the cache filled by install.py.

ABI (all i32; pointers/lengths in the module's exported `memory`):
  qjst_alloc(len) -> ptr              allocate len bytes (0 on failure)
  qjst_free(ptr, len)                 free a block from qjst_alloc
  qjst_transform(name_ptr, name_len, src_ptr, src_len, flags) -> status
  qjst_result_ptr() / qjst_result_len()   output JS (UTF-8), valid if status 0
  qjst_error_ptr() / qjst_error_len()     error text (UTF-8), if status >= 2
  qjst_result_free()                  drop result and error buffers
status: 0 ok, 1 unchanged (use the input), 2 bad input (e.g. no source-kind
flag, invalid UTF-8), 3 parse error, 4 transform error, 5 guest panic.
flags: 1 SOURCE_TS, 2 SOURCE_TSX, 256 STRIP_TYPESCRIPT,
       512 TOP_LEVEL_CONST_TO_VAR.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import wasmtime

FLAG_SOURCE_TS = 1 << 0
FLAG_SOURCE_TSX = 1 << 1
FLAG_STRIP_TYPESCRIPT = 1 << 8
FLAG_TOP_LEVEL_CONST_TO_VAR = 1 << 9
STATUS = {0: "ok", 1: "unchanged", 2: "bad input", 3: "parse error",
          4: "transform error", 5: "panic"}

SAMPLE = "enum E {A, B}; let x: number = 1; function f<T>(a: T): T { return a }\n"


def runtime_path() -> Path:
    here = Path(__file__).resolve().parent
    manifest = json.loads((here.parent.parent / "resources" / "runtimes.json").read_text())
    rt = next(r for r in manifest["runtimes"] if r["name"] == "typescript-transform")
    if os.environ.get("PLAYGROUND_CACHE_DIR"):
        root = Path(os.environ["PLAYGROUND_CACHE_DIR"])
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "sandbox-playground"
    p = root / "artifacts" / rt["sha256"] / rt["filename"]
    if not p.is_file():
        sys.exit(f"{p} missing: run python packaging/runtimes/install.py --only typescript-transform")
    return p


class Transformer:
    def __init__(self, wasm: Path) -> None:
        engine = wasmtime.Engine()
        self.module = module = wasmtime.Module.from_file(engine, str(wasm))
        self.store = wasmtime.Store(engine)
        self.store.set_wasi(wasmtime.WasiConfig())  # no preopens, no env
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        inst = linker.instantiate(self.store, module)
        self.ex = inst.exports(self.store)
        self.mem: wasmtime.Memory = self.ex["memory"]

    def _call(self, name: str, *args: int) -> int:
        return self.ex[name](self.store, *args)

    def _put(self, data: bytes) -> int:
        ptr = self._call("qjst_alloc", len(data))
        if ptr == 0 and data:
            raise MemoryError("qjst_alloc failed")
        if data:
            self.mem.write(self.store, data, ptr)
        return ptr

    def _get(self, ptr_fn: str, len_fn: str) -> bytes:
        n = self._call(len_fn)
        return self.mem.read(self.store, self._call(ptr_fn), self._call(ptr_fn) + n) if n else b""

    def transform(self, name: str, source: str,
                  flags: int = FLAG_SOURCE_TS | FLAG_STRIP_TYPESCRIPT) -> str:
        nb, sb = name.encode(), source.encode()
        np, sp = self._put(nb), self._put(sb)
        try:
            status = self._call("qjst_transform", np, len(nb), sp, len(sb), flags)
            if status == 1:
                return source
            if status == 0:
                return self._get("qjst_result_ptr", "qjst_result_len").decode()
            err = self._get("qjst_error_ptr", "qjst_error_len").decode(errors="replace")
            raise ValueError(f"{STATUS.get(status, status)}: {err}")
        finally:
            self._call("qjst_free", np, len(nb))
            self._call("qjst_free", sp, len(sb))
            self._call("qjst_result_free")


def main() -> int:
    src = Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else SAMPLE
    name = sys.argv[1] if len(sys.argv) > 1 else "main.ts"
    t = Transformer(runtime_path())
    try:
        print(t.transform(name, src), end="")
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
