/*
 * Small WASI support file for building Lua 5.4 (onelua.c) to wasm32-wasi
 * with zig cc.  Part of Sandbox Playground's own sources (not Lua's).
 *
 * 1. Lua's error handling uses setjmp/longjmp.  Compiled with
 *    -mllvm -wasm-enable-sjlj and the standard (non-legacy) Wasm exception
 *    handling proposal, LLVM lowers longjmp to a `throw` of the tag
 *    `__c_longjmp`, whose definition the toolchain expects from the runtime.
 *    wasi-libc's rt.c (__wasm_setjmp / __wasm_longjmp) is linked in, but the
 *    tag itself must be defined in assembly, which we do here.
 * 2. WASI has no temporary files: tmpfile() fails with ENOTSUP, so
 *    io.tmpfile() returns nil plus an error message.
 * 3. Every program starts in /work when it exists (wasi-libc starts it in
 *    "/"), so io.open("rel.txt") means /work/rel.txt as on the Docker tier.
 * 4. stdout is made fully buffered before main() runs (musl would make it
 *    line-buffered whenever the host reports a character device), because
 *    a host call per line is slow through a WASI implemented in Python.
 *    It is flushed at exit, by io.flush(), or by io.stdout:setvbuf().
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

__asm__(
    ".globl __c_longjmp\n"
    ".tagtype __c_longjmp i32\n"
    "__c_longjmp:\n");

FILE *tmpfile(void) {
    errno = ENOTSUP;
    return NULL;
}

__attribute__((constructor)) static void playground_stdout_full_buffering(void) {
    setvbuf(stdout, NULL, _IOFBF, 0);
}

__attribute__((constructor)) static void playground_start_in_work(void) {
    (void)chdir("/work"); /* the sandbox's working directory; stays "/" without one */
}
