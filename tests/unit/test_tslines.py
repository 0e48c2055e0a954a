"""The transpiled JavaScript sits on the TypeScript's lines (``backends.wasm.tslines``), on real OXC output.

The JavaScript strings are what the OXC transform (``_transform.wasm``)
printed for the TypeScript next to them, before ``keep_lines``.
"""

from __future__ import annotations

from backends.wasm.tslines import keep_lines, scan

TS_CLASSES = """interface Point {
  x: number;
  y: number;
}

type Name = string;

enum Colour { Red, Green }

function norm(p: Point): number {
  return Math.sqrt(p.x * p.x + p.y * p.y);
}

class Box<T> {
  constructor(private readonly value: T, public label: Name) {}
  get(): T { return this.value; }
}

const b = new Box<number>(3, "three");
console.log(norm({ x: 3, y: 4 }), b.get(), Colour.Green);
const n: any = null;
console.log(n.missing);
"""
JS_CLASSES = (
    'var Colour = /* @__PURE__ */ function(Colour) {\n\tColour[Colour["Red"] = 0] = "Red";\n\tColour[Colour["Green"] '
    '= 1] = "Green";\n\treturn Colour;\n}(Colour || {});\nfunction norm(p) {\n\treturn Math.sqrt(p.x * p.x + p.y * '
    "p.y);\n}\nclass Box {\n\tvalue;\n\tlabel;\n\tconstructor(value, label) {\n\t\tthis.value = value;\n\t\tthis.label"
    ' = label;\n\t}\n\tget() {\n\t\treturn this.value;\n\t}\n}\nconst b = new Box(3, "three");\nconsole.log(norm({\n\t'
    "x: 3,\n\ty: 4\n}), b.get(), Colour.Green);\nconst n = null;\nconsole.log(n.missing);\n"
)

TS_TEMPLATE = """// A comment the transform may keep
type Id = number;

const re: RegExp = /a\\/b[/]c/g; // tricky regex

const msg: string = `line one
line two ${1 + 2}
line three`;

enum Mode {
  Fast,
  Slow,
}

function pick(mode: Mode, items: Array<Id>): Id {
  let i: number = 0;
  i++;
  return items[mode] ?? i;
}

console.log(msg, re.source, pick(Mode.Slow, [1, 2, 3]));
const bad: any = undefined;
console.log(bad.field);
"""
JS_TEMPLATE = (
    "const re = /a\\/b[/]c/g;\nconst msg = `line one\nline two ${1 + 2}\nline three`;\nvar Mode = /* @__PURE__ */ "
    'function(Mode) {\n\tMode[Mode["Fast"] = 0] = "Fast";\n\tMode[Mode["Slow"] = 1] = "Slow";\n\treturn Mode;\n}'
    "(Mode || {});\nfunction pick(mode, items) {\n\tlet i = 0;\n\ti++;\n\treturn items[mode] ?? i;\n}\nconsole.log("
    "msg, re.source, pick(Mode.Slow, [\n\t1,\n\t2,\n\t3\n]));\nconst bad = undefined;\nconsole.log(bad.field);\n"
)


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def test_statements_land_on_their_typescript_lines() -> None:
    out = keep_lines(TS_CLASSES, JS_CLASSES)
    for needle in ("function norm", "return Math.sqrt", "class Box", 'const b = new Box(3, "three")',
                   "console.log(norm(", "const n = null", "console.log(n.missing)"):
        assert line_of(out, needle) == line_of(TS_CLASSES, needle.replace("Box(3", "Box<number>(3")
                                               .replace("const n = null", "const n: any = null")
                                               .replace("function norm", "function norm(p: Point)")), needle
    assert line_of(out, "var Colour") == line_of(TS_CLASSES, "enum Colour")
    assert "constructor(value, label)" in out.split("\n")[line_of(TS_CLASSES, "constructor(") - 1]


def test_only_line_breaks_change() -> None:
    for ts, js in ((TS_CLASSES, JS_CLASSES), (TS_TEMPLATE, JS_TEMPLATE)):
        assert "".join(keep_lines(ts, js).split()) == "".join(js.split())


def test_a_template_literal_keeps_its_line_breaks_and_the_code_after_it_its_line() -> None:
    out = keep_lines(TS_TEMPLATE, JS_TEMPLATE)
    assert "const msg = `line one\nline two ${1 + 2}\nline three`;" in out
    assert line_of(out, "const msg") == line_of(TS_TEMPLATE, "const msg")
    assert line_of(out, "console.log(bad.field)") == line_of(TS_TEMPLATE, "console.log(bad.field)") == 23
    assert line_of(out, "let i = 0") == line_of(TS_TEMPLATE, "let i: number = 0")
    assert line_of(out, "i++;") == line_of(TS_TEMPLATE, "i++;")


def test_never_joined_after_a_line_comment_or_return() -> None:
    ts = "const a: number = 1; const b: number = 2;\n"
    js = "const a = 1; // note\nconst b = 2;\n"
    out = keep_lines(ts, js)
    assert "// note\n" in out  # joining would comment out `const b`
    ts2 = "function f(): number { return (\n 1); }\n"
    js2 = "function f() {\n\treturn\n}\n"
    assert "return\n" in keep_lines(ts2, js2)  # a line break after return is grammar


def test_scan_tells_regex_from_division_and_finds_multiline_tokens() -> None:
    found = scan("const x = a / b / c;\nconst r = /x\\/y/.test(s);\nconst t = `a\nb`;\n/* c\nd */ z;\n")
    texts = [t for t, _ in found.tokens]
    assert "/x\\/y/" in texts and texts.count("/") == 2
    assert found.glued == {3, 5}


def test_unalignable_input_is_returned_as_is() -> None:
    assert keep_lines("", "console.log(1);\n") == "console.log(1);\n"
