"""``Controller``: what the playground does, talking to ``playground.core`` and to a narrow view.

It never builds widgets. Guest work runs inside the core (whose backends
use worker threads); the controller's coroutines run on the qasync loop
on the GUI thread, so they may call the view directly. Worker threads
only ever reach the GUI through an ``OutputBuffer`` or
``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QSettings

from playground.app import settings as prefs_io
from playground.app.backends_panel import LanguageRow
from playground.app.editor import MAX_FONT, MIN_FONT
from playground.app.examples import find_examples
from playground.app.languages import editor_style
from playground.app.limits_panel import parse_limits
from playground.app.main_window import Example, LanguageChoice, MainWindow
from playground.app.output_buffer import OutputBuffer
from playground.app.repl_controller import ReplController, ReplView
from playground.app.run_summary import Summary, human_duration, summarize_limit, summarize_result, summary_html
from playground.app.service_controller import ServiceController, ServiceView
from playground.app.tasks import BackgroundTasks
from playground.app.themes import Theme, theme_named
from playground.core import (
    Diagnosable,
    Diagnostic,
    InputStream,
    InvalidLimits,
    InvalidSpec,
    LimitExceeded,
    Limits,
    Result,
    Sandbox,
    SandboxError,
    Spec,
    UnknownLanguage,
    clean_key,
)

log = logging.getLogger(__name__)

#: Files larger than this are not opened into the editor.
MAX_OPEN_BYTES = 4 * 1024 * 1024
#: Files larger than this are not added to /in (the FS quota would refuse them anyway).
MAX_INPUT_BYTES = 64 * 1024 * 1024


class View(Protocol):
    """What the controller needs from the window (``MainWindow`` provides it)."""

    @property
    def repl(self) -> ReplView: ...

    @property
    def service(self) -> ServiceView: ...

    def set_languages(self, choices: Sequence[LanguageChoice]) -> None: ...
    def current_language(self) -> str: ...
    def select_language(self, name: str) -> None: ...
    def set_language_status(self, text: str) -> None: ...
    def set_editor_style(self, lexer: str, indent: int) -> None: ...
    def code(self) -> str: ...
    def set_code(self, text: str) -> None: ...
    def mark_saved(self) -> None: ...
    def set_document_title(self, name: str) -> None: ...
    def set_running(self, running: bool) -> None: ...
    def begin_output(self, buffer: OutputBuffer, summary_html: str) -> None: ...
    def start_input(self, buffer: OutputBuffer) -> tuple[bytes | None, InputStream | None]: ...
    def end_input(self) -> None: ...
    def set_summary(self, summary_html: str) -> None: ...
    def show_message(self, text: str) -> None: ...
    def limit_texts(self) -> dict[str, str]: ...
    def set_limit_texts(self, texts: Mapping[str, str]) -> None: ...
    def show_tab(self, name: str) -> None: ...
    def set_input_files(self, sizes: Mapping[str, int], work: Mapping[str, int] | None = None) -> None: ...
    def show_out_files(self, files: Mapping[str, bytes]) -> None: ...
    def show_backends(self, languages: Sequence[LanguageRow], diagnostics: Sequence[Diagnostic]) -> None: ...
    def theme(self) -> Theme: ...
    def apply_theme(self, theme: Theme) -> None: ...
    def set_font_size(self, size: int) -> None: ...
    def font_size(self) -> int: ...


class Controller:
    """Owns the sandbox, the REPL sessions and the preferences; drives the view.

    Call ``start()`` once the view is connected and the qasync loop runs;
    ``await shutdown()`` before the loop ends (idempotent).
    """

    def __init__(self, sandbox: Sandbox, view: View, store: QSettings) -> None:
        self.sandbox = sandbox
        self.view = view
        self._store = store
        self.prefs = prefs_io.load(store)
        self._tasks = BackgroundTasks()
        self.repl = ReplController(sandbox, view.repl, self._current_limits, self._tasks)
        self.service = ServiceController(sandbox, view.service, self._current_limits, lambda: self._inputs, self._tasks)
        self._inputs: dict[str, bytes] = {}
        self._work: dict[str, bytes] = {}
        self._path: Path | None = None
        self._run_task: asyncio.Task[None] | None = None
        self._closed = False
        self.last_result: Result | None = None
        self.last_summary: Summary | None = None
        self._shown: Summary | None = None
        self.runs_finished = 0

    # -- start-up -----------------------------------------------------------

    def bind(self, w: MainWindow) -> None:
        """Connect the window's actions to this controller."""
        w.connect_run(self.run, self.stop)
        w.connect_language(self.set_language)
        w.connect_files(new=self.new_file, open_=self.open_file, save=self.save_file, save_as=self.save_file_as)
        w.connect_inputs(add=self.add_inputs, remove=self.remove_inputs, save_out=self.save_out)
        w.connect_view(theme=self.set_theme, zoom=self.zoom)
        w.connect_repl(
            submit=lambda code: self.repl.submit(self.view.current_language(), code),
            reset=lambda: self.repl.reset(self.view.current_language()),
            interrupt=self.repl.interrupt,
        )
        w.connect_service(
            start=lambda: self.service.start(self.view.current_language(), self.view.code()),
            stop=self.service.stop,
            page_loaded=self.service.page_loaded,
        )
        w.connect_backends(self.refresh_backends)
        w.connect_limits(self._limits_changed)
        w.closing.connect(self.save_settings)
        w.set_examples(self.examples(), self.load_example)

    def start(self) -> None:
        """Fill the view from the sandbox and the saved preferences. Never runs anything."""
        self.view.apply_theme(theme_named(self.prefs.theme))
        self.view.set_font_size(self.prefs.font_size)
        self.view.set_limit_texts(self.prefs.limits)
        self.refresh_languages()
        names = self.sandbox.languages()
        language = self.prefs.language if self.prefs.language in names else (names[0] if names else "")
        self.set_language(language)
        self.view.set_code(self.prefs.snippet or (self.sandbox.pack(language).example if language else ""))
        self.view.set_document_title("")
        self._tasks.spawn(self._refresh_backends())

    def examples(self) -> list[Example]:
        return find_examples(self.sandbox)

    # -- languages ------------------------------------------------------------

    def refresh_languages(self) -> None:
        choices = []
        for name in self.sandbox.languages():
            status = self.sandbox.status(name)
            choices.append(LanguageChoice(name, status.backend is not None, status.why_not))
        self.view.set_languages(choices)

    def language_status_text(self, language: str) -> str:
        """"Runs on wasm" or why it cannot run here."""
        if not language:
            return "No language packs are registered in this build, so nothing can run yet."
        status = self.sandbox.status(language)
        if status.backend is not None:
            return f"runs on {status.backend}"
        return f"{language} cannot run here: {status.why_not}"

    def set_language(self, language: str) -> None:
        """The user picked ``language`` (or a file/example implied it)."""
        if language and language != self.view.current_language():
            self.view.select_language(language)
        style = editor_style(language)
        self.view.set_editor_style(style.lexer, style.indent)
        self.view.set_language_status(self.language_status_text(language))
        if language:
            self.prefs.language = language
        self.repl.show_language(language, self.language_status_text(language))

    # -- running ------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    def run(self) -> None:
        """Run the editor's code with the panel's limits and the /in files. Ignored while a run is going."""
        if self.running:
            return
        try:
            limits = self._current_limits()
        except InvalidLimits as exc:
            self._refuse(f"Not run: {exc}")
            self.view.show_tab("limits")
            return
        language = self.view.current_language()
        if not language:
            self._refuse("Nothing to run with: " + self.language_status_text(""))
            return
        try:
            spec = Spec(lang=language, code=self.view.code(), files=dict(self._inputs), work_files=dict(self._work),
                        main_file=self._main_file(), limits=limits)
        except SandboxError as exc:
            self._refuse(f"Not run: {exc}")
            return
        buffer = OutputBuffer()
        stdin, keyboard = self.view.start_input(buffer)  # the stdin text, or typing while it runs (input_line)
        if stdin is not None:
            spec = dataclasses.replace(spec, stdin=stdin)
        self._shown = Summary("running", f"Running {language}…")
        self.view.begin_output(buffer, self._html(self._shown))
        self.view.set_running(True)
        self._run_task = self._tasks.spawn(self._run(spec, limits, buffer, keyboard))

    def _current_limits(self) -> Limits:
        """The limits panel's values merged with the sandbox defaults.

        Raises:
            InvalidLimits: a value does not parse or is out of range.
        """
        return parse_limits(self.view.limit_texts(), self.sandbox.default_limits)

    def stop(self) -> None:
        """Cancel the running guest (the core stops it promptly). Idempotent."""
        if self.running:
            assert self._run_task is not None
            self._run_task.cancel()
            self._show_summary(Summary("stopped", "Stopping…"))

    def _refuse(self, why: str) -> None:
        self.last_summary = Summary("error", why)
        self._show_summary(self.last_summary)

    def _show_summary(self, summary: Summary) -> None:
        self._shown = summary
        self.view.set_summary(self._html(summary))

    async def _run(self, spec: Spec, limits: Limits, buffer: OutputBuffer, keyboard: InputStream | None) -> None:
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
            result = await self.sandbox.run(spec, on_output=buffer.write, on_progress=progress, input=keyboard)
            summary = summarize_result(result)
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
            if not self._closed:
                self.view.end_input()
            if result is not None and result.truncated:
                buffer.note(f"[output truncated at {limits.max_output} bytes]")
            buffer.finish()
        self.last_result = result
        self.last_summary = summary
        self.runs_finished += 1
        if not self._closed:
            self.view.set_running(False)
            self._show_summary(summary)
            self.view.show_out_files(result.files if result is not None else {})

    def _show_progress(self, text: str) -> None:
        if self.running and not self._closed:
            self._show_summary(Summary("running", text))

    def _html(self, summary: Summary) -> str:
        theme = self.view.theme()
        colours = {"ok": theme.ok, "failed": theme.error, "limit": theme.note, "stopped": theme.note,
                   "error": theme.error}
        return summary_html(summary, colours)

    # -- files ------------------------------------------------------------------

    def new_file(self) -> None:
        self._path = None
        self.view.set_code("")
        self.view.set_document_title("")

    def open_file(self, path: str) -> None:
        """Open ``path`` into the editor; its extension picks the language when a pack claims it."""
        file = Path(path)
        try:
            if file.stat().st_size > MAX_OPEN_BYTES:
                self.view.show_message(f"{file.name} is larger than {MAX_OPEN_BYTES >> 20} MiB; not opened.")
                return
            text = file.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            self.view.show_message(f"Cannot open {path}: {exc.strerror or exc}")
            return
        self._path = file
        self.view.set_code(text)
        self.view.set_document_title(file.name)
        try:
            self.set_language(self.sandbox.pack_for_file(file.name).name)
        except UnknownLanguage:
            self.view.show_message(f"Opened {file.name}; no language claims its extension, pick one.")
        else:
            self.view.show_message(f"Opened {file}")

    def save_file(self) -> None:
        if self._path is None:
            self.view.show_message("Use Save As… to choose where to save.")
            return
        self.save_file_as(str(self._path))

    def save_file_as(self, path: str) -> None:
        file = Path(path)
        try:
            file.write_text(self.view.code(), encoding="utf-8")
        except OSError as exc:
            self.view.show_message(f"Cannot save {path}: {exc.strerror or exc}")
            return
        self._path = file
        self.view.mark_saved()
        self.view.set_document_title(file.name)
        self.view.show_message(f"Saved {file}")

    def load_example(self, path: Path) -> None:
        self.open_file(str(path))
        self._path = None  # an example is a template: Save asks where

    def add_inputs(self, paths: list[str], place: str = "in") -> None:
        """Read host files (by base name) for ``/in`` or, with ``place="work"``, ``/work``. Sent at the next run."""
        files = self._work if place == "work" else self._inputs
        for path in paths:
            file = Path(path)
            try:
                if file.stat().st_size > MAX_INPUT_BYTES:
                    self.view.show_message(f"{file.name} is larger than {MAX_INPUT_BYTES >> 20} MiB; not added.")
                    continue
                files[file.name] = file.read_bytes()
            except OSError as exc:
                self.view.show_message(f"Cannot read {path}: {exc.strerror or exc}")
        self._show_inputs()

    def remove_inputs(self, names: list[tuple[str, str]]) -> None:
        """Forget files added for ``/in`` or ``/work``: ``(place, name)`` pairs."""
        for place, name in names:
            (self._work if place == "work" else self._inputs).pop(name, None)
        self._show_inputs()

    def _show_inputs(self) -> None:
        self.view.set_input_files(
            {name: len(data) for name, data in self._inputs.items()},
            {name: len(data) for name, data in self._work.items()},
        )

    def _main_file(self) -> str | None:
        """The program's name under /work: the editor's file name, so tracebacks name it (None: the pack's)."""
        if self._path is None:
            return None
        try:
            clean_key(self._path.name)
        except InvalidSpec:
            return None
        return self._path.name

    def save_out(self, name: str, path: str) -> None:
        """Write the last run's ``/out/name`` to a host path the user chose."""
        files = self.last_result.files if self.last_result is not None else {}
        if name not in files:
            self.view.show_message(f"/out/{name} is no longer available")
            return
        try:
            Path(path).write_bytes(files[name])
        except OSError as exc:
            self.view.show_message(f"Cannot save {path}: {exc.strerror or exc}")
            return
        self.view.show_message(f"Saved /out/{name} to {path}")

    # -- look -------------------------------------------------------------------

    def set_theme(self, name: str) -> None:
        theme = theme_named(name)
        self.prefs.theme = theme.name
        self.view.apply_theme(theme)
        if self._shown is not None:
            self._show_summary(self._shown)

    def zoom(self, step: int) -> None:
        """Ctrl +/-: one point bigger or smaller; 0 back to the default size."""
        size = prefs_io.Preferences().font_size if step == 0 else self.view.font_size() + step
        size = max(MIN_FONT, min(MAX_FONT, size))
        self.view.set_font_size(size)
        self.prefs.font_size = size

    def _limits_changed(self) -> None:
        self.prefs.limits = {k: v for k, v in self.view.limit_texts().items() if v.strip()}

    def save_settings(self) -> None:
        self.prefs.snippet = self.view.code()
        self._limits_changed()
        prefs_io.save(self._store, self.prefs)

    # -- backends panel -------------------------------------------------------

    def refresh_backends(self) -> None:
        self.refresh_languages()
        self.view.select_language(self.prefs.language)
        self._tasks.spawn(self._refresh_backends())

    async def _refresh_backends(self) -> None:
        rows = [LanguageRow(name, self.sandbox.status(name)) for name in self.sandbox.languages()]
        backends = list(self.sandbox.backends.values())

        def diagnose() -> list[Diagnostic]:  # may probe disks or daemons: off the GUI thread
            found: list[Diagnostic] = []
            for backend in backends:
                if isinstance(backend, Diagnosable):
                    try:
                        found.extend(backend.diagnostics())
                    except Exception as exc:
                        log.exception("diagnostics of %s failed", backend.name)
                        found.append(Diagnostic(name=f"{backend.name} backend", ok=False, detail=repr(exc)))
                else:
                    found.append(Diagnostic(name=f"{backend.name} backend", ok=True, detail="registered"))
            return found

        diagnostics = await asyncio.to_thread(diagnose)
        if not self._closed:
            self.view.show_backends(rows, diagnostics)

    # -- shutdown --------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop the run and the REPL, close every session and the sandbox. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.repl.closed = True
        self.service.closed = True
        await self._tasks.cancel_all()
        await self.service.shutdown()
        await self.repl.shutdown()
        self.sandbox.close()
