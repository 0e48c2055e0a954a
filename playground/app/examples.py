"""The Examples menu's contents: files in ``resources/examples``, grouped by the language of their extension.

``resources/examples/suspicious`` holds snippets that reach beyond the
sandbox (delete the home directory, upload secrets, start a miner): they
go in their own submenu, for showing what the Attempts tab reports.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

from playground.app.main_window import Example
from playground.app.resources import resource_path
from playground.core import Sandbox, UnknownLanguage

log = logging.getLogger(__name__)


#: Subfolders of ``resources/examples`` that are submenus of their own, and their titles.
GROUPS: Final = {"suspicious": "Suspicious snippets"}


def find_examples(sandbox: Sandbox) -> list[Example]:
    """Every example whose extension belongs to a registered pack, sorted by group, language and title."""
    folder = resource_path("examples")
    examples = _examples_in(sandbox, folder, "")
    for name, group in GROUPS.items():
        examples += _examples_in(sandbox, folder / name, group)
    return sorted(examples, key=lambda e: (e.group, e.language, e.title))


def _examples_in(sandbox: Sandbox, folder: Path, group: str) -> list[Example]:
    try:
        paths = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    except OSError:
        log.warning("no examples folder at %s", folder)
        return []
    examples = []
    for path in paths:
        try:
            language = sandbox.pack_for_file(path.name).name
        except UnknownLanguage:
            continue
        title = path.stem.replace("_", " ")
        examples.append(Example(language=language, title=title, path=path, group=group))
    return examples
