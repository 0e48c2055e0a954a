"""Python: CPython 3.12 compiled to WASI, with its standard library embedded."""

from playground.core import DockerSpec, Editing, InputSyntax, Pack, WasmDriver, WasmSnapshot, WasmSpec, WasmVariant
from playground.packs import python_snapshot, scientific
from playground.packs.python_boot import GUEST_ENV, LIGHT_ARGS, PROCESS_TIME_FIX, run_file_script
from playground.packs.python_docker_watch import WATCH as DOCKER_WATCH
from playground.packs.python_shims import SHIMS
from playground.packs.python_watch import WATCH
from playground.packs.runtimes import CPYTHON

#: The same on the Docker tier, after that tier's in-guest attempt report (``python_docker_watch``: it reports
#: over the descriptor the wrapper opens, and only reports: the container decides).
DOCKER_BOOT = DOCKER_WATCH + run_file_script("    sys.path[0] = os.path.dirname(path)", watch=False)

#: Where CPython's start-up (``getpath``) looks for its landmarks before it settles on its compiled-in
#: prefix: outside the sandbox's tree, but its own doing, not the program's (``WasmSpec.quiet_paths``).
STARTUP_PROBES = ("/pyvenv.cfg", "/pybuilddir.txt", "/Modules/Setup.local", "/lib/python312.zip", "/lib/python3.12")

#: Where ``runtimes.CPYTHON``'s compiled standard library says its sources are (the tree it was built in):
#: a traceback through a standard module has ``linecache`` look there for the lines to show. Not the
#: program's doing: without this, ``json.loads("x")`` reported "tried: read /wlr/build-staging/...".
BUILD_TREE = "/wlr/build-staging/python/v3.12.0-aio/checkout"

#: The REPL: our driver script on the command line. CPython cannot poll for Ctrl-C cheaply (a monitoring
#: callback made loops 5.4x slower): the host sets its SIGINT words instead (``cpython_signals``).
REPL = WasmDriver(args=("-B", "-c", "{driver}"), script="repl.py", interrupt="signal")

#: Why ``subprocess`` and ``os.system`` fail, whichever of their two messages a program meets (``CANNOT``).
NO_PROCESSES = "this WebAssembly Python cannot start processes (subprocess, os.system)"

#: What a program meets that neither WebAssembly Python can do (``WasmSpec.cannot``): a stderr marker and why.
#: Threads: wasi-libc has none, so ``threading``, ``ThreadPoolExecutor`` and ``asyncio.to_thread`` fail as they
#: start one. Processes: ``subprocess`` (the light runtime's message) and the watch's stand-ins (``os.system``).
CANNOT = {
    "RuntimeError: can't start new thread": (
        "this WebAssembly Python runs one thread: threading, concurrent.futures' ThreadPoolExecutor and "
        "asyncio.to_thread cannot start one (asyncio's tasks and event loop work)"
    ),
    "wasi does not support processes": NO_PROCESSES,
    "no processes in this sandbox": NO_PROCESSES,
    "module 'os' has no attribute 'fork'": "this WebAssembly Python cannot start processes (os.fork)",
    "module 'signal' has no attribute 'alarm'": (
        "this WebAssembly Python has no timer signals (signal.alarm, signal.setitimer); the sandbox's own time "
        "limit stops a run that takes too long"
    ),
}


#: How CPython says that a module is not there: 3.12's words for any module; from 3.15 (the scientific
#: runtime), a standard module its build left out gets one of the other two.
NOT_THERE = (
    "No module named '{}'", "Standard library module '{}' was not found",
    "Unsupported platform for standard library module '{}'",
)


def not_there(module: str, why: str) -> dict[str, str]:
    """Markers of ``module`` missing, in each of ``NOT_THERE``'s wordings -> ``why``."""
    return {form.format(module): why for form in NOT_THERE}


def left_out(modules: dict[str, str]) -> dict[str, str]:
    """``WasmSpec.cannot`` entries for standard modules a runtime's build leaves out: the module its import
    error names -> the one a program imports (``_lzma`` -> ``lzma``)."""
    entries: dict[str, str] = {}
    for module, name in modules.items():
        entries |= not_there(module, (
            f"{name} is in Python's standard library but not in this WebAssembly build of it, which has no "
            "threads, processes or native libraries"
        ))  # fmt: skip
    return entries


