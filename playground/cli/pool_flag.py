"""``--docker-pool N`` on ``run``, ``serve``, ``mcp`` and ``gui``: the Docker tier's warm container pool size;
``--wasm-processes N`` on ``mcp``: the Wasm tier's worker processes for concurrent runs.

Why a module of its own: four sub-commands share one flag with one meaning
and one check; ``playground.cli.main`` binds the value into the sandbox
factory (``assembly.default_sandbox(docker_pool=...)``), so no sub-command
handles it itself.
"""

from __future__ import annotations

import argparse
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


def add_processes_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--wasm-processes N`` to ``parser`` (a server whose clients run programs at the same time)."""
    parser.add_argument(
        "--wasm-processes", type=processes, default=0, metavar="N",
        help="Wasm tier: spread one-shot runs that overlap to N worker processes, so they run in parallel "
        "(numpy programs about 1.8x with two in flight on two cores; each worker takes about 70 MB, "
        "340 MB once it ran scientific programs; "
        f"default 0: all runs in this process; at most {MAX_PROCESSES})",
    )  # fmt: skip


def processes(text: str) -> int:
    """``N`` as given: a whole number from 0 to ``MAX_PROCESSES``."""
    return _count(text, MAX_PROCESSES)
