"""A runtime's first use, before a run: fetched and compiled off the GUI thread, with its progress in view.

The first program that imports numpy (or pandas, matplotlib ...) needs the
scientific Python runtime: a one-time download and compile of a minute or
two. ``prepare_for_run`` does what the CLI does before a run
(``Sandbox.missing`` / ``prepare_pack``) on a daemon thread and shows it
as a preparation: every step as a note in the output pane and the summary
line saying what is being prepared, the latest step and the seconds so far
(ticking each second, so a silent compile does not look like a hang). It
happens outside the run, so no time limit is charged for it; Stop cancels
the wait (the work itself installs atomically and may be left to finish).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from playground.core import Sandbox, Spec
from playground.core.handoff import in_daemon_thread

#: How often the summary's seconds count goes up while preparing.
TICK = 1.0


async def prepare_for_run(sandbox: Sandbox, spec: Spec, *, show: Callable[[str], None],
                          note: Callable[[str], None]) -> list[str]:
    """Fetch or compile what the runtime for ``spec`` lacks here; return what was missing (empty: nothing).

    ``show`` gets the summary text, ``note`` each progress line (both on the GUI thread).

    Raises:
        BackendUnavailable: provisioning failed (the message says why).
    """
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    latest = ""

    def summary() -> str:
        return (f"Preparing the runtime for this program (first use only, may take a minute or two): "
                f"{latest} · {time.monotonic() - started:.0f} s")

    def on_line(message: str) -> None:
        nonlocal latest
        latest = message.strip()
        note(latest)
        show(summary())

    def progress(message: str) -> None:  # on the worker thread
        try:
            loop.call_soon_threadsafe(on_line, message)
        except RuntimeError:  # the loop closed while quitting
            pass

    def work() -> list[str]:
        pack = sandbox.pack_for(spec)
        missing = sandbox.missing(pack)  # a few stats (or a Docker question): cheap but not GUI-thread cheap
        if missing:
            progress(f"{pack.name} needs {', '.join(missing)} here first")
            sandbox.prepare_pack(pack, progress)
        return missing

    async def tick() -> None:
        while True:
            await asyncio.sleep(TICK)
            if latest:
                show(summary())

    ticker = asyncio.ensure_future(tick())
    try:
        # a daemon thread: quitting must not wait a minute for a compile; the cache installs files atomically
        return await in_daemon_thread(work, name="gui-prepare")
    finally:
        ticker.cancel()
