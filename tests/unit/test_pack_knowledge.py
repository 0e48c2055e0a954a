"""What a language needs is in its pack: no table keyed by a language name elsewhere, and ``Editing`` is checked."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from playground.core import Editing, InvalidPack, Pack, WasmSpec
from playground.core.editing import InputSyntax
from playground.packs import ALL_PACKS

ROOT = Path(__file__).resolve().parents[2] / "playground"
#: Names that are also a backend's (``"wasm"``): comparing a backend name is not knowing a language.
BACKEND_NAMES = {"wasm", "docker"}


def _language_literals(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        candidates: list[ast.expr | None] = []
        if isinstance(node, ast.Dict):
            candidates = list(node.keys)
        elif isinstance(node, ast.Compare):
            candidates = [node.left, *node.comparators]
        elif isinstance(node, ast.Set):
            candidates = list(node.elts)
        found += [(node.lineno, c.value) for c in candidates
                  if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in names]
    return found


def test_no_module_outside_the_packs_keys_knowledge_by_a_language_name() -> None:
    names = {n for pack in ALL_PACKS for n in pack.names} - BACKEND_NAMES
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if "packs" in path.relative_to(ROOT).parts:
            continue
        offenders += [f"{path.relative_to(ROOT)}:{line}: {name!r}"
                      for line, name in _language_literals(ast.parse(path.read_text()), names)]
    assert not offenders, "language knowledge outside the packs (put it in Pack data):\n" + "\n".join(offenders)


def test_the_check_finds_a_table_keyed_by_language() -> None:
    tree = ast.parse('STYLES = {"python": 4}\nif lang == "lua":\n    pass\n')
    assert _language_literals(tree, {"python", "lua"}) == [(1, "python"), (2, "lua")]


@pytest.mark.parametrize("pack", ALL_PACKS, ids=lambda p: p.name)
def test_every_pack_names_a_lexer_pygments_has(pack: Pack) -> None:
    try:
        get_lexer_by_name(pack.editing.lexer)
    except ClassNotFound:
        pytest.fail(f"{pack.name}: pygments has no lexer {pack.editing.lexer!r}")


def test_the_interpreters_read_input_by_their_own_rules() -> None:
    syntax = {pack.name: pack.editing.input_syntax for pack in ALL_PACKS}
    assert syntax["python"] is InputSyntax.PYTHON and syntax["lua"] is InputSyntax.LUA
    assert syntax["javascript"] is InputSyntax.BRACES


@pytest.mark.parametrize(
    ("editing", "why"),
    [(Editing(indent=0), "indent"), (Editing(lexer=""), "lexer"),
     (Editing(server_signs=(("(unclosed", "x"),)), "server sign"),
     (Editing(server_signs=((r"x", ""),)), "says nothing")],
)  # fmt: skip
def test_a_bad_editing_is_refused_with_the_pack(editing: Editing, why: str) -> None:
    with pytest.raises(InvalidPack, match=why):
        Pack(name="toy", wasm=WasmSpec(module=None), editing=editing).validate()
