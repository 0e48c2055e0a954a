"""Sandbox Playground's Python REPL driver (run inside CPython WASI as ``python -B -c <this>``).

Protocol (see backends/wasm/channel.py): read one frame from stdin (the
code's byte length in ASCII decimal, a newline, the UTF-8 code), run it in
one persistent ``__main__`` namespace, flush stdout and stderr, write one
status line (``ok``, ``error`` or ``oom``) to /.session/control, repeat.
EOF on stdin ends the driver.

Like the interactive interpreter, the value of a final expression
statement is echoed through ``sys.displayhook`` (its repr, unless None;
``_`` is set); tracebacks go to stderr without the driver's own frames.

Not interruptible: this driver does not poll /.session/interrupt. CPython
under WASI gets no signals, and the only way to check a flag while Python
code runs is a trace or ``sys.monitoring`` callback; a JUMP callback that
counts and reads the flag every 10000 jumps made a tight loop 5.4x slower
(measured), too much to pay on every eval. Ctrl-C therefore stops the
interpreter (the session restarts with no state).
"""

import ast
import builtins
import io
import linecache
import os
import sys
import traceback
import types


def _driver():
    read = os.read
    control = os.open("/.session/control", os.O_WRONLY)
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    namespace = main.__dict__
    # The session's stdin carries frames: the user's input() sees end of file instead.
    sys.stdin = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    sys.argv = [""]
    pending = bytearray()

    def read_frame():
        while b"\n" not in pending:
            chunk = read(0, 65536)
            if not chunk:
                return None
            pending.extend(chunk)
        head, _, rest = bytes(pending).partition(b"\n")
        size = int(head)
        body = bytearray(rest)
        while len(body) < size:
            chunk = read(0, size - len(body))
            if not chunk:
                return None
            body.extend(chunk)
        pending[:] = body[size:]
        return bytes(body[:size]).decode("utf-8", "replace")

    def show_exception(exc, skip):
        tb = exc.__traceback__
        for _ in range(skip):
            if tb is not None:
                tb = tb.tb_next
        exc.__traceback__ = tb
        sys.stderr.write("".join(traceback.format_exception(exc)))

    def run(source, filename):
        try:
            tree = ast.parse(source, filename, "exec")
        except (SyntaxError, ValueError, OverflowError, MemoryError) as exc:
            sys.stderr.write("".join(traceback.format_exception_only(exc)))
            return b"oom" if isinstance(exc, MemoryError) else b"error"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        body = tree.body
        try:
            if body and isinstance(body[-1], ast.Expr):
                head = ast.Module(body=body[:-1], type_ignores=[])
                exec(compile(head, filename, "exec", dont_inherit=True), namespace)
                last = ast.Interactive(body=body[-1:])
                exec(compile(last, filename, "single", dont_inherit=True), namespace)
            else:
                exec(compile(tree, filename, "exec", dont_inherit=True), namespace)
        except SystemExit:
            raise
        except BaseException as exc:
            show_exception(exc, 1)
            return b"oom" if isinstance(exc, MemoryError) else b"error"
        return b"ok"

    count = 0
    while True:
        source = read_frame()
        if source is None:
            return
        count += 1
        try:
            status = run(source, f"<input-{count}>")
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
        os.write(control, status + b"\n")


_driver()
