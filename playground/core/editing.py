"""How the front ends treat a language's source, as pack data: colours, indent, REPL input ends, server signs.

A pack carries one ``Editing`` value; the GUI's editor reads the lexer and
indent, the CLI REPL reads ``input_syntax`` to know when a typed input is
complete, and the window's "this is a server" check reads
``server_signs``. So a new language touches its pack and no table keyed
by its name in ``app/`` or ``cli/``. Plain data: no pygments, no Qt.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from playground.core.errors import InvalidPack


class InputSyntax(enum.Enum):
    """How a REPL front end tells a complete input from one that goes on (``cli.repl_input``)."""

    #: The interactive interpreter's rule (``codeop``): a compound statement goes on until a blank line.
    PYTHON = "python"
    #: Open brackets, and ``function``/``do``/``if``/``repeat`` blocks without their ``end``/``until``.
    LUA = "lua"
    #: Open brackets outside strings and comments (``//``, ``/* */``, backquoted strings): C, JavaScript...
    BRACES = "braces"


@dataclass(frozen=True, slots=True, kw_only=True)
class Editing:
    """How a language's source is shown and typed."""

    #: A pygments lexer name (the GUI falls back to plain text if pygments lacks it).
    lexer: str = "text"
    #: Spaces per indent level in the editor.
    indent: int = 4
    input_syntax: InputSyntax = InputSyntax.BRACES
    #: ``(regular expression, what it shows)`` pairs: a match in a program marks it as a web server, so
    #: the window offers Serve instead of a Run that would wait for its time limit (``app.server_hint``).
    #: Flags go inline (``(?s)``, ``(?m)``, ``(?i)``).
    server_signs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "server_signs", tuple((str(p), str(w)) for p, w in self.server_signs))

    def check(self, pack: str) -> None:
        """Raises ``InvalidPack``: an indent out of 1..8, an empty lexer, a server sign that does not compile."""
        if not 1 <= self.indent <= 8:
            raise InvalidPack(f"pack {pack!r}: editor indent {self.indent!r} must be 1..8")
        if not self.lexer:
            raise InvalidPack(f"pack {pack!r}: editor lexer is empty")
        for pattern, why in self.server_signs:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InvalidPack(f"pack {pack!r}: server sign {pattern!r}: {exc}") from None
            if not why:
                raise InvalidPack(f"pack {pack!r}: server sign {pattern!r} says nothing")
