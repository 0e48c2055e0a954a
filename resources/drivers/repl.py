"""Sandbox Playground's Python REPL driver (run inside CPython WASI as ``python -B -c <this>``).

Protocol (see backends/wasm/channel.py): read one frame from stdin (the
code's byte length in ASCII decimal, a newline, the UTF-8 code), run it in
one persistent ``__main__`` namespace, flush stdout and stderr, write one
status line (``ok``, ``error`` or ``oom``) to /.session/control, repeat.
EOF on stdin ends the driver.

Like the interactive interpreter, the value of a final expression
statement is echoed through ``sys.displayhook`` (its repr, unless None;
``_`` is set); tracebacks go to stderr without the driver's own frames.

Ctrl-C: CPython under WASI gets no signals, and polling a flag from a
``sys.monitoring`` callback made tight loops 5.4x slower (measured). So the
host sets CPython's own SIGINT flags in memory instead
(backends/wasm/cpython_signals.py), and this driver's SIGINT handler
raises ``KeyboardInterrupt`` in the running input, as in a terminal. The
handler raises only while user code runs: an interrupt that lands in the
driver's own code is ignored, and one that arrived before the input's
code started is caught by reading /.session/interrupt (``1`` while the
host asks this input to stop) just before running it. User code may
install its own SIGINT handler (or ignore SIGINT) like anywhere else.

Keyboard: the user's ``sys.stdin`` (so ``input()``) reads /.session/stdin,
what is typed while the input runs (backends/wasm/channel.py); a Ctrl-C
while it waits raises ``KeyboardInterrupt`` as in a terminal.

Streaming output: stdout stays block-buffered (line buffering made a
100,000-line print 9x slower); instead the host raises signal 63 (a
real-time number nothing else uses here; ``FLUSH_SIGNAL``) every 50 ms
while an input runs, and its handler flushes stdout and stderr. A sleep
flushes first (``time.sleep`` is wrapped), so ``print(); time.sleep(1)``
shows the line before the pause, as in a terminal.
"""

import ast
import builtins
import io
import linecache
import os
import signal
import sys
import time
import traceback
import types


def _driver():
    read = os.read
    control = os.open("/.session/control", os.O_WRONLY)
    interrupt_flag = os.open("/.session/interrupt", os.O_RDONLY)
    user_code_runs = False

    def on_sigint(signum, frame):
        if user_code_runs:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)

    def on_flush(signum, frame):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass

    signal.signal(63, on_flush)  # FLUSH_SIGNAL in backends/wasm/cpython_signals.py
    real_sleep = time.sleep

    def sleep(seconds):
        on_flush(None, None)
        real_sleep(seconds)

    sleep.__name__ = sleep.__qualname__ = "sleep"
    sleep.__module__ = "time"
    sleep.__doc__ = real_sleep.__doc__
    time.sleep = sleep
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    namespace = main.__dict__
    keyboard = None

    def new_stdin():
        # The session's stdin carries frames: the user's stdin is /.session/stdin, what is typed during
        # this input (end of file without a keyboard). Reopened for every input, so bytes buffered for
        # one input never reach the next.
        nonlocal keyboard
        if keyboard is not None:
            try:
                keyboard.close()
            except Exception:
                pass
        try:
            keyboard = io.TextIOWrapper(
                io.BufferedReader(io.FileIO(os.open("/.session/stdin", os.O_RDONLY), "rb")),
                encoding="utf-8", errors="surrogateescape",
            )
        except OSError:
            keyboard = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        sys.stdin = keyboard

    new_stdin()
    sys.argv = [""]
    try:
        os.chdir("/work")  # every program in the sandbox starts in /work (sys.path[0] is "": /work too)
    except OSError:
        pass
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
        # Our SIGINT handler's own frame is the last one of a KeyboardInterrupt: not the user's code.
        frames = []
        while tb is not None:
            frames.append(tb)
            tb = tb.tb_next
        if frames and frames[-1].tb_frame.f_code is on_sigint.__code__:
            frames.pop()
            if frames:
                frames[-1].tb_next = None
        exc.__traceback__ = frames[0] if frames else None
        sys.stderr.write("".join(traceback.format_exception(exc)))

    def run(source, filename):
        nonlocal user_code_runs
        try:
            tree = ast.parse(source, filename, "exec")
        except (SyntaxError, ValueError, OverflowError, MemoryError) as exc:
            sys.stderr.write("".join(traceback.format_exception_only(exc)))
            return b"oom" if isinstance(exc, MemoryError) else b"error"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        body = tree.body
        try:
            user_code_runs = True
            if os.pread(interrupt_flag, 1, 0) == b"1":
                raise KeyboardInterrupt
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
            user_code_runs = False
            show_exception(exc, 1)
            return b"oom" if isinstance(exc, MemoryError) else b"error"
        finally:
            user_code_runs = False
        return b"ok"

    count = 0
    while True:
        source = read_frame()
        if source is None:
            return
        count += 1
        if count > 1:
            new_stdin()
        try:
            status = run(source, f"<input-{count}>")
        except KeyboardInterrupt:  # landed in the instant between the user's code and ours
            sys.stderr.write("KeyboardInterrupt\n")
            status = b"error"
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
        os.write(control, status + b"\n")


_driver()
