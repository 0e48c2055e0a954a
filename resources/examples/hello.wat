;; WebAssembly text: a WASI module that prints through fd_write (no runtime needed).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "hello from a hand-written wasm module\n")
  (func (export "_start")
    ;; an iovec at 0: pointer 16, length 38
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 38))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
