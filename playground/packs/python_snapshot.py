"""The Python pack's snapshot (``WasmSnapshot``): CPython 3.12 started once, then mapped into every one-shot run.

At capture, CPython runs ``CAPTURE`` with ``-B -c``: it compiles the boot
script (the script that runs the user's file, ``python_boot``) into a
function it keeps at ``sys._playground_run``, installs the WASI shims
(``python_shims``: asyncio's event loop), imports ``PRELOAD`` (what most
programs import first, and what the boot script and a traceback need), sets
the in-guest attempt report up (``python_watch.CAPTURE_WATCH``), and asks for
the realtime clock's resolution: the snapshot point (a WASI call CPython
never makes while it starts, made with the GIL held).

A run calls PyRun_SimpleStringFlags (function 4056 of the pinned artifact,
found from an ``os.abort()`` backtrace and checked at every capture: its
type and its reference to ``"__main__"``) with ``RUN``: the function
deletes itself, opens the run's own report channel for the attempt report,
sets ``sys.argv``/``sys.orig_argv`` and ``os.environ`` to the run's own,
reseeds ``random`` if it was imported, restarts the process CPU clock at
zero, runs the boot script, then what CPython's exit would
(``_RUN_BODY``: the SystemExit status, ``atexit`` handlers, the program's own
modules cleared, flushing, ``_exit``) without tearing the interpreter down;
stdin, files, ``/in``, descriptors, the working folder (the boot script's
``chdir``) and limits are the run's own. ``capture_script`` also serves the
scientific runtime, whose capture runs through its own ``turn`` export and
ends by returning instead of at the snapshot point.

Programs that import one of the standard modules slow to import (``STDLIB_FOR``) start from a second
snapshot with those imported too (``STDLIB_CAPTURE``, the pack's ``import_snapshots``), programs that import
asyncio from a third with asyncio as well (``ASYNCIO_CAPTURE``); the run head
resets what such a module kept from the capture (``random``'s seed, ``logging``'s start time).

REPL sessions have their own snapshot (``SESSION_CAPTURE``, the pack's
``session_snapshot``): the capture compiles the in-guest attempt report and
the session's driver (passed as its one argument) and imports
``SESSION_PRELOAD``; a session's ``RUN`` sets its argv, environment, seed
and CPU clock, then runs them, and the driver waits for its first input.

What a program can see differently from a cold start (documented in the
README): ``hash()`` of a str/bytes is stable for one snapshot (as with a
fixed PYTHONHASHSEED; each capture draws a fresh secret), ``sys.modules``
holds the preloaded modules, ``inspect.stack()`` is two frames deeper, and
``time.process_time()`` starts at zero instead of counting the start-up.
"""

from typing import Final

from playground.packs.python_boot import LIGHT_ARGS, run_file_script
from playground.packs.python_shims import SHIMS
from playground.packs.python_watch import CAPTURE_WATCH, WATCH

#: PyRun_SimpleStringFlags in ``runtimes.CPYTHON`` (python-3.12.0.wasm): (i32 source, i32 flags) -> i32.
PYRUN_SIMPLE_STRING_FLAGS: Final = 4056

#: Imported before the snapshot.
PRELOAD: Final = (
    "os", "sys", "io", "encodings.utf_8", "codecs", "abc", "stat", "posixpath", "genericpath",
    "collections", "functools", "itertools", "operator", "keyword", "reprlib", "types", "typing",
    "re", "enum", "math", "copy", "heapq", "bisect", "string", "dataclasses", "contextlib", "traceback",
    "linecache", "tokenize", "token", "weakref", "warnings", "errno", "atexit",
)  # fmt: skip

