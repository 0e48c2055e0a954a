"""Lay the transpiled JavaScript out on the TypeScript's lines, so a runtime error names the line the user wrote.

Why: OXC (``typescript``) prints new code. Types and interfaces vanish,
blank lines go, an object literal spreads over four lines and an enum
becomes a five-line function, so a ``TypeError`` at JavaScript line 26
was TypeScript line 20 (measured on a 23-line program). The transform
offers no source map, and the runtime's messages come from the guest, so
rather than rewrite the guest's output we move the code: each JavaScript
line is placed on the line of the TypeScript it came from, found by
aligning the two token streams (``difflib``; what the transform keeps,
identifiers, literals and most punctuation, is a common subsequence).

Only OXC's own line breaks are touched, and only in ways that keep the
program's meaning: blank lines are added before a line, or a line is
joined to the one above when both came from one TypeScript line. A line
that starts inside a template literal or a block comment is left where it
is (its line breaks are content), a line is never joined after one that
ends in a line comment, and a join happens only after a ``;``, a bracket
or a ``,`` (so no automatic semicolon is lost: OXC ends its statements
with one). Lines are then exact for code the user wrote; columns are the
JavaScript's. If the alignment finds nothing, the JavaScript is returned
as it was.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Final

#: Token streams longer than this are not aligned (difflib is quadratic in the worst case).
MAX_TOKENS: Final = 60_000
#: A line is never joined after one that ends with one of these words (their line break is grammar).
_NO_JOIN_AFTER: Final = frozenset({"return", "throw", "break", "continue", "yield", "async", "let", "await"})
#: Keywords after which a ``/`` starts a regular expression, not a division.
_REGEX_AFTER_WORDS: Final = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield",
     "await"}
)


@dataclass(slots=True)
class Scan:
    """What ``scan`` found: tokens, and per line whether it starts inside a multi-line token or ends in a comment."""

    tokens: list[tuple[str, int]] = field(default_factory=list)  # (text, 0-based line)
    glued: set[int] = field(default_factory=set)  # lines that start inside a template literal or block comment
    line_comment: set[int] = field(default_factory=set)  # lines that end in a // comment


def scan(text: str) -> Scan:
    """Tokens of JavaScript or TypeScript with their lines: good enough to align, not a parser.

    Strings, template literals (with their ``${}`` parts), comments and
    regular expressions are recognised so their insides are not taken for
    code and their line breaks are known.
    """
    out = Scan()
    i, n, line = 0, len(text), 0
    braces: list[bool] = []  # True: this { opened a template's ${
    last = ""  # the last significant token, to tell a regex from a division

    def newlines(start: int, end: int, glue: bool) -> int:
        count = text.count("\n", start, end)
        if glue:
            out.glued.update(range(line + 1, line + count + 1))
        return count

    def template(start: int) -> int:
        """Scan a template's text from ``start`` (just after ` or }) to its end or its next ``${``."""
        nonlocal line
        j = start
        while j < n:
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if ch == "`":
                j += 1
                break
            if ch == "$" and text.startswith("${", j):
                braces.append(True)
                j += 2
                break
            j += 1
        out.tokens.append((text[start:j], line))
        line += newlines(start, j, glue=True)
        return j

    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch in " \t\r\f\v":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            out.line_comment.add(line)
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += newlines(i, end, glue=True)
            i = end
        elif ch in "'\"":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            out.tokens.append((text[i:j], line))
            line += newlines(i, j, glue=True)
            last, i = "str", j
        elif ch == "`":
            i, last = template(i + 1), "str"
        elif ch == "/" and _starts_regex(last):
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "[":
                    in_class = True
                elif text[j] == "]":
                    in_class = False
                elif text[j] == "/" and not in_class:
                    break
                j += 1
            j += 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.tokens.append((text[i:j], line))
            last, i = "str", j
        elif ch.isdigit():
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_."):
                j += 1
            out.tokens.append((text[i:j], line))
            last, i = text[i:j], j
        elif ch.isalpha() or ch in "_$" or ord(ch) > 127:
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_$" or ord(text[j]) > 127):
                j += 1
            out.tokens.append((text[i:j], line))
            last, i = text[i:j], j
        elif ch == "{":
            braces.append(False)
            out.tokens.append((ch, line))
            last, i = ch, i + 1
        elif ch == "}":
            if braces and braces.pop():
                i, last = template(i + 1), "str"
            else:
                out.tokens.append((ch, line))
                last, i = ch, i + 1
        else:
            out.tokens.append((ch, line))
            last, i = ch, i + 1
    return out


def _starts_regex(last: str) -> bool:
    if not last:
        return True
    if last in _REGEX_AFTER_WORDS:
        return True
    # After a value (a name, a literal, a closing bracket) a slash divides.
    return not (last == "str" or last[0].isalnum() or last[0] in "_$" or last in (")", "]", "}"))


def targets(ts_source: str, js: str) -> list[int | None]:
    """For each JavaScript line, the TypeScript line (0-based) its first aligned token came from, or None."""
    ts, out = scan(ts_source), scan(js)
    js_lines = js.count("\n") + 1
    found: list[int | None] = [None] * js_lines
    if not ts.tokens or not out.tokens or len(ts.tokens) + len(out.tokens) > MAX_TOKENS:
        return found
    # Words and literals only: punctuation is everywhere (an interface's braces would anchor an enum's).
    js_words = [(t, line) for t, line in out.tokens if _is_word(t)]
    ts_words = [(t, line) for t, line in ts.tokens if _is_word(t)]
    matcher = difflib.SequenceMatcher(None, [t for t, _ in js_words], [t for t, _ in ts_words], autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            js_line = js_words[block.a + k][1]
            if found[js_line] is None:
                found[js_line] = ts_words[block.b + k][1]
    return found


def _is_word(token: str) -> bool:
    return len(token) > 1 or token.isalnum() or token in "_$"


def keep_lines(ts_source: str, js: str) -> str:
    """``js`` laid out so that each line sits on the line of the TypeScript it came from (see the module doc)."""
    lines = js.split("\n")
    wanted = targets(ts_source, js)
    if all(t is None for t in wanted):
        return js
    info = scan(js)
    placed: list[str] = []  # physical lines of the result
    previous: int | None = None
    for index, text in enumerate(lines):
        target = wanted[index] if wanted[index] is not None else previous
        previous = target
        if not placed:
            placed.extend([""] * (target or 0))
            placed.append(text)
            continue
        here = len(placed) - 1
        if index in info.glued or target is None or not text.strip():
            placed.append(text)
        elif target > here:
            placed.extend([""] * (target - here - 1))
            placed.append(text)
        elif _joinable(placed[-1], index - 1, info) and not text.lstrip().startswith(("++", "--")):
            placed[-1] = f"{placed[-1].rstrip()} {text.strip()}"
        else:
            placed.append(text)
    return "\n".join(placed)


def _joinable(above: str, above_index: int, info: Scan) -> bool:
    """May the next line be joined to ``above`` (the result's last line, ending with JS line ``above_index``)?

    Not after a line comment, nor after a keyword whose line break is
    grammar (``return``, ``throw``...: a restricted production).
    """
    tail = above.rstrip()
    if not tail or above_index in info.line_comment:
        return False
    last_word = tail.rsplit(None, 1)[-1]
    return last_word not in _NO_JOIN_AFTER
