"""How the editor treats a language: the pack's ``Editing`` (lexer, indent, server signs), plain text without one."""

from __future__ import annotations

from playground.core import Editing, Sandbox, UnknownLanguage

#: No language chosen, or one the sandbox does not know: plain text, 4 spaces, no server signs.
PLAIN = Editing()


def editing_for(sandbox: Sandbox, language: str) -> Editing:
    """``language``'s ``Pack.editing`` (by name or alias), or ``PLAIN``."""
    if not language:
        return PLAIN
    try:
        return sandbox.pack(language).editing
    except UnknownLanguage:
        return PLAIN
