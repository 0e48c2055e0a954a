"""The Attempts tab: what the last run tried beyond its sandbox, grouped and worded for a non-expert.

The records come from the core (``Result.attempts``); their targets are
already safe to show (``core.attempts`` escapes what is not printable).
Who saw each one is said plainly: the sandbox itself, or the program's own
runtime (its word, which a hostile program could bend).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Final

from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from playground.app.themes import LIGHT, Theme
from playground.core import Attempt, AttemptKind, Observer

#: The groups, in the order shown, and the kinds in each.
GROUPS: Final = (
    ("Files outside the sandbox", (AttemptKind.FILE_READ, AttemptKind.FILE_WRITE, AttemptKind.FILE_DELETE,
                                   AttemptKind.FILE_LIST)),
    ("Network", (AttemptKind.NETWORK_CONNECT, AttemptKind.DNS_LOOKUP)),
    ("Programs and signals", (AttemptKind.PROCESS_SPAWN, AttemptKind.SIGNAL, AttemptKind.NATIVE_CODE)),
    ("Secrets and settings", (AttemptKind.ENV_LOOKUP,)),
    ("Limits", (AttemptKind.LIMIT_REACHED,)),
    ("Its own reporting", (AttemptKind.REPORTING_TAMPERED,)),
)  # fmt: skip

#: How each kind reads as a sentence about the program.
_SENTENCES: Final = {
    AttemptKind.FILE_READ: "Tried to read {}",
    AttemptKind.FILE_WRITE: "Tried to write {}",
    AttemptKind.FILE_DELETE: "Tried to delete {}",
    AttemptKind.FILE_LIST: "Tried to list the folder {}",
    AttemptKind.NETWORK_CONNECT: "Tried to connect to {}",
    AttemptKind.DNS_LOOKUP: "Tried to look up {}",
    AttemptKind.PROCESS_SPAWN: "Tried to run the command `{}`",
    AttemptKind.SIGNAL: "Tried to send {}",
    AttemptKind.NATIVE_CODE: "Tried to load native code from {}",
    AttemptKind.ENV_LOOKUP: "Tried to read the environment variable {}",
    AttemptKind.LIMIT_REACHED: "Went up against {}",
    AttemptKind.REPORTING_TAMPERED: "Tampered with its reporting: {}",
}

WHO: Final = {
    Observer.HOST: "the sandbox",
    Observer.GUEST: "the program's runtime (its own word)",
}


def sentence(attempt: Attempt) -> str:
    """``Tried to read ~/.ssh/id_rsa`` (``(3 times)`` when repeated)."""
    text = _SENTENCES[attempt.kind].format(attempt.target)
    return text + (f" ({attempt.count} times)" if attempt.count > 1 else "")


class AttemptsPanel(QWidget):
    """A heading and the records grouped by what they reached for, as wrapped text a person reads."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = LIGHT
        self.heading = QLabel("Run a program to see what it tries beyond the sandbox.")
        self.heading.setObjectName("attemptsHeading")
        self.heading.setWordWrap(True)
        self.report = QTextBrowser()
        self.report.setObjectName("attemptsReport")
        self.report.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.report, 1)
        self._groups: list[tuple[str, list[tuple[str, str, str]]]] = []

    def groups(self) -> list[tuple[str, list[tuple[str, str, str]]]]:
        """What is shown: (group title, [(what was tried, outcome, noticed by)]) in order."""
        return [(title, list(rows)) for title, rows in self._groups]

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._render()

    def show_attempts(self, attempts: Sequence[Attempt], dropped: int = 0, *, known: bool = True) -> None:
        """Show ``attempts`` (the last run's), replacing what was there; ``known=False``: the run left no report."""
        self._groups = []
        for title, kinds in GROUPS:
            members = [a for a in attempts if a.kind in kinds]
            if members:
                self._groups.append((f"{title} ({len(members)})",
                                     [(sentence(a), a.verdict, WHO[a.observer]) for a in members]))
        if not known:
            self.heading.setText("The last run was stopped or failed before it could report what it tried.")
        elif not attempts:
            self.heading.setText("The last run tried nothing beyond the sandbox.")
        else:
            more = f" ({dropped} more were not kept)" if dropped else ""
            plural = "s" if len(attempts) != 1 else ""
            self.heading.setText(f"The last run tried {len(attempts)} thing{plural} beyond the sandbox{more}. "
                                 "Nothing here reached your machine: every one was refused.")
        self._render()

    def _render(self) -> None:
        parts = []
        for title, rows in self._groups:
            items = "".join(
                f"<li><b>{html.escape(what)}</b><br><span style='color:{self._theme.note}'>{html.escape(outcome)}"
                f"</span> &middot; noticed by {html.escape(who)}</li>"
                for what, outcome, who in rows
            )
            parts.append(f"<h4>{html.escape(title)}</h4><ul>{items}</ul>")
        self.report.setHtml("".join(parts))
