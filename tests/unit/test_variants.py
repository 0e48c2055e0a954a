"""Picking a language's variant runtime from the program (``core.variants``) and package requirements."""

from __future__ import annotations

import pytest

from playground.core import InvalidSpec, Pack, Result, Sandbox, Spec, WasmSpec
from playground.core.requirements import MAX_PACKAGES, parse_requirement
from playground.core.variants import (
    cannot_hint,
    choose,
    missing_module,
    missing_module_hint,
    nowhere_hint,
    python_imports,
)
from playground.packs import javascript, lua, python, typescript


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import numpy as np", {"numpy"}),
        ("import os.path, matplotlib.pyplot as plt", {"os", "matplotlib"}),
        ("from sklearn.linear_model import LinearRegression", {"sklearn"}),
        ("from . import sibling\nfrom .pkg import x", set()),
        ("def f():\n    try:\n        import pandas\n    except ImportError:\n        pass", {"pandas"}),
        ("import numpy as np\nthis is not python(", set()),
        ("importlib.import_module('numpy')", set()),
    ],
)
def test_python_imports(code: str, expected: set[str]) -> None:
    assert python_imports(code) == expected


def test_only_a_program_that_needs_it_gets_the_scientific_runtime() -> None:
    pack = python.PACK
    assert choose(pack, "print(1)") is None
    assert choose(pack, "import json, re, sqlite3") is None
    for code in ("import numpy", "from pandas import DataFrame", "import matplotlib.pyplot as plt", b"import scipy"):
        variant = choose(pack, code)
        assert variant is not None and variant.name == "scientific"
    # A package the variant provides picks it as well, under its PyPI name or its import name.
    assert choose(pack, "x = 1", ["scikit-learn"]) is not None
    assert choose(pack, "x = 1", ["numpy==2.5.2"]) is not None
    assert choose(pack, "x = 1", ["tabulate-extra"]) is None


def test_the_sandbox_routes_by_imports_and_keeps_the_name() -> None:
    sb = Sandbox(packs=[python.PACK])
    light = sb.pack_for(Spec(lang="py", code="print(1)"))
    heavy = sb.pack_for(Spec(lang="py", code="import numpy"))
    assert light is sb.pack("python")
    assert heavy.name == "python" and heavy.wasm is not None and heavy.wasm.entry == "run"
    assert heavy.docker == light.docker
    # A caller's own root keeps the light runtime (the library is mounted only in the standard layout).
    assert sb.pack_for(Spec(lang="py", code="import numpy", root_files={"a": b""})) is light


def test_missing_module_hints() -> None:
    err = b"Traceback (most recent call last):\nModuleNotFoundError: No module named 'pandas.core'\n"
    assert missing_module(err) == "pandas"
    assert missing_module(b"ImportError: cannot import name 'x'") is None
    hint = missing_module_hint(python.PACK, err)
    assert hint is not None and "scientific runtime" in hint and "import pandas" in hint
    other = missing_module_hint(python.PACK, b"ModuleNotFoundError: No module named 'requests'")
    assert other is not None and "--pip requests" in other
    assert "opencv-python" in (missing_module_hint(python.PACK, b"ModuleNotFoundError: No module named 'cv2'") or "")
    for other_language in (lua.PACK, javascript.PACK):  # no runtime or package to point to, whatever it printed
        assert missing_module_hint(other_language, err) is None
        assert missing_module_hint(other_language, err, session=True) is None


def test_missing_module_hints_in_a_session_point_to_a_new_session() -> None:
    """A session keeps the runtime its first input picked and cannot add packages: the hints say what works."""
    err = b"ModuleNotFoundError: No module named 'numpy'\n"
    hint = missing_module_hint(python.PACK, err, session=True)
    assert hint is not None and "reset the session (or start a new one)" in hint and "'import numpy'" in hint
    assert missing_module_hint(python.PACK, err, runtime="scientific", session=True) is None  # it is there: a real bug
    other = missing_module_hint(python.PACK, b"ModuleNotFoundError: No module named 'requests'", session=True)
    assert other is not None and "session cannot add packages" in other and "--pip requests" in other