#: Standard modules that take long to import from the runtime's library zip (zipimport, regular expressions
#: compiled at import: ``import json`` +16 ms over a 4 ms ``print``, ``random`` +13, ``statistics`` +44,
#: ``tempfile`` +36): programs that import one of them start from a snapshot with all of these imported
#: (``STDLIB_CAPTURE``; ``bench/python_snapshot.py``: ``import json`` 14 -> 6 ms, ``statistics`` 37 -> 7).
#: Not in ``PRELOAD``: that larger heap costs each run about 1 ms more (150 more page faults for a
#: ``print``), more than a program that imports none of these would gain. Modules quicker to import
#: (``datetime`` +3 ms) start no program from it. Left out: what needs the network (``urllib.request``,
#: ``http.client``) and would only make the image larger, and ``asyncio``, which has a snapshot of its own
#: (``ASYNCIO_CAPTURE``).
STDLIB_FOR: Final = (
    "json", "random", "csv", "statistics", "argparse", "calendar", "decimal", "difflib", "doctest", "fractions",
    "html", "locale", "logging", "pathlib", "pickle", "queue", "secrets", "shutil", "sqlite3", "tempfile",
    "threading", "unittest", "urllib", "xml", "zipfile",
)  # fmt: skip
#: Imported before the stdlib snapshot: ``PRELOAD``, ``STDLIB_FOR`` (the modules of theirs that programs
#: import) and modules that come with them or are quick to import (whose import alone starts no program from it).
STDLIB_PRELOAD: Final = (
    *PRELOAD, *(name for name in STDLIB_FOR if name not in ("urllib", "xml")), "urllib.parse",
    "xml.etree.ElementTree", "datetime", "uuid", "base64", "glob", "hashlib", "pprint", "textwrap", "struct",
    "numbers", "array", "cmath", "signal",
)  # fmt: skip

#: ``import asyncio`` took 81 ms from the library zip (a ``print`` 2.4): programs that import it start from a
#: third snapshot, the stdlib one's modules and asyncio's (``ASYNCIO_CAPTURE``), which it goes before in the
#: pack's ``import_snapshots`` (a program that imports asyncio and json starts from it). A snapshot of its own,
#: not ``STDLIB_FOR``'s: asyncio's modules would make every run from that one copy more pages.
ASYNCIO_PRELOAD: Final = (*STDLIB_PRELOAD, "asyncio")

#: The boot script of a snapshot run: as a cold start's, without the process_time fix (``_CLOCK`` has its own)
#: and without the attempt report's set-up, which the capture did (``python_watch.CAPTURE_WATCH``).
BOOT: Final = run_file_script("    sys.path[0] = os.path.dirname(path)", watch=False)

#: The process CPU clock of a snapshot run (the part of a capture script before ``def run``): as
#: python_boot.PROCESS_TIME_FIX (the times() emulation counts nanoseconds, CPython divides by 100 Hz), and
#: counted from the run's start (``zero[0] = restart()``), not from the capture.
_CLOCK: Final = '''\
    zero = [0]
    info = time.get_clock_info("process_time")
    if info.implementation == "times()" and info.resolution == 0.01:
        # As python_boot.PROCESS_TIME_FIX (the times() emulation counts nanoseconds, CPython divides by
        # 100 Hz), and counted from the run's start, not from the capture.
        raw_ns = time.process_time_ns
        def process_time():
            return (raw_ns() - zero[0]) / 1e16
        def process_time_ns():
            return (raw_ns() - zero[0]) // 10**7
        process_time.__doc__, process_time_ns.__doc__ = time.process_time.__doc__, raw_ns.__doc__
        time.process_time, time.process_time_ns = process_time, process_time_ns
        restart = lambda: raw_ns()
    else:
        restart = lambda: 0
'''

#: What every snapshot run does first: its own argv (``sys.argv`` from ``sys_argv``, ``sys.orig_argv`` from
#: ``orig_argv``), environment, seed, clock.
_RUN_HEAD: Final = '''\
    def run(argv, env):
        del sys._playground_run
        preloaded = sys._playground_preloaded
        del sys._playground_preloaded
        channel = sys.__dict__.pop("_playground_channel", None)  # the watch set up at the capture, if any
        if channel is not None:
            try:
                channel.append(os.open("/.attempts", os.O_WRONLY))
            except OSError:
                pass
        zero[0] = restart()
        sys.argv[:] = {sys_argv}
        sys.orig_argv[:] = {orig_argv}
        os.environ.clear()
        os.environ.update(env)
        for seeded in ("random", "numpy.random"):  # their generators were seeded at import: the capture's
            if seeded in sys.modules:
                sys.modules[seeded].seed()
        if "logging" in sys.modules:  # records' relativeCreated counts from the run's start, not the capture's
            sys.modules["logging"]._startTime = time.time()
'''

