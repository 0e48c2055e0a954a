"""When the REPL sends an input: Python like the interactive interpreter, JS and Lua by open brackets and blocks."""

import pytest

from playground.cli.repl_input import is_complete
from playground.packs import ALL_PACKS

SYNTAX = {pack.name: pack.editing.input_syntax for pack in ALL_PACKS}

CASES = [
    ("python", "x = 1", True),
    ("python", "def f():", False),
    ("python", "def f():\n    return 1", False),  # a compound statement ends at a blank line
    ("python", "if x:\n  y\n", True),
    ("python", "(1,", False),
    ("python", '"""abc', False),
    ("python", "1 +", True),  # an error: the guest reports it
    ("python", "x = 1\ny = 2", True),  # several statements (pasted): the guest runs them
    ("javascript", "function f() {", False),
    ("javascript", "function f() {\n}", True),
    ("javascript", 'const s = "{"', True),
    ("javascript", "// {", True),
    ("javascript", "/* {", False),
    ("javascript", "`abc", False),
    ("javascript", "f(1,", False),
    ("javascript", "x)", True),
    ("lua", "function f()", False),
    ("lua", "function f() return 1 end", True),
    ("lua", "for i = 1, 3 do", False),
    ("lua", "for i = 1, 3 do print(i) end", True),
    ("lua", "if x then", False),
    ("lua", "if x then y() elseif z then w() else v() end", True),
    ("lua", "repeat", False),
    ("lua", "repeat x() until y", True),
    ("lua", 's = "end"', True),
    ("lua", "-- function", True),
    ("lua", "s = [[ function", False),
    ("lua", "s = [==[ ]] function ]==]", True),
    ("lua", "--[[ if", False),
    ("lua", "t = {", False),
    ("lua", "local ending = 1", True),
    ("lua", "   ", True),
]


@pytest.mark.parametrize(("lang", "source", "complete"), CASES)
def test_is_complete(lang: str, source: str, complete: bool) -> None:
    assert is_complete(SYNTAX[lang], source) is complete
