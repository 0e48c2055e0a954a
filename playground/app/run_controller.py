"""``RunController``: Run and Stop for the editor's program, its live output and the summary line.

A run is one ``Sandbox.run`` on the qasync loop (the backend works in its
own threads). Before it starts, a program that is a web server (see
``server_hint``) gets "this is a server: use Serve" at once instead of a
10 s wait for a timeout; pressing Run again on the same code runs it anyway.
When a run fails, the output pane scrolls its first error line into view.
While a run goes, what the user types under the output is its keyboard
(``input_line``); a stdin text, when given, is its whole stdin instead.
After a run that failed for a module no runtime has, the packages field
offers the PyPI package that provides it (``packages_field``). ``route``
gives the sandbox a language runs on (the user's backend choice). A
runtime's first use is prepared before the run, in view (``preparation``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from playground.app.languages import editing_for
from playground.app.output_buffer import OutputBuffer
from playground.app.packages_field import suggest_package
from playground.app.preparation import prepare_for_run
from playground.app.run_summary import Summary, human_duration, summarize_limit, summarize_result, summary_html
from playground.app.server_hint import server_evidence
from playground.app.tasks import BackgroundTasks
from playground.app.themes import Theme
from playground.core import (
    Attempt,
    InputStream,
    InvalidLimits,
    LimitExceeded,
    Limits,
    ResolvedLimits,
    Result,
    Sandbox,
    SandboxError,
    Spec,
)
from playground.core.handoff import in_daemon_thread
from playground.core.locations import default_program_file
from playground.core.pack import Pack

log = logging.getLogger(__name__)

#: Summary kinds after which the output pane shows the first error line.
FAILED_KINDS = frozenset({"failed", "limit", "error"})


class RunView(Protocol):
    """What runs need from the window (``MainWindow`` provides it)."""

    def current_language(self) -> str: ...
    def code(self) -> str: ...
    def begin_output(self, buffer: OutputBuffer, summary_html: str) -> None: ...
    def set_summary(self, summary_html: str) -> None: ...
    def reveal_first_error(self) -> None: ...
    def set_running(self, running: bool) -> None: ...
    def show_out_files(self, files: Mapping[str, bytes]) -> None: ...
    def show_tab(self, name: str) -> None: ...
    def theme(self) -> Theme: ...
    def show_error_locations(self, pack: Pack, program: str) -> None: ...
    def start_input(self, buffer: OutputBuffer) -> tuple[bytes | None, InputStream | None]: ...
    def end_input(self) -> None: ...
    def offer_package(self, name: str | None) -> None: ...
    def show_attempts(self, attempts: Sequence[Attempt], dropped: int = 0, *, known: bool = True) -> None: ...


class RunController:
    """At most one run at a time. GUI thread only.

    ``make_spec(language, code, limits)`` builds the run's ``Spec`` (the
    caller adds the /in and /work files); ``status_text(language)`` says
    why a language cannot run.
    """

    def __init__(self, sandbox: Sandbox, view: RunView, *, limits: Callable[[], Limits],
                 make_spec: Callable[[str, str, Limits], Spec], status_text: Callable[[str], str],
                 tasks: BackgroundTasks, route: Callable[[str], Sandbox] | None = None) -> None:
        self.sandbox = sandbox
        self._route = route
        self.view = view
        self.closed = False
        self.last_result: Result | None = None
        self.last_summary: Summary | None = None
        self.runs_finished = 0
        self.backend: str | None = None  # where the current (or last) run went
        self._limits = limits
        self._make_spec = make_spec
        self._status_text = status_text
        self._tasks = tasks
        self._task: asyncio.Task[None] | None = None
        self._shown: Summary | None = None
        self._hinted: tuple[str, str] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def run(self) -> None:
        """Run the editor's code with the panel's limits. Ignored while a run is going."""
        if self.running:
            return
        try:
            limits = self._limits()
        except InvalidLimits as exc:
            self._refuse(f"Not run: {exc}")
            self.view.show_tab("limits")
            return
        language = self.view.current_language()
        if not language:
            self._refuse("Nothing to run with: " + self._status_text(""))
            return
        code = self.view.code()
        if self._server_hint(language, code):
            return
        try:
            spec = self._make_spec(language, code, limits)
            # what the run gets: the panel's values over the defaults of its runtime (a variant's, maybe)
            resolved = self.sandbox.resolve_limits(spec.limits, self.sandbox.pack_for(spec))
        except SandboxError as exc:
            self._refuse(f"Not run: {exc}")
            return
        self.view.offer_package(None)
        buffer = OutputBuffer()
        stdin, keyboard = self.view.start_input(buffer)  # the stdin text, or typing while it runs
        if stdin is not None:
            spec = dataclasses.replace(spec, stdin=stdin)
        self._shown = Summary("running", f"Running {language}…")
        self.view.begin_output(buffer, self._html(self._shown))
        self.view.set_running(True)
        sandbox = self._route(language) if self._route is not None else self.sandbox
        self.backend = None
        self._task = self._tasks.spawn(self._run(sandbox, spec, resolved, buffer, keyboard))

    def _server_hint(self, language: str, code: str) -> bool:
        """Say "use Serve" instead of running a server; True when it did (the second Run in a row runs)."""
        evidence = server_evidence(editing_for(self.sandbox, language), code)
        if evidence is None or self._hinted == (language, code):
            self._hinted = None
            return False
        self._hinted = (language, code)
        serve = self.sandbox.serve_status(language)
        how = ("Use Serve (Ctrl+Shift+Enter, or Serve in the Service tab): it runs the program in the sandbox and "
               "opens its page there." if serve.backend is not None else
               f"Serve could run it, but not here: {serve.why_not}")
        buffer = OutputBuffer()
        buffer.note(f"This program is a web server: it {evidence}. Run waits for a program to end, and a server "
                    f"never ends, so it would only time out.\n{how}\nTo run it as a plain program anyway, press "
                    "Run again.")
        buffer.finish()
        summary = Summary("hint", "This is a server: use Serve (Ctrl+Shift+Enter). Press Run again to run it anyway.")
        self.last_summary = self._shown = summary
        self.view.begin_output(buffer, self._html(summary))
        return True

    def stop(self) -> None:
        """Cancel the running guest (the core stops it promptly). Idempotent."""
        if self.running:
            assert self._task is not None
            self._task.cancel()
            self._show_summary(Summary("stopped", "Stopping…"))

    def refresh_summary(self) -> None:
        """Show the summary again (the theme's colours changed)."""
        if self._shown is not None:
            self._show_summary(self._shown)

    def _refuse(self, why: str) -> None:
        self.last_summary = Summary("error", why)
        self._show_summary(self.last_summary)

    def _show_summary(self, summary: Summary) -> None:
        self._shown = summary
        self.view.set_summary(self._html(summary))

    async def _run(self, sandbox: Sandbox, spec: Spec, limits: ResolvedLimits, buffer: OutputBuffer,
                   keyboard: InputStream | None) -> None:
        loop = asyncio.get_running_loop()
        started = time.monotonic()

        def progress(message: str, fraction: float) -> None:  # may be called on a worker thread
            text = message if fraction < 0 else f"{message} ({fraction:.0%})"
            try:
                loop.call_soon_threadsafe(self._show_progress, text)
            except RuntimeError:  # the loop closed while the window shut down: nobody to tell
                pass

        result: Result | None = None
        try:
            # a runtime's first use (the scientific one: download and compile) is a visible preparation
            if await prepare_for_run(sandbox, spec, show=self._show_progress, note=buffer.note):
                self._show_progress(f"Prepared. Running {spec.lang}…")
            # where it goes (once prepared): may probe the Docker daemon (cached a few seconds), so off the GUI thread
            self.backend = (await in_daemon_thread(lambda: sandbox.status(spec.lang))).backend
            result = await sandbox.run(spec, on_output=buffer.write, on_progress=progress, input=keyboard)
            summary = summarize_result(result, limits)
            hint = sandbox.hint(spec, result) if result.exit_code else None  # what it met, what to do (as the CLI)
            if hint:
                buffer.note(f"hint: {hint}")
        except LimitExceeded as exc:
            result = exc.result
            summary = summarize_limit(exc, limits)
        except asyncio.CancelledError:
            summary = Summary("stopped", f"Stopped by you after {human_duration(time.monotonic() - started)}.")
        except SandboxError as exc:
            summary = Summary("error", str(exc))
        except Exception as exc:
            log.exception("run failed")
            summary = Summary("error", f"internal error: {exc!r}")
        finally:
            if not self.closed:
                self.view.end_input()
            if result is not None and result.truncated:
                buffer.note(f"[output truncated at {limits.max_output} bytes]")
            buffer.finish()
        self.last_result = result
        self.last_summary = summary
        self.runs_finished += 1
        if not self.closed:
            self.view.set_running(False)
            self._show_summary(summary)
            if summary.kind in FAILED_KINDS:
                self.view.reveal_first_error()
            if result is not None:  # the places its errors name become links to the editor's lines
                pack = sandbox.pack(spec.lang)
                self.view.show_error_locations(pack, spec.main_file or default_program_file(pack, result.backend))
                self.view.offer_package(suggest_package(sandbox, spec, result))
            if result is not None:
                self.view.show_attempts(result.attempts, result.attempts_dropped)
            else:
                self.view.show_attempts((), known=False)
            self.view.show_out_files(result.files if result is not None else {})

    def _show_progress(self, text: str) -> None:
        if self.running and not self.closed:
            self._show_summary(Summary("running", text))

    def _html(self, summary: Summary) -> str:
        theme = self.view.theme()
        colours = {"ok": theme.ok, "tried": theme.note, "failed": theme.error, "limit": theme.note,
                   "stopped": theme.note, "error": theme.error, "hint": theme.note}
        return summary_html(summary, colours)