#: The end of ``run``, shared by every capture: the program, then what CPython's exit would do, in its
#: order: a SystemExit's status (its message printed), the ``atexit`` handlers, the program's own modules
#: cleared (objects with a ``__del__`` and open files first, so those run and are flushed while the rest of
#: the namespace still stands, as with python3 on Linux), the streams flushed, and the process ends with the
#: status. A full ``Py_Exit`` would also tear down every preloaded module: about 15 ms a run. The program's
#: modules are looked for among the names the capture did not have (``_PRELOADED``): going through every
#: module wrote to each one and its ``__file__`` (their reference counts), a third of the image pages an
#: empty program wrote (318 -> 218 with ``_PRELOADED``'s interning).
_RUN_BODY: Final = '''\
        try:
            exec(code, __main__.__dict__)
            status = 0
        except SystemExit as exc:
            status = exit_status(exc.code)
        atexit._run_exitfuncs()
        for module in [__main__, *(m for m in map(sys.modules.get, sys.modules.keys() - preloaded) if user_module(m))]:
            names = module.__dict__
            # What needs finalising first (a __del__, an open file), while the rest of the namespace stands.
            first = [n for n, v in names.items() if hasattr(type(v), "__del__") or isinstance(v, io.IOBase)]
            for name in [*first, *names]:
                if name != "__builtins__":
                    names[name] = None
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        if status:
            os._exit(status if -(1 << 31) <= status < 1 << 31 else -1)
    def exit_status(code):
        if code is None:
            return 0
        if isinstance(code, int):
            return int(code)
        try:
            sys.stdout.flush()
            print(code, file=sys.stderr)
        except Exception:
            pass
        return 1
    def user_module(module):
        where = getattr(module, "__file__", None)
        return module is not __main__ and isinstance(where, str) and where.startswith(USER_TREES)
    sys._playground_run = run
'''

#: Where a program's own modules come from (``_RUN_BODY`` clears them at the end, as CPython's exit would).
USER_TREES: Final = ("/work/", "/in/", "/out/", "/tmp/")

#: What every capture's ``_playground_prepare`` starts with, after its ``def`` line.
_IMPORTS_HEAD: Final = f'''\
    import atexit, io, os, sys, time, __main__
    USER_TREES = {USER_TREES!r}
'''

_HEAD: Final = (
    "def _playground_prepare(boot):\n" + _IMPORTS_HEAD + '    code = compile(boot, "<string>", "exec")\n'
)

#: The imports that end every capture script (``%r``: the preload list).
_IMPORTS: Final = '''\
for _playground_module in %r:
    __import__(_playground_module)
del _playground_module
'''

#: Near the end of every capture: the names in ``sys.modules`` are interned (in place, so ``sys.modules`` keeps
#: its order), which makes them immortal: a run goes through them (``_RUN_BODY``) without writing to a page of
#: the image; then they are kept for the run (``sys._playground_preloaded``, taken off ``sys`` as it starts).
_PRELOADED: Final = """\
import sys as _playground_sys
for _playground_name in list(_playground_sys.modules):
    _playground_module = _playground_sys.modules.pop(_playground_name)
    _playground_sys.modules[_playground_sys.intern(_playground_name)] = _playground_module
_playground_sys._playground_preloaded = frozenset(_playground_sys.modules)
del _playground_sys, _playground_name, _playground_module
"""

#: The last of every capture's set-up: everything it made goes to the collector's permanent generation
#: (``gc.freeze``), as CPython's documentation advises before a fork without exec. Otherwise a run's
#: collections go through the capture's objects as well (about 2,400 were in the middle generation) and
#: write each one's header, so every image page holding one becomes a copy-on-write copy of the run's own.
#: Measured per run, both snapshots side by side in one process (light runtime): a program that makes
#: 5,000 small dicts 861 -> 630 faults, 19.2 -> 15.6 ms; 2,000 dataclass objects stepped five times
#: 793 -> 629 faults, 48.7 -> 42.0 ms; ``print`` and HumanEval's checks unchanged within noise (391 -> 404
#: faults). It does not collect first: freeing the capture's garbage left free slots all over the heap, and
#: a short run's allocations then wrote more pages (hello world 391 -> 421). What garbage it keeps stays in
#: the image, shared by every run.
_FREEZE: Final = '__import__("gc").freeze()\n'

#: The snapshot point of a capture that never returns (``WasmSnapshot.capture_args``).
_POINT: Final = '__import__("time").clock_getres(__import__("time").CLOCK_REALTIME)\n'