#: A window needs a display, which no tier has: the sentence for tkinter, turtle and pygame (``NOWHERE``).
NO_WINDOW = (
    "the sandbox has no display, so a program cannot open a window (tkinter, turtle, pygame) on either tier; "
    "draw into an image file instead (matplotlib's savefig, or Pillow) and save it in /out"
)
#: A full-screen terminal program needs a terminal, which no tier gives: output is captured (``NOWHERE``).
NO_TERMINAL = (
    "curses needs a terminal, and the sandbox captures a program's output instead of giving it one, on either "
    "tier; print plain lines instead"
)
#: What neither tier can do (``Pack.nowhere``): the Wasm runtimes leave these modules out, and the Docker
#: tier's container has no display and no terminal. Said instead of "the Docker tier can run this program".
NOWHERE = {
    **not_there("tkinter", NO_WINDOW), **not_there("_tkinter", NO_WINDOW), **not_there("turtle", NO_WINDOW),
    "No module named 'pygame'": NO_WINDOW,
    "no display name and no $DISPLAY environment variable": NO_WINDOW,
    "couldn't connect to display": NO_WINDOW,
    **not_there("curses", NO_TERMINAL), **not_there("_curses", NO_TERMINAL),
    "_curses.error: setupterm": NO_TERMINAL,
}  # fmt: skip


#: The light runtime's ``cannot``: the above, its missing time zone database (the scientific runtime has
#: ``tzdata``), and the standard modules its build leaves out (a program that imported one was told to add it
#: from PyPI, as if it were a third-party package).
LIGHT_CANNOT = {
    **CANNOT,
    "ZoneInfoNotFoundError": (
        "this WebAssembly Python has no time zone database for zoneinfo; the scientific runtime has one "
        "(import tzdata at the top of the program picks it)"
    ),
    **left_out({
        "multiprocessing": "multiprocessing", "_multiprocessing": "multiprocessing",
        "concurrent.futures.thread": "concurrent.futures' ThreadPoolExecutor",
        "concurrent.futures.process": "concurrent.futures' ProcessPoolExecutor",
        "ssl": "ssl", "_ssl": "ssl", "ctypes": "ctypes", "readline": "readline", "_lzma": "lzma",
    }),
}  # fmt: skip

#: What marks a Python program as a web server (``Editing.server_signs``).
SERVER_SIGNS = (
    (r"\bserve_forever\s*\(", "calls serve_forever()"),
    (r"(?m)^\s*(?:from|import)\s+(?:http\.server|socketserver)\b", "uses http.server"),
    (r"\bHTTPServer\s*\(", "creates an HTTPServer"),
    (r"(?s)\bsocket\b.*\.listen\s*\(", "listens on a socket"),  # not turtle's listen()
    (r"(?si)\b(?:uvicorn\.run|web\.run_app)\s*\(|\bflask\b.*\.run\s*\(", "starts a web framework's server"),
)


def _one_shot_snapshot(
    capture: str, preload: tuple[str, ...], *, for_imports: tuple[str, ...] = (), detector: str = ""
) -> WasmSnapshot:
    """A snapshot one-shot runs start from: the started interpreter after ``capture`` (which imports ``preload``)."""
    return WasmSnapshot(
        artifact_sha256=CPYTHON.sha256, entry_function=python_snapshot.PYRUN_SIMPLE_STRING_FLAGS,
        entry_marker="__main__", capture_args=("-B", "-c", capture), run_source=python_snapshot.RUN,
        kept_args=LIGHT_ARGS, preload=preload, cold_env=python_snapshot.COLD_ENV,
        warm_program=python_snapshot.WARM_PROGRAM, for_imports=for_imports, detector=detector,
    )  # fmt: skip


