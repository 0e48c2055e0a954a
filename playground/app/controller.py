"""``Controller``: what the playground does, talking to ``playground.core`` and to a narrow view.

It never builds widgets. Guest work runs inside the core (whose backends
use worker threads); the controller's coroutines run on the qasync loop
on the GUI thread, so they may call the view directly. Worker threads
only ever reach the GUI through an ``OutputBuffer`` or
``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QSettings

from playground.app import settings as prefs_io
from playground.app import zoom as zoom_levels
from playground.app.backend_choice import AUTO, CHOICES, Routes
from playground.app.backends_panel import LanguageRow
from playground.app.document_controller import DocumentController, DocumentView
from playground.app.examples import find_examples
from playground.app.languages import editing_for
from playground.app.limits_panel import typed_limits
from playground.app.main_window import Example, LanguageChoice, MainWindow
from playground.app.recovery import RecoveryStore
from playground.app.repl_controller import ReplController, ReplView
from playground.app.run_controller import RunController, RunView
from playground.app.run_summary import Summary
from playground.app.service_controller import ServiceController, ServiceView
from playground.app.tasks import BackgroundTasks
from playground.app.themes import Theme, theme_named
from playground.assembly import docker_pool_size, set_docker_pool
from playground.core import (
    Diagnosable,
    Diagnostic,
    LanguageStatus,
    Limits,
    ResolvedLimits,
    Result,
    Sandbox,
    Spec,
    UnknownLanguage,
    program_file,
)
from playground.core.handoff import in_daemon_thread

log = logging.getLogger(__name__)

#: Files larger than this are not added to /in (the FS quota would refuse them anyway).
MAX_INPUT_BYTES = 64 * 1024 * 1024
#: Backends whose guests are threads of this process: at quit they end with it, so waiting for them is bounded.
IN_PROCESS_BACKENDS = frozenset({"wasm"})
#: How long quitting waits for in-process work (e.g. a first-time compile, which cannot be interrupted).
QUIT_GRACE = 0.5


class View(RunView, DocumentView, Protocol):
    """What the controller needs from the window (``MainWindow`` provides it)."""

    @property
    def repl(self) -> ReplView: ...

    @property
    def service(self) -> ServiceView: ...

    def set_languages(self, choices: Sequence[LanguageChoice]) -> None: ...
    def current_language(self) -> str: ...
    def select_language(self, name: str) -> None: ...
    def set_language_status(self, text: str) -> None: ...
    def set_backend_choice(self, key: str, reasons: Mapping[str, str | None] | None = None) -> None: ...
    def set_editor_style(self, lexer: str, indent: int) -> None: ...
    def limit_texts(self) -> dict[str, str]: ...
    def set_limit_texts(self, texts: Mapping[str, str]) -> None: ...
    def set_limit_defaults(
        self, defaults: Limits | ResolvedLimits, others: Mapping[str, Limits | ResolvedLimits] | None = None
    ) -> None: ...
    def show_docker_pool(self, size: int | None) -> None: ...
    def packages(self) -> list[str]: ...
    def set_input_files(self, sizes: Mapping[str, int], work: Mapping[str, int] | None = None) -> None: ...
    def show_backends(self, languages: Sequence[LanguageRow], diagnostics: Sequence[Diagnostic]) -> None: ...
    def apply_theme(self, theme: Theme) -> None: ...
    def set_font_size(self, size: int) -> None: ...
    def set_zoom(self, percent: int) -> None: ...
    def zoom_percent(self) -> int: ...


class Controller:
    """Owns the sandbox, the REPL sessions and the preferences; drives the view.

    Call ``start()`` once the view is connected and the qasync loop runs;
    ``await shutdown()`` before the loop ends (idempotent). ``recovery``
    keeps the unsaved buffer for crash recovery (None: no crash copies).
    """

    def __init__(
        self, sandbox: Sandbox, view: View, store: QSettings, recovery: RecoveryStore | None = None,
        *, pool_override: int | None = None,
    ) -> None:
        """``pool_override``: ``playground gui --docker-pool N`` was given, so the saved size is not applied."""
        self.sandbox = sandbox
        self._pool_override = pool_override
        self.view = view
        self._store = store
        self.prefs = prefs_io.load(store)
        self._tasks = BackgroundTasks(owner=view)
        # The REPL, Serve and Run go where the user's backend choice for the language says (self.sandbox_for).
        self.repl = ReplController(sandbox, view.repl, self._current_limits, self._tasks, route=self.sandbox_for)
        self.service = ServiceController(sandbox, view.service, self._current_limits, lambda: self._inputs, self._tasks,
                                         route=self.sandbox_for)
        self.routes = Routes(sandbox)
        self.runs = RunController(sandbox, view, limits=self._current_limits, make_spec=self._spec,
                                  status_text=self.language_status_text, tasks=self._tasks,
                                  route=self.sandbox_for)
        self.document = DocumentController(view, set_language=self._pick_language, language_of=self._language_of,
                                           recovery=recovery)
        self._inputs: dict[str, bytes] = {}
        self._work: dict[str, bytes] = {}
        self._closed = False
        #: True when quitting left in-process work behind (it ends with the process; no guest runs after it).
        self.abandoned_work = False
        self._left_behind: asyncio.Future[None] | None = None

    # -- start-up -----------------------------------------------------------

    def bind(self, w: MainWindow) -> None:
        """Connect the window's actions to this controller."""
        w.connect_run(self.run, self.stop)
        w.connect_language(self.set_language)
        doc = self.document
        w.connect_files(new=doc.new, open_=doc.ask_open, dropped=doc.open, save=doc.save, save_as=doc.ask_save_as,
                        edited=doc.edited, confirm_close=doc.confirm_close)
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
        w.connect_docker_pool(self.set_docker_pool)
        w.connect_packages(self.run)
        w.connect_backend_choice(self.choose_backend)
        w.closing.connect(self.save_settings)
        w.set_examples(self.examples(), self.load_example)

    def start(self) -> None:
        """Fill the view from the sandbox, the saved preferences and any crash copy. Never runs anything."""
        self.view.apply_theme(theme_named(self.prefs.theme))
        self.view.set_font_size(self.prefs.font_size)
        self.view.set_zoom(zoom_levels.clamp(self.prefs.zoom))
        self.view.set_limit_texts(self.prefs.limits)
        if self.prefs.docker_pool >= 0 and self._pool_override is None:
            set_docker_pool(self.sandbox, self.prefs.docker_pool)
        self.view.show_docker_pool(docker_pool_size(self.sandbox))
        self.refresh_languages()
        names = self.sandbox.languages()
        language = self.prefs.language if self.prefs.language in names else (names[0] if names else "")
        self.set_language(language)
        self.document.start(self.prefs.snippet or (self.sandbox.pack(language).example if language else ""))
        self._tasks.spawn(self._refresh_backends())

    def examples(self) -> list[Example]:
        return find_examples(self.sandbox)

    # -- languages ------------------------------------------------------------

    def _availability_learned(self) -> None:
        """The backends learned what they can run: the language list and the current language's status say it."""
        language = self.view.current_language()
        self.refresh_languages()
        self.view.select_language(language)
        if language:
            self._show_route(language)  # the status line says where the user's choice runs it
            self.repl.show_language(language, self.language_status_text(language))

    def refresh_languages(self) -> None:
        choices = []
        for name in self.sandbox.languages():
            status = self.sandbox.status(name)
            choices.append(LanguageChoice(name, status.backend is not None, status.why_not, status.checking))
        self.view.set_languages(choices)

    def language_status_text(self, language: str, status: LanguageStatus | None = None) -> str:
        """"Runs on wasm" or why it cannot run here (``status``: the routed one, when known)."""
        if not language:
            return "No language packs are registered in this build, so nothing can run yet."
        status = status or self.sandbox.status(language)
        if status.backend is not None:
            return f"runs on {status.backend}"
        if status.checking:
            return f"checking where {language} can run…"
        return f"{language} cannot run here: {status.why_not}"

    def backend_choice(self, language: str) -> str:
        """Where the user chose ``language`` to run: ``auto``, ``wasm`` or ``docker``."""
        key = self.prefs.backends.get(language, AUTO)
        return key if key in CHOICES else AUTO

    def sandbox_for(self, language: str) -> Sandbox:
        """The sandbox routed by the user's backend choice for ``language``."""
        return self.routes.sandbox_for(self.backend_choice(language))

    def choose_backend(self, key: str) -> None:
        """The user picked where the current language runs; remembered per language."""
        language = self.view.current_language()
        if not language:
            return
        if key == AUTO or key not in CHOICES:
            self.prefs.backends.pop(language, None)
        else:
            self.prefs.backends[language] = key
        self._show_route(language)
        self.repl.show_language(language, self.language_status_text(language))  # its REPL follows the choice

    def _show_route(self, language: str) -> None:
        """The choice for ``language`` now; its entries' reasons and the status line once known (off-thread)."""
        key = self.backend_choice(language)
        self.view.set_backend_choice(key)
        if key != AUTO:
            self.view.set_language_status(f"checking {CHOICES[key][0]} for {language}…")
        self._tasks.spawn(self._refresh_route(language))

    async def _refresh_route(self, language: str) -> None:
        routes, key = self.routes, self.backend_choice(language)

        def probe() -> tuple[dict[str, str | None], LanguageStatus]:  # may ask the Docker daemon
            routes.sandbox_for(key).refresh_availability(unknown_only=True)
            return routes.reasons(language), routes.sandbox_for(key).status(language)

        reasons, status = await in_daemon_thread(probe)
        if self._closed or language != self.view.current_language() or key != self.backend_choice(language):
            return  # the user moved on; a newer refresh tells
        self.view.set_backend_choice(key, reasons)
        self.view.set_language_status(self.language_status_text(language, status))

    def set_language(self, language: str) -> None:
        """The user picked ``language`` (or a file/example implied it)."""
        if language and language != self.view.current_language():
            self.view.select_language(language)
        style = editing_for(self.sandbox, language)
        self.view.set_editor_style(style.lexer, style.indent)
        self.view.set_language_status(self.language_status_text(language))
        if language:
            self._show_route(language)
            self.prefs.language = language
            self.view.set_limit_defaults(self.sandbox.default_limits_for(language), self._variant_defaults(language))
        self.repl.show_language(language, self.language_status_text(language))

    # -- running (RunController) ----------------------------------------------

    def run(self) -> None:
        """Run the editor's code with the panel's limits and the /in and /work files."""
        self.runs.run()

    def stop(self) -> None:
        self.runs.stop()

    @property
    def running(self) -> bool:
        return self.runs.running

    @property
    def runs_finished(self) -> int:
        return self.runs.runs_finished

    @property
    def last_result(self) -> Result | None:
        return self.runs.last_result

    @property
    def last_summary(self) -> Summary | None:
        return self.runs.last_summary

    def _variant_defaults(self, language: str) -> dict[str, ResolvedLimits]:
        """The default limits of ``language``'s other runtimes (the scientific Python's), by variant name."""
        return self.sandbox.variant_defaults(language)

    def _current_limits(self) -> Limits:
        """The values typed into the limits panel, checked over the current language's defaults.

        Only those: the core merges them over the defaults of the runtime a
        program runs on (a compiler's memory, the scientific Python's).

        Raises:
            InvalidLimits: a value does not parse or is out of range.
        """
        language = self.view.current_language()
        defaults = self.sandbox.default_limits_for(language) if language else self.sandbox.default_limits
        return typed_limits(self.view.limit_texts(), defaults)

    def _spec(self, language: str, code: str, limits: Limits) -> Spec:
        """The run's Spec: the code, the /in and /work files, the editor's file name, the packages field's
        (a language that takes no packages ignores the field).

        Raises:
            InvalidSpec: the files, the name or the packages are not acceptable.
        """
        return Spec(lang=language, code=code, files=dict(self._inputs), work_files=dict(self._work),
                    main_file=self._main_file(), limits=limits,
                    packages=self.view.packages() if self.sandbox.pack(language).caps.packages else ())

    # -- the editor's file (DocumentController) ----------------------------------------

    def _pick_language(self, language: str) -> None:
        """A file, an example or a crash copy named ``language``: select it if this build has it."""
        if language in self.sandbox.languages():
            self.set_language(language)

    def _language_of(self, filename: str) -> str | None:
        try:
            return self.sandbox.pack_for_file(filename).name
        except UnknownLanguage:
            return None

    def new_file(self) -> None:
        self.document.new()

    def open_file(self, path: str) -> None:
        """Open ``path`` (asking first about unsaved changes); its extension picks the language."""
        self.document.open(path)

    def save_file_as(self, path: str) -> None:
        self.document.save_as(path)

    def load_example(self, path: Path) -> None:
        self.document.open_example(path)

    # -- /in and /work ---------------------------------------------------------------

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
        path = self.document.path
        language = self.view.current_language()
        if path is None or not language:
            return None
        return program_file(self.sandbox.pack(language), path.name)  # None: not a name the language takes

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
        self.runs.refresh_summary()

    def zoom(self, step: int) -> None:
        """Ctrl +/-: the whole window one level (about 10 %) bigger or smaller; 0 back to 100 %."""
        percent = zoom_levels.step(self.view.zoom_percent(), step)
        self.view.set_zoom(percent)
        self.view.show_message(f"Zoom {percent} %")
        self.prefs.zoom = percent

    def set_docker_pool(self, size: int) -> None:
        """The Limits tab's warm container control: resize the Docker tier's pool now and remember it."""
        if set_docker_pool(self.sandbox, size):
            self.prefs.docker_pool = size
            self.view.show_message(f"Warm Docker containers per language: {size}" + (" (off)" if size == 0 else ""))

    def _limits_changed(self) -> None:
        self.prefs.limits = {k: v for k, v in self.view.limit_texts().items() if v.strip()}

    def save_settings(self) -> None:
        self.prefs.snippet = self.document.text_to_remember()
        self._limits_changed()
        prefs_io.save(self._store, self.prefs)

    # -- backends panel -------------------------------------------------------

    def refresh_backends(self) -> None:
        self.refresh_languages()
        self.view.select_language(self.prefs.language)
        self._tasks.spawn(self._refresh_backends())

    async def _refresh_backends(self) -> None:
        # What the Docker tier can run takes a daemon to ask: learned off the GUI thread, then shown everywhere.
        await in_daemon_thread(self.sandbox.refresh_availability, "gui-availability")
        if self._closed:
            return
        self._availability_learned()
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

        diagnostics = await in_daemon_thread(diagnose)  # a hung daemon's probe must not hold up quitting
        if not self._closed:
            self.view.show_backends(rows, diagnostics)

    # -- shutdown --------------------------------------------------------------

    def _guests_outside_this_process(self) -> bool:
        """True when a run, session or service may live outside this process (a container): it must be stopped."""
        used = {self.runs.backend if self.runs.running else None, *self.repl.backends_used(),
                self.service.backend_in_use()}
        return any(name is not None and name not in IN_PROCESS_BACKENDS for name in used)

    async def shutdown(self) -> None:
        """Stop the run, the service and the REPL, close every session and the sandbox. Idempotent.

        Guests in containers are always waited for. In-process (Wasm) work
        gets ``QUIT_GRACE``: a cancelled run stops within an epoch tick, but a
        first-time compile cannot be interrupted, and waiting for it made
        quitting take seconds. Its guest never starts (the run was
        cancelled); the worker is a daemon thread that ends with the process.
        ``abandoned_work`` says whether that happened.
        """
        if self._closed:
            return
        self._closed = True
        self.repl.closed = True
        self.service.closed = True
        self.runs.closed = True
        self.document.close()
        outside = self._guests_outside_this_process()
        stopping = asyncio.ensure_future(self._stop_everything())
        done, _ = await asyncio.wait({stopping}, timeout=None if outside else QUIT_GRACE)
        if not done:
            self.abandoned_work = True
            log.info("quitting without waiting for in-process work that is still ending (e.g. a first-time compile)")
            self._left_behind = stopping  # keep a reference: it finishes (or dies with the process) on its own
        self.sandbox.close()

    async def _stop_everything(self) -> None:
        await self._tasks.cancel_all()
        await self.service.shutdown()
        await self.repl.shutdown()
