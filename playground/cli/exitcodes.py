"""Exit codes of ``playground``: the guest's own code, or one of these.

Guest codes pass through unchanged (0-255). When the sandbox itself stops
the run, the CLI exits with a code that names why, and prints a one-line
reason to stderr.
"""

from __future__ import annotations

from typing import Final

from playground.core import (
    FSQuotaExceeded,
    LimitExceeded,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    TimeLimitExceeded,
)

USAGE: Final = 2
SANDBOX_ERROR: Final = 120  # could not run at all: unknown language, backend unavailable, bad spec
MEMORY_LIMIT: Final = 121
OUTPUT_LIMIT: Final = 122
FS_QUOTA: Final = 123
TIME_LIMIT: Final = 124  # like timeout(1)
#: The program ran to its end, but the sandbox refused to start a process for it (Result.limits_reached).
PROCESS_LIMIT: Final = 125
INTERRUPTED: Final = 130  # Ctrl-C


def for_reached(names: tuple[str, ...]) -> int | None:
    """The exit code for limits a finished run ran into (``Result.limits_reached``), or None for none.

    The program's own code is then in the message instead: a contained fork
    bomb whose program exits 0 must not look like a clean run to a script.
    """
    return PROCESS_LIMIT if "max_procs" in names else None


def for_limit(error: LimitExceeded) -> int:
    if isinstance(error, TimeLimitExceeded):
        return TIME_LIMIT
    if isinstance(error, MemoryLimitExceeded):
        return MEMORY_LIMIT
    if isinstance(error, OutputLimitExceeded):
        return OUTPUT_LIMIT
    if isinstance(error, FSQuotaExceeded):
        return FS_QUOTA
    return SANDBOX_ERROR