@pytest.mark.parametrize("good", ["tabulate", "sympy==1.13.3", "rich>=13", "python_slugify", "A.b-c"])
def test_plain_requirements_are_accepted(good: str) -> None:
    assert parse_requirement(good).name == parse_requirement(good.lower()).name
    assert Spec(lang="python", code="", packages=[good]).packages == (good,)


@pytest.mark.parametrize(
    "bad", ["", "-e .", "--index-url=http://x", "pkg @ https://x/y.whl", "./dir", "pkg[extra]", "a b", "x==", "ü"]
)
def test_other_requirements_are_refused(bad: str) -> None:
    with pytest.raises(InvalidSpec):
        Spec(lang="python", code="", packages=[bad])


def test_packages_must_be_a_short_list() -> None:
    with pytest.raises(InvalidSpec):
        Spec(lang="python", code="", packages="tabulate")  # type: ignore[arg-type]
    with pytest.raises(InvalidSpec):
        Spec(lang="python", code="", packages=[f"p{i}" for i in range(MAX_PACKAGES + 1)])


THREAD = b"Traceback (most recent call last):\n  ...\nRuntimeError: can't start new thread\n"


def test_what_a_wasm_python_cannot_do_is_said_with_where_it_can_be_done() -> None:
    """``WasmSpec.cannot``: threads, processes and the standard modules a build leaves out are not packages to add."""
    hint = cannot_hint(python.PACK, THREAD)
    assert hint is not None and hint.startswith("this WebAssembly Python runs one thread")
    assert "--policy docker-only" in hint
    light = cannot_hint(python.PACK, b"ModuleNotFoundError: No module named 'concurrent.futures.thread'\n")
    assert light is not None and light.startswith("concurrent.futures' ThreadPoolExecutor is in Python's standard")
    # Each runtime says its own: the scientific one has multiprocessing, whose pools fail on a missing os.pipe.
    mp = b"ModuleNotFoundError: No module named 'multiprocessing'\n"
    assert "multiprocessing is in Python's standard library" in (cannot_hint(python.PACK, mp) or "")
    assert cannot_hint(python.PACK, mp, runtime="scientific") is None
    pipe = b"AttributeError: module 'os' has no attribute 'pipe'. Did you mean: 'pipe2'?\n"
    assert "cannot start processes (multiprocessing)" in (cannot_hint(python.PACK, pipe, runtime="scientific") or "")
    assert cannot_hint(python.PACK, pipe) is None
    # The marker written last is what failed the program.
    both = b"ModuleNotFoundError: No module named 'ssl'\n" + THREAD
    assert (cannot_hint(python.PACK, both) or "").startswith("this WebAssembly Python runs one thread")
    assert cannot_hint(python.PACK, b"ValueError: x\n") is None
    zone = b"zoneinfo._common.ZoneInfoNotFoundError: 'No time zone found with key Europe/Paris'\n"
    assert "import tzdata" in (cannot_hint(python.PACK, zone) or "")
    assert cannot_hint(python.PACK, zone, runtime="scientific") is None  # it has tzdata
    for runtime in ("", "scientific"):  # what neither WASI build has
        fork = cannot_hint(python.PACK, b"AttributeError: module 'os' has no attribute 'fork'\n", runtime=runtime)
        alarm = cannot_hint(python.PACK, b"AttributeError: module 'signal' has no attribute 'alarm'\n", runtime=runtime)
        assert "cannot start processes (os.fork)" in (fork or "") and "no timer signals" in (alarm or "")
    assert cannot_hint(lua.PACK, THREAD) is None  # nothing declared: nothing said
    wasm_only = Pack(name="py-wasm", extensions=(".pyw",), wasm=WasmSpec(module=None, cannot={"no threads": "one"}))
    assert cannot_hint(wasm_only, b"no threads") == "one"  # no Docker tier: the sentence says it all
    zone = (
        b"Uncaught RangeError: Invalid time zone specified: Asia/Yerevan (this sandbox's JavaScript knows UTC and "
        b"the zones of major cities only)\n    at <anonymous> (/work/main.js:1:1)\n"
    )
    for language in (javascript.PACK, typescript.PACK):
        said = cannot_hint(language, zone) or ""
        assert "time zones of major cities only" in said and "-l node" in said


