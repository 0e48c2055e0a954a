"""The ``-c`` script both Python runtimes start with: run the user's file as ``python FILE`` would, from ``/work``.

wasi-libc starts every program in ``/`` and CPython cannot be told otherwise,
so this script changes directory, then compiles and runs the file in
``__main__`` with ``sys.argv``, ``sys.path`` and ``__file__`` as for a
script, leaves no name of its own behind, and drops its own frame from a
traceback (exit 1, or 130 for KeyboardInterrupt, as CPython). stdout is
line-buffered as in a terminal, not block-buffered as for a pipe: a line
printed before a ``sleep`` or a long computation shows when it is printed,
and before a traceback that follows it (about 11 us per line on Wasm; a
100,000-line flood takes about 1 s more). The runtimes
differ only in how the script's folder joins ``sys.path`` (``path_setup``).
"""

from typing import Final

from playground.packs.python_shims import SHIMS
from playground.packs.python_watch import WATCH

#: Who the guest is, in both Wasm Pythons' environment. HOME: outside the sandbox's tree, as on a real
#: machine, so that a program reaching for ``~/.ssh/id_rsa`` is refused there and the attempt is reported as
#: such (``core.attempts``); without one, ``expanduser`` would leave ``~`` as a folder name under /work.
#: USER and LOGNAME, as a login gives them: WASI has no user database (no ``pwd`` module), so
#: ``getpass.getuser()`` failed with ModuleNotFoundError after it found neither.
GUEST_ENV: Final = {"HOME": "/home/user", "USER": "user", "LOGNAME": "user"}

_TEMPLATE: Final = """\
def _playground_main():
    import os, sys, __main__
    del __main__._playground_main
    path = sys.argv.pop(1)
    sys.argv[0] = path
{path_setup}
    try:
        os.chdir("/work")
    except OSError:
        pass
    try:
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
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
        try:
            sys.stdout.flush()
        except Exception:
            pass
        sys.excepthook(type(exc), exc, exc.__traceback__)
        raise SystemExit(130 if isinstance(exc, KeyboardInterrupt) else 1) from None
_playground_main()
"""


#: CPython 3.12's WASI build measures ``time.process_time`` with wasi-libc's ``times()``, which counts
#: nanoseconds, and divides by a 100 Hz tick: 10**7 too large (a 0.17 s loop took "1665088 s"). This
#: divides it back, only where the clock says it is that implementation; it leaves no name behind.
PROCESS_TIME_FIX: Final = """\
def _playground_clock():
    import time
    info = time.get_clock_info("process_time")
    if info.implementation != "times()" or info.resolution != 0.01:
        return
    raw, raw_ns = time.process_time, time.process_time_ns
    def process_time():
        return raw() / 1e7
    def process_time_ns():
        return raw_ns() // 10**7
    process_time.__doc__, process_time_ns.__doc__ = raw.__doc__, raw_ns.__doc__
    time.process_time, time.process_time_ns = process_time, process_time_ns
_playground_clock()
del _playground_clock
"""


def run_file_script(path_setup: str, *, watch: bool = True) -> str:
    """The boot script with ``path_setup`` (lines indented by four spaces) placing the script's folder.

    ``watch``: the Wasm tier's in-guest set-up goes first: the WASI shims
    (``python_shims``: asyncio's event loop) and the attempt report
    (``python_watch``), so it sees everything the program does (the host
    gives it a report channel there).
    """
    return (SHIMS + WATCH if watch else "") + _TEMPLATE.format(path_setup=path_setup.rstrip("\n"))


#: The light runtime's arguments before the program's path (the ``python`` pack's): its boot script with the
#: CPU clock fix, which runs the program as ``python main.py`` would, from ``/work``; the script's folder
#: replaces ``sys.path[0]`` as for any script. Its snapshot keeps them (``WasmSnapshot.kept_args``), so no
#: run's source carries them.
LIGHT_ARGS: Final = ("-B", "-c", PROCESS_TIME_FIX + run_file_script("    sys.path[0] = os.path.dirname(path)"))
