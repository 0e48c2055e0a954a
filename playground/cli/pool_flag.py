"""``--docker-pool N`` on ``run``, ``serve``, ``mcp`` and ``gui``: the Docker tier's warm container pool size;
``--wasm-processes N`` on ``mcp``: the Wasm tier's worker processes for concurrent runs.

Why a module of its own: four sub-commands share one flag with one meaning
and one check; ``playground.cli.main`` binds the value into the sandbox
factory (``assembly.default_sandbox(docker_pool=...)``), so no sub-command
handles it itself.
"""

from __future__ import annotations

import argparse
import os
from typing import Final

#: The largest pool size accepted on the command line (each prepared container is a parked process tree).
MAX_POOL: Final = 16


def add_pool_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--docker-pool N`` to ``parser``."""
    parser.add_argument(
        "--docker-pool", type=pool_size, default=None, metavar="N",
        help="Docker tier: keep N prepared containers per language used, so a run skips creating and "
        f"starting its container (default 1; 0 disables; at most {MAX_POOL}; declined on Podman)",
    )  # fmt: skip


def pool_size(text: str) -> int:
    """``N`` as given: a whole number from 0 to ``MAX_POOL``."""
    return _count(text, MAX_POOL)


def _count(text: str, most: int) -> int:
    """``text`` as a whole number from 0 to ``most`` (argparse's type errors otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= most:
        raise argparse.ArgumentTypeError(f"must be between 0 and {most}, not {value}")
    return value


#: The most Wasm worker processes (``backends/wasm/procpool.MAX_PROCESSES``).
MAX_PROCESSES: Final = 16


#: ``--wasm-processes`` when not given, on a machine with this many CPUs or more (fewer: 0).
DEFAULT_PROCESSES: Final = 2
#: What a worker costs (``procpool``'s figures), said by the flag's help and by ``playground doctor``.
WORKER_MEMORY: Final = "each takes about 40-60 MB, about 215 MB once it ran numpy and pandas programs"


def default_processes() -> int:
    """``DEFAULT_PROCESSES`` when this process may use that many CPUs, else 0.

    Why on by default for ``mcp``: its clients (agents) may run programs at
    the same time, and two runs in flight in one process go at 0.8-0.9x the
    throughput of one at a time (they take turns at the interpreter lock and
    interrupt each other's cores), with two workers at 1.05-1.5x (hello
    worlds of about 1 ms) to 1.45-1.85x (Python and numpy programs) and
    1.45-1.85x (HumanEval checks). The workers start only when two runs
    first overlap, so a client that runs one program at a time never starts one.
    """
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return DEFAULT_PROCESSES if usable >= DEFAULT_PROCESSES else 0


def add_processes_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--wasm-processes N`` to ``parser`` (a server whose clients run programs at the same time)."""
    parser.add_argument(
        "--wasm-processes", type=processes, default=default_processes(), metavar="N",
        help="Wasm tier: spread one-shot runs that overlap to N worker processes, so they run in parallel "
        "(two in flight on two cores: Python and numpy programs 1.45-1.85x the throughput of one at a time, "
        f"against 0.8-0.9x in one process); started when two runs first overlap; {WORKER_MEMORY} "
        f"(default {DEFAULT_PROCESSES} on a machine with "
        f"{DEFAULT_PROCESSES} CPUs or more, else 0; 0: all runs in this process; at most {MAX_PROCESSES})",
    )  # fmt: skip


def processes(text: str) -> int:
    """``N`` as given: a whole number from 0 to ``MAX_PROCESSES``."""
    return _count(text, MAX_PROCESSES)