@pytest.mark.parametrize(
    "source",
    [
        "function log(t: any, k: string, d: PropertyDescriptor) {}\nclass C {\n  @log\n  add() {}\n}\n",
        "@sealed\nexport class A {}\n",
        "class B {\n  constructor(@Inject(TOKEN) private x: number) {}\n}\n",
        "class C {\n  @f name = 'x';\n}\n",
        "class D {\n  m(a: number, @dec b: number) {}\n}\n",
    ],
)
def test_typescripts_decorators_are_named_when_quickjs_cannot_parse_them(source: str) -> None:
    """The transform leaves decorators in, and QuickJS reports them as three different syntax errors, none of
    which says "decorator" (``WasmSpec.cannot_parse``)."""
    syntax = b"Uncaught SyntaxError: invalid property name\n    at /work/main.ts:3:2\n"
    hint = cannot_hint(typescript.PACK, syntax, source=source)
    assert hint is not None and hint.startswith("decorators (@name) do not run here")
    sb = Sandbox(packs=[typescript.PACK])
    said = sb.hint(Spec(lang="typescript", code=source), Result(exit_code=1, stderr=syntax, backend="wasm"))
    assert said == hint
    assert cannot_hint(typescript.PACK, b"TypeError: x is not a function\n", source=source) is None  # not a parse


@pytest.mark.parametrize(
    "source",
    ['const mail = "a@b.c";\nlet = ;\n', "// @ts-ignore\nlet = ;\n", "/**\n * @param x\n */\nlet = ;\n"],
)
def test_a_syntax_error_without_a_decorator_gets_no_decorator_hint(source: str) -> None:
    syntax = b"Uncaught SyntaxError: unexpected token in expression: ';'\n"
    assert cannot_hint(typescript.PACK, syntax, source=source) is None
    assert cannot_hint(javascript.PACK, syntax, source="@x\nclass A {}\n") is None  # JavaScript has no such data


def test_the_sandbox_says_what_the_wasm_tier_cannot_do_before_any_package_advice() -> None:
    sb = Sandbox(packs=[python.PACK])
    spec = Spec(lang="python", code="import multiprocessing")
    missing = b"ModuleNotFoundError: No module named 'multiprocessing'\n"
    hint = sb.hint(spec, Result(exit_code=1, stderr=missing, backend="wasm"))
    assert hint is not None and "standard library" in hint and "--pip" not in hint and "Docker" in hint
    # On Docker the thread error is the process limit's, and a missing standard module is not a PyPI package.
    assert sb.hint(spec, Result(exit_code=1, stderr=THREAD, backend="docker")) is None
    on_docker = sb.hint(spec, Result(exit_code=1, stderr=missing, backend="docker"))
    assert on_docker == "multiprocessing is in Python's standard library, but not in this python runtime"


def test_what_no_tier_can_do_is_said_for_any_tier_and_before_the_docker_hint() -> None:
    """``Pack.nowhere``: a window or a terminal; 3.12's and 3.15's wordings of a missing module, and the
    Docker tier's own errors."""
    for stderr in (
        b"ModuleNotFoundError: No module named 'tkinter'\n",
        b"ModuleNotFoundError: Standard library module '_tkinter' was not found\n",
        b"ModuleNotFoundError: No module named 'turtle'\n",
        b"_tkinter.TclError: no display name and no $DISPLAY environment variable\n",
    ):
        assert nowhere_hint(python.PACK, stderr) == python.NO_WINDOW, stderr
    for stderr in (
        b"ModuleNotFoundError: Unsupported platform for standard library module '_curses'\n",
        b"_curses.error: setupterm: could not find terminal\n",
    ):
        assert nowhere_hint(python.PACK, stderr) == python.NO_TERMINAL, stderr
    assert nowhere_hint(python.PACK, THREAD) is None
    assert "tkinter" not in " ".join(python.LIGHT_CANNOT.values())  # the Docker tier cannot run it either
    # The scientific runtime's wording of a left-out module matches its marker.
    ssl = b"ModuleNotFoundError: Standard library module '_ssl' was not found\n"
    assert (cannot_hint(python.PACK, ssl, runtime="scientific") or "").startswith("ssl is in Python's standard")
