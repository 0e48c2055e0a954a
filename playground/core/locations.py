"""Places in the user's program named by a run's output: ``File "x.py", line 3``, ``x.go:5:2``, ``--> x.rs:2:5``.

Why: a traceback or a compiler error is only useful if it leads to the
line. The packs say, as plain data (``Pack.error_locations``), how their
language names a place: regular expressions with the named groups
``file`` and ``line`` and an optional ``col``. This module finds every
such span in a text and keeps those that name the program's own file,
however the tool spelled its path (``/work/main.py``, ``./main.go``,
``main.rs``, ``Main.java``). The CLI, the MCP server and the GUI share it,
so a location means the same everywhere; the GUI turns the spans into
links and marks their lines in the editor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Final

from playground.core.errors import InvalidSpec
from playground.core.fsnames import clean_key
from playground.core.pack import Pack

#: The working directory every tier runs the program in (where ``Spec.main_file`` lives).
WORKDIR: Final = "/work/"
#: Only this much of a long output is searched (a traceback's places come early; a flood has none).
MAX_SCAN: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a file, found at ``text[start:end]`` (the span a link covers).

    ``line`` is 1-based; ``column`` is 1-based or None when the tool gave none.
    """

    start: int
    end: int
    file: str
    line: int
    column: int | None = None


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.MULTILINE) for p in patterns)


def program_name(path: str) -> str:
    """The name a tool's path has relative to the program's directory: ``/work/a.py`` and ``./a.py`` -> ``a.py``."""
    if path.startswith(WORKDIR):
        return path[len(WORKDIR) :]
    while path.startswith("./"):
        path = path[2:]
    return path


def find_locations(text: str, patterns: Iterable[str], program: str | None = None) -> list[Location]:
    """Every place ``patterns`` find in ``text``, in order of position, one per span.

    With ``program`` (the program's file name under ``/work``, e.g.
    ``Spec.main_file`` or the pack's default), only places in that file
    are kept, and a location's ``file`` is that name. Overlapping matches
    of several patterns keep the first (leftmost, then longest).
    """
    found: list[Location] = []
    scanned = text[:MAX_SCAN]
    for pattern in _compiled(tuple(patterns)):
        for match in pattern.finditer(scanned):
            location = _location(match, program)
            if location is not None:
                found.append(location)
    found.sort(key=lambda loc: (loc.start, -loc.end))
    kept: list[Location] = []
    for location in found:
        if kept and location.start < kept[-1].end:
            continue
        kept.append(location)
    return kept


def _location(match: re.Match[str], program: str | None) -> Location | None:
    file = match.group("file")
    try:
        line = int(match.group("line"))
        col_text = match.groupdict().get("col")
        column = int(col_text) if col_text else None
    except ValueError:
        return None
    if line < 1:
        return None
    if program is not None:
        if program_name(file) != program and not (file == program.rsplit("/", 1)[-1] and "/" not in file):
            return None
        file = program
    return Location(start=match.start(), end=match.end(), file=file, line=line, column=column)


def program_file(pack: Pack, name: str) -> str | None:
    """The user's file name (its last part) to store the program under (``Spec.main_file``), or None.

    None when the name is not a plain file name, or when the language would
    not take the program under it: a compiler (``go build``, ``rustc``,
    ``javac``) or a transform (TypeScript) wants one of the pack's
    extensions, so such a file keeps the pack's default name. Interpreters
    take any name (``playground run --lang python script``).
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    try:
        clean_key(base)
    except InvalidSpec:
        return None
    suffix = PurePosixPath(base).suffix.lower()
    picky = pack.caps.compiles or (pack.wasm is not None and bool(pack.wasm.transform))
    if picky and suffix not in pack.extensions:
        return None
    return base


def default_program_file(pack: Pack, backend: str) -> str:
    """The name the program has under ``/work`` when the caller gave none (the pack's, per backend)."""
    if backend == "docker" and pack.docker is not None:
        return pack.docker.main_file
    if pack.wasm is not None:
        return pack.wasm.main_file
    return pack.docker.main_file if pack.docker is not None else "main"


def first_lines(locations: Sequence[Location]) -> list[int]:
    """The distinct lines of ``locations`` in order of first appearance (what the editor marks)."""
    seen: dict[int, None] = {}
    for location in locations:
        seen.setdefault(location.line, None)
    return list(seen)