PACK = Pack(
    name="python",
    aliases=("py", "python3"),
    version="CPython 3.12.0 (WASI)",
    extensions=(".py",),
    # -B: never write .pyc files into the guest's filesystem (they would eat its quota).
    wasm=WasmSpec(
        module=CPYTHON,
        args=(*LIGHT_ARGS, "{main}", "{args}"),
        main_file="main.py",
        session=REPL,
        session_prelude=PROCESS_TIME_FIX + SHIMS + WATCH,
        cannot=LIGHT_CANNOT,
        typical_start=0.004,  # bench/python_snapshot.py, Sandbox.run p50 from the snapshot (cold: about 0.06)
        quiet_paths=(*STARTUP_PROBES, BUILD_TREE),
        env=GUEST_ENV,
        # One-shot runs start from a snapshot of the started interpreter (python_snapshot, backends/wasm/snapshot).
        snapshot=_one_shot_snapshot(python_snapshot.CAPTURE, python_snapshot.PRELOAD),
        # Programs that import asyncio, or one of the standard modules slow to import, start with those imported.
        import_snapshots=(
            _one_shot_snapshot(
                python_snapshot.ASYNCIO_CAPTURE, python_snapshot.ASYNCIO_PRELOAD,
                for_imports=("asyncio",), detector="python-imports",
            ),
            _one_shot_snapshot(
                python_snapshot.STDLIB_CAPTURE, python_snapshot.STDLIB_PRELOAD,
                for_imports=python_snapshot.STDLIB_FOR, detector="python-imports",
            ),
        ),
        # Sessions start from a snapshot with the REPL driver compiled and its imports done, before it runs.
        session_snapshot=WasmSnapshot(
            artifact_sha256=CPYTHON.sha256,
            entry_function=python_snapshot.PYRUN_SIMPLE_STRING_FLAGS,
            entry_marker="__main__",
            capture_args=("-B", "-c", python_snapshot.SESSION_CAPTURE, "{driver}"),
            run_source=python_snapshot.RUN,
            preload=python_snapshot.SESSION_PRELOAD,
            cold_env=python_snapshot.COLD_ENV,
        ),
        variants=(
            WasmVariant(
                name="scientific",
                detector="python-imports",
                triggers=scientific.PROVIDES,
                distributions=scientific.DISTRIBUTIONS,
                limits=scientific.LIMITS,
                version="CPython 3.15.0 (WASI) with numpy, pandas, scipy, scikit-learn, statsmodels, matplotlib",
                description="Python 3.15 with numpy, pandas, scipy, scikit-learn, statsmodels and matplotlib "
                "(CPython in WebAssembly; picked when the program imports one of them)",
                wasm=WasmSpec(
                    module=scientific.SCIENTIFIC_CPYTHON,
                    entry="run",
                    mounts=scientific.MOUNTS,
                    args=(*scientific.ARGS, "{main}", "{args}"),
                    main_file="main.py",
                    session=REPL,
                    session_prelude=scientific.MPL_SHOW + SHIMS + WATCH,
                    cannot={**CANNOT, **scientific.CANNOT, **left_out(scientific.LEFT_OUT)},
                    env=scientific.ENV,
                    typical_start=0.005,  # bench/scientific.py, import numpy from the snapshot (cold: about 0.14)
                    snapshot=scientific.SNAPSHOT,
                    import_snapshots=scientific.IMPORT_SNAPSHOTS,
                ),
            ),
        ),
    ),
    # The Docker tier runs CPython natively (for servers: http.server and friends need sockets).
    # Without the official image, playground-python:local is used (`playground images build python`).
    # The same boot script as on Wasm (DOCKER_BOOT): line-buffered stdout, so a line shows when it is printed
    # and before a traceback after it, as in a terminal. Not -u: unbuffered, print() writes each argument
    # apart, six writes (six frames on the container's stream) per line, and a flood of them kept the
    # window's event loop waiting.
    docker=DockerSpec(
        image="python:3.12-slim",
        cmd=("python3", "-B", "-c", DOCKER_BOOT, "{main}", "{args}"),
        main_file="main.py",
        image_packages=("python3", "python3-numpy", "python3-pandas", "python3-scipy", "python3-sklearn",
                        "python3-matplotlib", "python3-statsmodels", "python3-requests"),
        typical_start=0.2,
    ),
    packages=True,
    nowhere=NOWHERE,
    example="import json\nprint(json.dumps({'answer': 6 * 7}))\n",
    description="Python 3.12 (CPython in WebAssembly; no threads, sockets or ssl)",
    # Tracebacks and syntax errors: '  File "/work/main.py", line 5, in <module>'.
    error_locations=(r'File "(?P<file>[^"\n]+)", line (?P<line>\d+)',),
    editing=Editing(lexer="python3", indent=4, input_syntax=InputSyntax.PYTHON, server_signs=SERVER_SIGNS),
)
