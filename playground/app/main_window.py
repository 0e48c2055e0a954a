"""``MainWindow``: the view. It lays widgets out, offers ``connect_*`` hooks and ``show``-style setters.

It holds no sandbox logic: the ``Controller`` decides what Run, Stop,
Open and the REPL do and calls back into the setters here. The actions and
menus are built by ``menus``, the dialogs by ``dialogs``; the Help menu
(shortcuts, About) is answered here, as it needs no controller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QWidget,
)

from playground.app import dialogs, zoom
from playground.app.attempts_panel import AttemptsPanel
from playground.app.backend_choice import BackendChoice
from playground.app.backends_panel import BackendsPanel, LanguageRow
from playground.app.dialogs import Answer
from playground.app.editor import CodeEditor
from playground.app.error_links import ErrorLinks
from playground.app.files_panel import FilesPanel
from playground.app.highlighter import Highlighter
from playground.app.input_line import InputLine, with_input_line
from playground.app.limits_panel import LimitsPanel
from playground.app.menus import build_menus
from playground.app.output_buffer import OutputBuffer
from playground.app.output_view import OutputView
from playground.app.packages_field import PackagesField
from playground.app.repl_pane import ReplPane
from playground.app.run_settings import RunSettings
from playground.app.service_pane import ServicePane
from playground.app.themes import LIGHT, Theme, apply_theme
from playground.core import DEFAULT_LIMITS, Attempt, Diagnostic, InputStream, Limits, ResolvedLimits
from playground.core.guest_text import escape
from playground.core.pack import Pack


@dataclass(frozen=True, slots=True)
class LanguageChoice:
    name: str
    available: bool
    reason: str
    #: Not available yet, but a backend is still learning whether it can run it.
    checking: bool = False


@dataclass(frozen=True, slots=True)
class Example:
    language: str
    title: str
    path: Path
    #: The Examples submenu it goes in; "" means its language's.
    group: str = ""


#: Example submenus listed after the languages' own.
GROUPS_LAST: Final = frozenset({"Suspicious snippets"})


class MainWindow(QMainWindow):
    """The playground window. GUI thread only; workers never call into it."""

    closing = Signal()

    def __init__(self, *, defaults: Limits = DEFAULT_LIMITS) -> None:
        super().__init__()
        self.setWindowTitle("Sandbox Playground")
        self.resize(1200, 780)
        self._theme = LIGHT
        self._updating_language = False
        self._zoom = zoom.DEFAULT
        self._confirm_close: Callable[[], bool] | None = None

        self.editor = CodeEditor()
        self.highlighter = Highlighter(self.editor.document(), style=LIGHT.pygments_style)
        self.output = OutputView()
        self.error_links = ErrorLinks(self.output, self.editor)
        self.input_line = InputLine()
        self.limits = LimitsPanel(defaults)
        self.packages_field = PackagesField()
        self.run_settings = RunSettings(self.packages_field, self.limits)
        self.files = FilesPanel()
        self.repl = ReplPane()
        self.service = ServicePane()
        self.backends = BackendsPanel()
        self.attempts = AttemptsPanel()

        self.language = QComboBox()
        self.language.setObjectName("language")
        self.language.setMinimumWidth(140)
        self.backend_choice = BackendChoice()
        self.language_status = QLabel("")
        self.language_status.setObjectName("languageStatus")
        self.language_status.setWordWrap(True)
        self.run_button = QPushButton("▶  Run")
        self.run_button.setObjectName("runButton")
        self.run_button.setToolTip("Run the code in the sandbox (Ctrl+Enter, F5)")
        self.stop_button = QPushButton("■  Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the running code (Esc)")
        self.stop_button.setEnabled(False)

        bar = QWidget()
        row = QHBoxLayout(bar)
        row.setContentsMargins(6, 4, 6, 4)
        row.addWidget(QLabel("Language:"))
        row.addWidget(self.language)
        row.addWidget(QLabel("on"))
        row.addWidget(self.backend_choice)
        row.addWidget(self.run_button)
        row.addWidget(self.stop_button)
        row.addWidget(self.language_status, 1)
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        toolbar.addWidget(bar)

        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.editor)
        left.addWidget(with_input_line(self.output, self.input_line))
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 2)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.run_settings, "Limits")
        self.tabs.addTab(self.files, "Files")
        self.tabs.addTab(self.attempts, "Attempts")
        self.tabs.addTab(self.repl, "REPL")
        self.tabs.addTab(self.backends, "Backends")
        self.tabs.addTab(self.service, "Service")
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(left)
        main.addWidget(self.tabs)
        main.setStretchFactor(0, 3)
        main.setStretchFactor(1, 2)
        main.setSizes([700, 480])
        self.setCentralWidget(main)

        actions = self.menu_actions = build_menus(self)
        self.new_action, self.open_action, self.save_action = actions.new, actions.open, actions.save
        self.save_as_action, self.add_inputs_action = actions.save_as, actions.add_inputs
        self.run_action, self.stop_action, self.serve_action = actions.run, actions.stop, actions.serve
        self.examples_menu = actions.examples_menu
        self.theme_group, self.theme_actions = actions.theme_group, actions.themes
        self.zoom_in_action, self.zoom_out_action = actions.zoom_in, actions.zoom_out
        self.zoom_reset_action = actions.zoom_reset
        self.run_button.clicked.connect(self.run_action.trigger)
        self.stop_button.clicked.connect(self.stop_action.trigger)
        for index, action in enumerate(actions.show_tab):
            action.triggered.connect(lambda _=False, i=index: self.tabs.setCurrentIndex(i))
        actions.shortcuts.triggered.connect(lambda: self.shortcuts_dialog().exec())
        actions.about.triggered.connect(lambda: dialogs.about_box(self).exec())
        self.editor.document().modificationChanged.connect(self.setWindowModified)
        self.set_document_title("")
        self.statusBar().showMessage("Ready")

    # -- connecting (the controller calls these once) ----------------------

    def connect_run(self, run: Callable[[], None], stop: Callable[[], None]) -> None:
        self.run_action.triggered.connect(run)
        self.stop_action.triggered.connect(stop)

    def connect_language(self, changed: Callable[[str], None]) -> None:
        def on_change(_: int) -> None:
            if not self._updating_language:
                changed(self.current_language())

        self.language.currentIndexChanged.connect(on_change)

    def connect_files(self, *, new: Callable[[], None], open_: Callable[[], None], dropped: Callable[[str], None],
                      save: Callable[[], object], save_as: Callable[[], object], edited: Callable[[], None],
                      confirm_close: Callable[[], bool]) -> None:
        """File commands; ``edited`` hears every change of the text; ``confirm_close`` may veto closing."""
        self.new_action.triggered.connect(new)
        self.open_action.triggered.connect(open_)
        self.save_action.triggered.connect(save)
        self.save_as_action.triggered.connect(save_as)
        self.editor.fileDropped.connect(dropped)

        def changed(_at: int, removed: int, added: int) -> None:
            if removed or added:  # not a formatting-only change
                edited()

        self.editor.document().contentsChange.connect(changed)
        self._confirm_close = confirm_close

    def connect_inputs(self, *, add: Callable[[list[str], str], None],
                       remove: Callable[[list[tuple[str, str]]], None], save_out: Callable[[str, str], None]) -> None:
        self.files.addRequested.connect(lambda: self._ask_inputs(add))
        self.add_inputs_action.triggered.connect(lambda: self._ask_inputs(add))
        self.files.filesDropped.connect(lambda paths: add(paths, self.files.destination()))
        self.files.removeRequested.connect(remove)
        self.files.saveRequested.connect(lambda name: self._ask_save_out(name, save_out))

    def connect_view(self, *, theme: Callable[[str], None], zoom: Callable[[int], None]) -> None:
        self.theme_group.triggered.connect(lambda action: theme(str(action.data())))
        self.zoom_in_action.triggered.connect(lambda: zoom(1))
        self.zoom_out_action.triggered.connect(lambda: zoom(-1))
        self.zoom_reset_action.triggered.connect(lambda: zoom(0))

    def connect_repl(self, *, submit: Callable[[str], None], reset: Callable[[], None],
                     interrupt: Callable[[], None]) -> None:
        self.repl.input.submitted.connect(submit)
        self.repl.resetRequested.connect(reset)
        self.repl.input.interruptRequested.connect(interrupt)

    def connect_service(self, *, start: Callable[[], None], stop: Callable[[], None],
                        page_loaded: Callable[[bool], None]) -> None:
        def serve() -> None:
            self.show_tab("service")
            start()

        self.serve_action.triggered.connect(serve)
        self.service.startRequested.connect(start)
        self.service.stopRequested.connect(stop)
        self.service.pageLoaded.connect(page_loaded)

    def connect_backends(self, refresh: Callable[[], None]) -> None:
        self.backends.refreshRequested.connect(refresh)

    def connect_limits(self, changed: Callable[[], None]) -> None:
        self.limits.changed.connect(changed)

    def connect_docker_pool(self, changed: Callable[[int], None]) -> None:
        """The user set the Docker tier's warm pool size (the Limits tab)."""
        self.run_settings.poolChanged.connect(changed)

    def show_docker_pool(self, size: int | None) -> None:
        self.run_settings.show_pool(size)

    def connect_backend_choice(self, chosen: Callable[[str], None]) -> None:
        """The user picked where the current language runs: ``auto``, ``wasm`` or ``docker``."""
        self.backend_choice.chosen.connect(chosen)

    def set_backend_choice(self, key: str, reasons: Mapping[str, str | None] | None = None) -> None:
        """Show ``key`` as chosen and, when known, why entries cannot run the language (``backend_choice``)."""
        if reasons is not None:
            self.backend_choice.set_reasons(reasons)
        self.backend_choice.set_choice(key)

    def connect_packages(self, add_and_run: Callable[[], None]) -> None:
        """The packages field's one-click offer was taken: the package is in the field; run again."""
        self.packages_field.add_and_run.connect(lambda _name: add_and_run())

    def set_examples(self, examples: Sequence[Example], load: Callable[[Path], None]) -> None:
        self.examples_menu.clear()
        if not examples:
            self.examples_menu.addAction("(no examples found)").setEnabled(False)
        by_menu: dict[str, list[Example]] = {}
        for example in examples:
            by_menu.setdefault(example.group or example.language, []).append(example)
        for menu, items in sorted(by_menu.items(), key=lambda item: (item[0] in GROUPS_LAST, item[0])):
            sub = self.examples_menu.addMenu(menu)
            for example in items:
                action = sub.addAction(example.title)
                action.triggered.connect(lambda _=False, p=example.path: load(p))

    # -- dialogs (return None when cancelled) -----------------------------

    def ask_unsaved(self, name: str, doing: str) -> Answer:
        return dialogs.ask_unsaved(self, name, doing)

    def ask_open_path(self) -> str | None:
        return dialogs.ask_open_path(self)

    def ask_save_path(self, suggested: str) -> str | None:
        return dialogs.ask_save_path(self, suggested)

    def shortcuts_dialog(self) -> dialogs.ShortcutsDialog:
        """Help > Keyboard Shortcuts, read from the menus now (plus the keys of the REPL input)."""
        dialog = dialogs.ShortcutsDialog(self.menuBar(), dialogs.REPL_KEYS, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        return dialog

    def _ask_inputs(self, add: Callable[[list[str], str], None]) -> None:
        place = self.files.destination()
        paths, _ = QFileDialog.getOpenFileNames(self, f"Add files to /{place}")
        if paths:
            add(paths, place)

    def _ask_save_out(self, name: str, save_out: Callable[[str, str], None]) -> None:
        shown = escape(name)  # a guest-chosen name may hold bytes that are not UTF-8; Qt would drop them
        path, _ = QFileDialog.getSaveFileName(self, f"Save /out/{shown}", Path(shown).name)
        if path:
            save_out(name, path)

    # -- setters the controller uses -----------------------------------------

    def set_languages(self, choices: Sequence[LanguageChoice]) -> None:
        self._updating_language = True
        try:
            self.language.clear()
            for choice in choices:
                state = "checking…" if choice.checking else "unavailable"
                label = choice.name if choice.available else f"{choice.name}  ({state})"
                self.language.addItem(label, choice.name)
                self.language.setItemData(self.language.count() - 1, choice.reason or "ready",
                                          Qt.ItemDataRole.ToolTipRole)
        finally:
            self._updating_language = False

    def current_language(self) -> str:
        data = self.language.currentData()
        return str(data) if data is not None else ""

    def select_language(self, name: str) -> None:
        """Select ``name`` without telling the controller (it asked for it)."""
        index = self.language.findData(name)
        if index >= 0:
            self._updating_language = True
            try:
                self.language.setCurrentIndex(index)
            finally:
                self._updating_language = False

    def set_language_status(self, text: str) -> None:
        self.language_status.setText(text)
        self.language_status.setToolTip(text)

    def set_editor_style(self, lexer: str, indent: int) -> None:
        self.highlighter.set_lexer(lexer)
        self.editor.set_indent(indent)

    def code(self) -> str:
        return self.editor.toPlainText()

    def set_code(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.set_code_modified(False)

    def code_modified(self) -> bool:
        return self.editor.document().isModified()

    def set_code_modified(self, modified: bool) -> None:
        self.editor.document().setModified(modified)
        # setPlainText clears the flag without emitting modificationChanged(False): keep the title in step here
        self.setWindowModified(modified)

    def mark_saved(self) -> None:
        self.set_code_modified(False)

    def set_document_title(self, name: str) -> None:
        """``name — Sandbox Playground``; Qt shows ``[*]`` as "*" while the buffer has unsaved changes."""
        self.setWindowTitle(f"[*]{name or 'Untitled'} — Sandbox Playground")

    def set_running(self, running: bool) -> None:
        self.run_action.setEnabled(not running)
        self.run_button.setEnabled(not running)
        self.stop_action.setEnabled(running)
        self.stop_button.setEnabled(running)

    def start_input(self, buffer: OutputBuffer) -> tuple[bytes | None, InputStream | None]:
        return self.input_line.start_run(buffer)

    def end_input(self) -> None:
        self.input_line.end_run()

    def begin_output(self, buffer: OutputBuffer, summary_html: str) -> None:
        self.error_links.clear()
        self.output.begin(buffer, summary_html)

    def reveal_first_error(self) -> None:
        self.output.reveal_first_error()

    def show_error_locations(self, pack: Pack, program: str) -> None:
        """Link the places in ``program`` the run's output names to the editor's lines (``error_links``)."""
        self.error_links.show(pack, program)

    def set_summary(self, summary_html: str) -> None:
        self.output.set_summary(summary_html)

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def show_notice(self, text: str) -> None:
        """A status message that stays until the next one (news the user must not miss)."""
        self.statusBar().showMessage(text)

    def limit_texts(self) -> dict[str, str]:
        return self.limits.texts()

    def packages(self) -> list[str]:
        """The packages field's requirements (raises ``InvalidSpec``: not a list of requirements)."""
        return self.packages_field.packages()

    def offer_package(self, name: str | None) -> None:
        """Offer "Add <name> and run again" in the Limits tab, showing it (None: withdraw the offer)."""
        self.packages_field.offer(name)
        if name:
            self.show_tab("limits")

    def set_limit_defaults(
        self, defaults: Limits | ResolvedLimits, others: Mapping[str, Limits | ResolvedLimits] | None = None
    ) -> None:
        self.limits.set_defaults(defaults, others)

    def set_limit_texts(self, texts: Mapping[str, str]) -> None:
        self.limits.set_texts(texts)

    def show_tab(self, name: str) -> None:
        widget = {"limits": self.run_settings, "files": self.files, "repl": self.repl, "backends": self.backends,
                  "service": self.service, "attempts": self.attempts}[name]
        self.tabs.setCurrentWidget(widget)

    def show_attempts(self, attempts: Sequence[Attempt], dropped: int = 0, *, known: bool = True) -> None:
        """What the last run tried beyond the sandbox: the Attempts tab, its badge (the count), shown when any."""
        self.attempts.show_attempts(attempts, dropped, known=known)
        index = self.tabs.indexOf(self.attempts)
        self.tabs.setTabText(index, f"Attempts ({len(attempts)})" if attempts else "Attempts")
        if attempts:
            self.show_tab("attempts")

    def set_input_files(self, sizes: Mapping[str, int], work: Mapping[str, int] | None = None) -> None:
        self.files.set_input_files(sizes, work)

    def show_out_files(self, files: Mapping[str, bytes]) -> None:
        """List the run's /out files; a picture among them (a chart) is shown in the Files tab at once."""
        self.files.show_out_files(files)
        if files and self.files.shown_kind() == "picture":
            self.show_tab("files")

    def show_backends(self, languages: Sequence[LanguageRow], diagnostics: Sequence[Diagnostic]) -> None:
        self.backends.show_status(languages, diagnostics)

    def theme(self) -> Theme:
        return self._theme

    def apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)
        self.theme_actions[theme.name].setChecked(True)
        self.editor.set_theme(theme)
        self.highlighter.set_style(theme.pygments_style)
        self.output.set_theme(theme)
        self.repl.set_theme(theme)
        self.backends.set_theme(theme)
        self.attempts.set_theme(theme)
        self.service.set_theme(theme)

    def set_font_size(self, size: int) -> None:
        """The code panes' font size at 100 % zoom."""
        for widget in (self.editor, self.output.text, self.repl.transcript, self.repl.input, self.service.logs.text):
            zoom.set_base_size(widget, size, self._zoom)

    def font_size(self) -> int:
        """The editor's font size as shown (zoom included)."""
        return self.editor.font_size()

    def set_zoom(self, percent: int) -> None:
        """Scale the whole window (every font, the served page) to ``percent``."""
        self._zoom = percent
        zoom.apply_zoom(self, percent)
        self.service.set_zoom(percent)

    def zoom_percent(self) -> int:
        return self._zoom

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._confirm_close is not None and not self._confirm_close():
            event.ignore()  # the user chose Cancel, or the save failed: nothing is lost
            return
        self.closing.emit()
        self.highlighter.close()
        self.service.release_browser()
        super().closeEvent(event)
