"""The Examples menu's contents: files in ``resources/examples``, grouped by the language of their extension."""

from __future__ import annotations

import logging

from playground.app.main_window import Example
from playground.app.resources import resource_path
from playground.core import Sandbox, UnknownLanguage

log = logging.getLogger(__name__)


def find_examples(sandbox: Sandbox) -> list[Example]:
    """Every example whose extension belongs to a registered pack, sorted by language and title."""
    folder = resource_path("examples")
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
        examples.append(Example(language=language, title=title, path=path))
    return sorted(examples, key=lambda e: (e.language, e.title))
