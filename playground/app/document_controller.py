"""``DocumentController``: the editor's buffer. Which file it is, whether it has unsaved edits, and its crash copy.

Work is never lost silently: replacing a modified buffer (New, Open, an
example, a dropped file, quitting) first asks Save / Discard / Cancel, and
a modified buffer is kept in the ``RecoveryStore`` about a second after an
edit, so a crash costs at most that second. A buffer found there at start
is shown (never run) and the status bar says where it came from.

GUI thread only. It never builds widgets: the view asks the questions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QTimer

from playground.app.dialogs import Answer
from playground.app.recovery import RecoveryStore, Unsaved
from playground.app.tasks import view_alive

log = logging.getLogger(__name__)

#: Files larger than this are not opened into the editor.
MAX_OPEN_BYTES = 4 * 1024 * 1024
#: A modified buffer reaches the recovery folder at most this long after an edit.
AUTOSAVE_MS = 1000


class DocumentView(Protocol):
    """What the document needs from the window (``MainWindow`` provides it)."""

    def code(self) -> str: ...
    def set_code(self, text: str) -> None: ...
    def code_modified(self) -> bool: ...
    def set_code_modified(self, modified: bool) -> None: ...
    def set_document_title(self, name: str) -> None: ...
    def current_language(self) -> str: ...
    def show_message(self, text: str) -> None: ...
    def show_notice(self, text: str) -> None: ...
    def ask_unsaved(self, name: str, doing: str) -> Answer: ...
    def ask_open_path(self) -> str | None: ...
    def ask_save_path(self, suggested: str) -> str | None: ...


class DocumentController:
    """Owns the buffer's file path, its last clean text and its recovery slot."""

    def __init__(self, view: DocumentView, *, set_language: Callable[[str], None],
                 language_of: Callable[[str], str | None], recovery: RecoveryStore | None) -> None:
        self.view = view
        self.path: Path | None = None
        self._set_language = set_language
        self._language_of = language_of
        self._recovery = recovery
        self._clean_text = ""
        self._discarded = False
        self._timer = QTimer()
        self._timer.setSingleShot(True)
        self._timer.setInterval(AUTOSAVE_MS)
        self._timer.timeout.connect(self._autosave)

    @property
    def name(self) -> str:
        return self.path.name if self.path is not None else "Untitled"

    # -- start-up ---------------------------------------------------------------

    def start(self, text: str) -> None:
        """Show ``text`` (the restored snippet) as a clean buffer, then restore a crashed window's work over it."""
        self._show(text, None)
        unsaved = self._recovery.open() if self._recovery is not None else None
        if unsaved is None:
            return
        self.path = Path(unsaved.path) if unsaved.path else None
        if unsaved.language:
            self._set_language(unsaved.language)
        self.view.set_code(unsaved.text)
        self.view.set_code_modified(True)
        self.view.set_document_title(self.name)
        when = datetime.fromtimestamp(unsaved.saved_at).strftime("%H:%M:%S on %d %b")
        self.view.show_notice(f"Restored unsaved work on {self.name} from {when}: the playground did not "
                              "close cleanly. It was not run; save it or discard it.")
        self._autosave()  # into this window's slot right away: a second crash keeps it too

    # -- edits and the crash copy -------------------------------------------------

    def edited(self) -> None:
        """The user changed the text: keep a crash copy soon (at most one write per ``AUTOSAVE_MS``)."""
        if not self._timer.isActive():
            self._timer.start()

    def _autosave(self) -> None:
        if self._recovery is None:
            return
        if not view_alive(self.view):
            return  # the window was deleted before the timer fired (its crash copy was settled on close)
        if self.view.code_modified():
            self._recovery.keep(Unsaved(text=self.view.code(), language=self.view.current_language(),
                                        path=str(self.path or ""), saved_at=time.time()))
        else:
            self._recovery.discard()

    def _mark_clean(self, text: str) -> None:
        self._clean_text = text
        self._timer.stop()
        self.view.set_code_modified(False)
        if self._recovery is not None:
            self._recovery.discard()

    # -- replacing the buffer ----------------------------------------------------------

    def may_replace(self, doing: str) -> bool:
        """Ask Save / Discard / Cancel when the buffer is modified; True when it may be replaced now."""
        if not self.view.code_modified():
            return True
        answer = self.view.ask_unsaved(self.name, doing)
        if answer is Answer.SAVE:
            return self.save()
        if answer is Answer.DISCARD:
            self._discarded = True
            return True
        return False

    def new(self) -> None:
        if self.may_replace("starting a new file"):
            self._show("", None)

    def ask_open(self) -> None:
        """File > Open: first the prompt (if modified), then the file dialog."""
        if not self.may_replace("opening another file"):
            return
        path = self.view.ask_open_path()
        if path:
            self._load(Path(path), keep_path=True)

    def open(self, path: str) -> None:
        """Open ``path`` (a dropped file); its extension picks the language when a pack claims it."""
        if self.may_replace(f"opening {Path(path).name}"):
            self._load(Path(path), keep_path=True)

    def open_example(self, path: Path) -> None:
        """An example is a template: it opens untitled, so Save asks where."""
        if self.may_replace(f"opening the example {path.stem}"):
            self._load(path, keep_path=False)

    def _show(self, text: str, path: Path | None) -> None:
        self.path = path
        self._discarded = False
        self.view.set_code(text)
        self._mark_clean(text)
        self.view.set_document_title(self.name)

    def _load(self, file: Path, *, keep_path: bool) -> None:
        try:
            if file.stat().st_size > MAX_OPEN_BYTES:
                self.view.show_message(f"{file.name} is larger than {MAX_OPEN_BYTES >> 20} MiB; not opened.")
                return
            text = file.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            self.view.show_message(f"Cannot open {file}: {exc.strerror or exc}")
            return
        self._show(text, file if keep_path else None)
        language = self._language_of(file.name)
        if language is None:
            self.view.show_message(f"Opened {file.name}; no language claims its extension, pick one.")
            return
        self._set_language(language)
        self.view.show_message(f"Opened {file}")

    # -- saving -----------------------------------------------------------------------

    def save(self) -> bool:
        """Save to the buffer's file, or ask where (Save As) when it has none. False when not saved."""
        if self.path is None:
            return self.ask_save_as()
        return self.save_as(str(self.path))

    def ask_save_as(self) -> bool:
        path = self.view.ask_save_path(self.name if self.path is not None else "")
        return self.save_as(path) if path else False

    def save_as(self, path: str) -> bool:
        file = Path(path)
        text = self.view.code()
        try:
            file.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.view.show_message(f"Cannot save {path}: {exc.strerror or exc}")
            return False
        self.path = file
        self._mark_clean(text)
        self.view.set_document_title(file.name)
        self.view.show_message(f"Saved {file}")
        return True

    # -- quitting -----------------------------------------------------------------------

    def confirm_close(self) -> bool:
        """The window is closing: ask about unsaved changes. False keeps the window open."""
        return self.may_replace("quitting")

    def text_to_remember(self) -> str:
        """The snippet the next start shows: the buffer, or its last clean text if its changes were discarded."""
        return self._clean_text if self._discarded else self.view.code()

    def close(self) -> None:
        """A clean quit: the crash copy goes (the buffer was saved, discarded or kept as the snippet). Idempotent."""
        self._timer.stop()
        if self._recovery is not None:
            self._recovery.close()
