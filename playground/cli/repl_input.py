"""When is a REPL input complete? Decided on the host, before anything is sent to the guest.

Python follows the interactive interpreter (``codeop``): a compound
statement goes on until a blank line; an input that cannot compile is
complete (the guest reports the error). JavaScript and Lua go on while
brackets are open (outside strings and comments), and Lua also while a
``function``/``do``/``if``/``repeat`` block lacks its ``end``/``until``.
A blank line always submits what was typed, whatever the language. Which
rule applies is pack data (``Editing.input_syntax``), not a language name.
"""

from __future__ import annotations

import codeop
import re
import warnings
from typing import Final

from playground.core import InputSyntax

_PAIRS: Final = {")": "(", "]": "[", "}": "{"}
_LUA_OPEN: Final = frozenset({"function", "do", "if", "repeat"})
_LUA_CLOSE: Final = frozenset({"end", "until"})
_LUA_LONG: Final = re.compile(r"\[(=*)\[")
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_complete(syntax: InputSyntax, source: str) -> bool:
    """True when ``source`` (lines joined with ``\\n``) should be sent now; ``syntax`` is the pack's
    (``Editing.input_syntax``)."""
    if not source.strip():
        return True
    if syntax is InputSyntax.PYTHON:
        return _python_complete(source)
    if syntax is InputSyntax.LUA:
        return _open_depth(source, lua=True) <= 0
    return _open_depth(source, lua=False) <= 0


def _python_complete(source: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning for "is" with a literal
        try:
            return codeop.compile_command(source, "<input>", "single") is not None
        except (SyntaxError, ValueError, OverflowError):
            return True  # not valid as one statement: the guest runs it (several) or reports the error


def _open_depth(source: str, *, lua: bool) -> int:
    """Open brackets (and, for Lua, open blocks) left at the end of ``source``; strings are skipped."""
    stack: list[str] = []
    blocks = 0
    i = 0
    n = len(source)
    while i < n:
        c = source[i]
        if lua and source.startswith("--", i):
            long = _LUA_LONG.match(source, i + 2)
            if long:
                end = source.find("]" + long.group(1) + "]", long.end())
                if end < 0:
                    return 1
                i = end + len(long.group(1)) + 2
            else:
                i = _line_end(source, i)
            continue
        if not lua and source.startswith("//", i):
            i = _line_end(source, i)
            continue
        if not lua and source.startswith("/*", i):
            end = source.find("*/", i + 2)
            if end < 0:
                return 1
            i = end + 2
            continue
        if lua and c == "[":
            long = _LUA_LONG.match(source, i)
            if long:
                end = source.find("]" + long.group(1) + "]", long.end())
                if end < 0:
                    return 1
                i = end + len(long.group(1)) + 2
                continue
        if c in "'\"" or (c == "`" and not lua):
            i = _string_end(source, i, c)
            if i < 0:
                return 0 if c != "`" else 1  # an unterminated '...' is an error for the guest to report
            continue
        if c in "([{":
            stack.append(c)
        elif c in ")]}":
            if not stack or stack[-1] != _PAIRS[c]:
                return 0  # unbalanced the other way: let the guest report it
            stack.pop()
        elif lua and (c.isalpha() or c == "_"):
            word = _WORD.match(source, i)
            assert word is not None
            if word.group() in _LUA_OPEN:
                blocks += 1
            elif word.group() in _LUA_CLOSE:
                blocks -= 1
            i = word.end()
            continue
        i += 1
    return len(stack) + max(blocks, 0)


def _line_end(source: str, i: int) -> int:
    end = source.find("\n", i)
    return len(source) if end < 0 else end + 1


def _string_end(source: str, i: int, quote: str) -> int:
    """Index after the string starting at ``i``, or -1 if it does not end (at a newline for ' and ")."""
    j = i + 1
    while j < len(source):
        c = source[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == "\n" and quote != "`":
            return -1
        j += 1
    return -1