def capture_script(
    boot: str, preload: tuple[str, ...], *, kept: tuple[str, ...], point: bool = True, watch: bool = True
) -> str:
    """The capture's script: ``boot`` (without the attempt report) compiled into ``sys._playground_run``, the
    WASI shims installed (``python_shims.SHIMS``), ``preload`` imported, the attempt report set up
    (``python_watch.CAPTURE_WATCH``), the module names kept (``_PRELOADED``), what it made frozen
    (``_FREEZE``), then the snapshot point (``point``) or nothing (a capture through the runtime's own entry
    ends by returning). ``kept``: the snapshot's ``kept_args``, which a run's argv comes without and which the
    script puts back into ``sys.orig_argv``. ``watch=False``: no attempt report (``bench/attempts_cost.py``
    measures what it costs)."""
    return (
        _HEAD + _CLOCK + _RUN_HEAD.format(sys_argv='["-c", *argv[1:]]', orig_argv=f"[argv[0], *{kept!r}, *argv[1:]]")
        + _RUN_BODY
        + f"_playground_prepare({boot!r})\ndel _playground_prepare\n"
        + SHIMS + _IMPORTS % (preload,) + (CAPTURE_WATCH if watch else "") + _PRELOADED + _FREEZE
        + (_POINT if point else "")
    )  # fmt: skip


#: The ``-c`` script of the capture.
CAPTURE: Final = capture_script(BOOT, PRELOAD, kept=LIGHT_ARGS)
#: The same with ``STDLIB_PRELOAD`` (programs that import one of ``STDLIB_FOR``).
STDLIB_CAPTURE: Final = capture_script(BOOT, STDLIB_PRELOAD, kept=LIGHT_ARGS)
#: The same with ``ASYNCIO_PRELOAD`` (programs that import asyncio).
ASYNCIO_CAPTURE: Final = capture_script(BOOT, ASYNCIO_PRELOAD, kept=LIGHT_ARGS)

#: Imported before a session's snapshot: the one-shot list and what the REPL driver imports.
SESSION_PRELOAD: Final = (*PRELOAD, "ast", "builtins", "signal", "textwrap")

_SESSION_PREPARE: Final = (
    "def _playground_prepare(prelude, driver):\n"
    + _IMPORTS_HEAD
    + '    code = compile(prelude + "\\n" + driver, "<string>", "exec")\n'
    + _CLOCK
    + _RUN_HEAD.format(sys_argv='["-c"]', orig_argv="argv")
    + _RUN_BODY
    + '''\
_playground_prepare(%r, __import__("sys").argv.pop(1))
del _playground_prepare
'''
    + SHIMS.replace("%", "%%")
    + _IMPORTS
    + _PRELOADED
    + _FREEZE
    + _POINT
)

#: The ``-c`` script of a REPL session's capture; its one argument is the driver script (``{driver}``,
#: ``WasmSpec.session_snapshot``). A session's run executes ``WATCH`` and then the driver, as a cold session
#: runs its prelude and driver, but with ``_CLOCK``'s process_time instead of the prelude's PROCESS_TIME_FIX.
SESSION_CAPTURE: Final = _SESSION_PREPARE % (WATCH, SESSION_PRELOAD)

#: What the backend runs to learn the pages a run writes (``WasmSnapshot.warm_program``): the shape of a short
#: program as agents and HumanEval-style checks write them (typing, a function, comprehensions, a caught
#: exception, asserts, a print, and an uncaught AssertionError's traceback). Host-chosen and fixed: no user's
#: run teaches the backend anything.
WARM_PROGRAM: Final = """\
from typing import Dict, List, Optional
import collections, math, re


def solve(numbers: List[int], limit: Optional[int] = None) -> List[int]:
    seen: Dict[str, int] = collections.Counter(str(n) for n in numbers if n % 2 == 0)
    words = " ".join(sorted(seen)).split()
    return [int(w) * 2 for w in words if limit is None or int(w) < limit] + [len(words)]


def check(candidate):
    assert candidate([1, 2, 3, 4, 10]) == [20, 4, 8, 3]
    assert candidate([], 5) == [0]
    assert abs(math.sqrt(2.0) ** 2 - 2.0) < 1e-9 and re.match(r"a+b", "aab")
    try:
        {}["missing"]
    except KeyError as exc:
        assert str(exc) == "'missing'"


check(solve)
print("ok", {"answer": 6 * 7}, [i * i for i in range(5)])
check(lambda numbers, limit=None: None)  # and a failed check's traceback, as half of all checks end
"""

#: A run's source: ``{argv}`` and ``{env}`` become JSON (a Python literal too).
RUN: Final = '__import__("sys")._playground_run({argv}, {env})\n'

#: Environment names CPython reads while it starts (before the snapshot): a run that sets one starts cold.
COLD_ENV: Final = ("PYTHON*", "LANG", "LC_*", "TZ")
