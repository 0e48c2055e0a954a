"""Python: CPython 3.12 compiled to WASI, with its standard library embedded."""

from playground.core import Capabilities, DockerSpec, Pack, WasmSpec, WasmVariant
from playground.packs import scientific
from playground.packs.runtimes import CPYTHON

#: Runs the program as ``python main.py`` would, from ``/work``. wasi-libc starts every program in ``/``
#: and CPython cannot be told otherwise, so this ``-c`` script changes directory, then compiles and runs
#: the file in ``__main__`` with ``sys.argv``, ``sys.path[0]`` and ``__file__`` as for a script, leaves no
#: name of its own behind, and drops its own frame from a traceback (exit 1, or 130 for
#: KeyboardInterrupt, as CPython).
BOOT = """\
def _playground_main():
    import os, sys, __main__
    del __main__._playground_main
    path = sys.argv.pop(1)
    sys.argv[0] = path
    sys.path[0] = os.path.dirname(path)
    try:
        os.chdir("/work")
    except OSError:
        pass
    __main__.__file__ = path
    __main__.__cached__ = None
    try:
        with open(path, "rb") as source:
            code = compile(source.read(), path, "exec", dont_inherit=True)
        exec(code, __main__.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        exc.__traceback__ = exc.__traceback__.tb_next
        sys.excepthook(type(exc), exc, exc.__traceback__)
        raise SystemExit(130 if isinstance(exc, KeyboardInterrupt) else 1) from None
_playground_main()
"""

PACK = Pack(
    name="python",
    aliases=("py", "python3"),
    version="CPython 3.12.0 (WASI)",
    extensions=(".py",),
    # -B: never write .pyc files into the guest's filesystem (they would eat its quota).
    wasm=WasmSpec(
        module=CPYTHON, args=("-B", "-c", BOOT, "{main}", "{args}"), main_file="main.py", session_driver="repl_py",
        typical_start=0.067,  # bench/coldstart.py, Sandbox.run p50
        variants=(
            WasmVariant(
                name="scientific",
                detector="python-imports",
                triggers=scientific.PROVIDES,
                distributions=scientific.DISTRIBUTIONS,
                version="CPython 3.15.0 (WASI) with numpy, pandas, scipy, scikit-learn, statsmodels, matplotlib",
                description="Python 3.15 with numpy, pandas, scipy, scikit-learn, statsmodels and matplotlib "
                "(CPython in WebAssembly; picked when the program imports one of them)",
                wasm=WasmSpec(
                    module=scientific.SCIENTIFIC_CPYTHON, entry="run", mounts=scientific.MOUNTS,
                    args=("-B", "-c", scientific.BOOT, "{main}", "{args}"), main_file="main.py",
                    session_driver="repl_py", session_prelude=scientific.MPL_SHOW, env=scientific.ENV,
                    typical_start=0.035,
                ),
            ),
        ),
    ),
    # The Docker tier runs CPython natively (for servers: http.server and friends need sockets).
    # Offline and in tests: PLAYGROUND_IMAGE_PYTHON=playground-python:local (packaging/images/build.sh python).
    docker=DockerSpec(
        image="python:3.12-slim", cmd=("python3", "-B", "{main}", "{args}"), main_file="main.py", typical_start=0.2
    ),
    caps=Capabilities(sessions=True, serve_socket=True, packages=True),
    example="import json\nprint(json.dumps({'answer': 6 * 7}))\n",
    description="Python 3.12 (CPython in WebAssembly; no threads, sockets or ssl)",
    # Tracebacks and syntax errors: '  File "/work/main.py", line 5, in <module>'.
    error_locations=(r'File "(?P<file>[^"\n]+)", line (?P<line>\d+)',),
)
