"""The JavaScript pack's snapshot (``WasmSnapshot``): QuickJS set up once, then mapped into every one-shot run.

Why: a cold QuickJS run spends most of its ~4 ms creating the runtime and
context and compiling the driver's console/timers/process and node-like
layers, the same work for every program. The driver
(``resources/runtime_sources/quickjs/driver.c``, "Snapshot runs") does that
with ``--snapshot`` and then asks for the realtime clock's resolution, the
snapshot point. A run calls the driver's exported ``qjs_snapshot_run``
(function ``ENTRY_FUNCTION`` of the pinned artifact, checked at every
capture: its type and its reference to ``ENTRY_MARKER``) with ``RUN``: it
draws a fresh Math.random state, sets ``scriptArgs``, ``process.argv`` and
``process.env`` to the run's own and runs the program as a cold start does.

What a program can see differently from a cold start: the Map/Set hash
seed is the capture's (invisible to JavaScript except through timing).
``QJS_STACK_SIZE`` and ``QJS_MEMORY_LIMIT`` are read at set-up, so a run
that sets them starts cold (``COLD_ENV``).
"""

from typing import Final

#: ``qjs_snapshot_run`` in ``runtimes.QUICKJS`` (its export; a test checks the index): (i32 source, i32 flags) -> i32.
ENTRY_FUNCTION: Final = 1361

#: A string literal only the entry function uses (the JSON parse's file name).
ENTRY_MARKER: Final = "<qjs-snapshot-run>"

#: The capture's arguments (after argv[0]).
CAPTURE_ARGS: Final = ("--snapshot",)

#: A run's source: JSON, ``{argv}`` the argv a cold start would get (argv[0], "--", FILE, args...).
RUN: Final = '{"argv": {argv}, "env": {env}}'

#: The export name of the entry function (for the test that pins ``ENTRY_FUNCTION``).
ENTRY_EXPORT: Final = "qjs_snapshot_run"

#: Environment names the driver reads while it sets up (before the snapshot): a run that sets one starts cold.
COLD_ENV: Final = ("QJS_*",)
