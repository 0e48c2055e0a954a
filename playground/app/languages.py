"""How the editor treats each language: which pygments lexer colours it, how wide an indent is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EditorStyle:
    lexer: str
    indent: int


_STYLES: dict[str, EditorStyle] = {
    "python": EditorStyle("python3", 4),
    "javascript": EditorStyle("javascript", 2),
    "node": EditorStyle("javascript", 2),
    "typescript": EditorStyle("typescript", 2),
    "lua": EditorStyle("lua", 2),
    "wasm": EditorStyle("wast", 2),
    "java": EditorStyle("java", 4),
    "go": EditorStyle("go", 4),
    "rust": EditorStyle("rust", 4),
    "bash": EditorStyle("bash", 2),
}

_DEFAULT = EditorStyle("text", 4)


def editor_style(language: str) -> EditorStyle:
    """The style for a pack name; unknown languages get plain text and 4 spaces."""
    return _STYLES.get(language, _DEFAULT)
