"""Which runtime of a language runs a program: the pack's own or one of its ``WasmVariant``s.

A pack may offer a heavier Wasm runtime next to its light one (Python's
scientific runtime: numpy, pandas, matplotlib ... compiled into one
CPython). Routing a program there must cost a plain script nothing and
ask the user nothing, so the choice is made from the program's text
before anything runs:

* a *detector* (named by the variant, implemented here, stdlib only) lists
  the top-level modules the program imports; for Python that is a static
  ``ast`` walk over every ``import x`` / ``from x import y`` (absolute
  imports only, wherever they appear: a function body or a ``try`` counts).
  A program that does not parse gets no variant: the light runtime reports
  its syntax error as before.
* the first variant whose ``triggers`` meet those imports, or whose
  ``provides`` name one of the run's requested packages, wins.

What a wrong guess looks like: an import the walk cannot see
(``importlib.import_module(name)``, ``__import__``, ``exec`` of a string)
runs on the light runtime and fails with ``ModuleNotFoundError``;
``missing_module_hint`` turns that into a sentence that says how to get
the module (import it by name, or ask for it as a package).

The chosen variant is presented as a ``Pack`` (same name, the variant's
``WasmSpec``), so routing, provisioning, status and every backend work on
it unchanged.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from playground.core.pack import Pack, WasmSnapshot, WasmSpec, WasmVariant

__all__ = [
    "DETECTORS", "cannot_hint", "choose", "import_name", "missing_module", "missing_module_hint",
    "provided_distributions", "pypi_name", "python_imports", "snapshot_for", "variant_pack",
]  # fmt: skip

#: The longest program the Python detector parses (bytes of source); longer ones get the light runtime.
MAX_SCAN: Final = 4 << 20
#: How much of a failed run's stderr the hints read: its end, where the error that stopped it is.
STDERR_TAIL: Final = 1 << 16
_MISSING = re.compile(rb"ModuleNotFoundError: No module named '([A-Za-z_][A-Za-z0-9_.]*)'")


def python_imports(code: str) -> set[str]:
    """Top-level names of the modules a Python program imports (absolute imports only).

    ``import a.b`` gives ``a``; ``from a.b import c`` gives ``a``;
    ``from . import c`` gives nothing. Unparseable code gives nothing.
    """
    if len(code) > MAX_SCAN:
        return set()
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".", 1)[0])
    return found


#: Detector name (``WasmVariant.detector``) -> what the program uses.
DETECTORS: Final[dict[str, Callable[[str], set[str]]]] = {"python-imports": python_imports}


def choose(pack: Pack, code: str | bytes, packages: Sequence[str] = ()) -> WasmVariant | None:
    """The variant of ``pack`` that should run ``code`` (None: the pack's own runtime).

    ``packages`` are the run's requested package names (``Spec.packages``,
    with or without a version): a name a variant provides selects it too.
    """
    spec = pack.wasm
    if spec is None or not spec.variants:
        return None
    text = code.decode("utf-8", "replace") if isinstance(code, bytes) else code
    wanted = {_package_name(p) for p in packages}
    for variant in spec.variants:
        if wanted and wanted & provided_distributions(variant):
            return variant
        if _used(variant.detector, text) & set(variant.triggers):
            return variant
    return None


def snapshot_for(spec: WasmSpec, code: str | bytes) -> WasmSnapshot | None:
    """The snapshot a one-shot run of ``code`` on ``spec`` starts from: the first of ``spec.import_snapshots``
    whose ``for_imports`` the program uses (by its ``detector``; every one of them for a snapshot with
    ``all_imports``), else the spec's own (None: it has none)."""
    if spec.import_snapshots:
        text = code.decode("utf-8", "replace") if isinstance(code, bytes) else code
        for extra in spec.import_snapshots:
            used = _used(extra.detector, text)
            if used.issuperset(extra.for_imports) if extra.all_imports else used & set(extra.for_imports):
                return extra
    return spec.snapshot


@functools.lru_cache(maxsize=16)
def _used(detector: str, text: str) -> frozenset[str]:
    """What ``text`` uses by ``detector`` (``DETECTORS``; an unknown one finds nothing).

    Cached: a run asks twice (its runtime, then its snapshot) and a
    student's F5 or an agent's retry sends the same program again;
    parsing it is most of a Python run's time in the caller's process.
    """
    detect = DETECTORS.get(detector)
    return frozenset(detect(text)) if detect is not None else frozenset()


def variant_pack(pack: Pack, variant: WasmVariant | None) -> Pack:
    """``pack`` as it runs on ``variant``: same name and Docker spec, the variant's Wasm runtime and its own
    default limits over the pack's."""
    if variant is None:
        return pack
    limits = pack.limits
    if variant.limits is not None:
        limits = variant.limits if limits is None else limits.merged(variant.limits)
    return dataclasses.replace(
        pack,
        wasm=variant.wasm,
        version=variant.version or pack.version,
        description=variant.description or pack.description,
        limits=limits,
    )


def missing_module(stderr: bytes) -> str | None:
    """The top-level module of the last ``ModuleNotFoundError: No module named 'x'`` in ``stderr``."""
    found = _MISSING.findall(stderr[-STDERR_TAIL:])
    return found[-1].decode("ascii").split(".", 1)[0] if found else None


def missing_module_hint(pack: Pack, stderr: bytes, *, runtime: str = "", session: bool = False) -> str | None:
    """One sentence saying how to get the module a failed program could not import, or None.

    ``runtime`` is the variant that ran (empty: the pack's own runtime).
    ``session``: the input was a REPL session's, whose runtime is the one
    its first input picked and which cannot add packages.
    """
    module = missing_module(stderr)
    variants = tuple(_variants(pack))
    if module is None or not (pack.caps.packages or variants):
        return None  # a language that has no other runtime and takes no packages (a guest printed that line)
    for variant in variants:
        if module in variant.provides and variant.name != runtime:
            if session:
                return (
                    f"{module} is in {pack.name}'s {variant.name} runtime; a session starts on it when its first "
                    f"input imports {module} by name, and keeps the runtime it started on: reset the session (or "
                    f"start a new one) and make 'import {module}' its first input"
                )
            return (
                f"{module} is in {pack.name}'s {variant.name} runtime, which the sandbox picks when the program "
                f"imports it by name (import {module}) or asks for it as a package (--pip {module})"
            )
    if runtime and any(module in v.provides for v in variants if v.name == runtime):
        return None
    if module in sys.stdlib_module_names:  # not on PyPI (``cannot_hint`` says why, where the pack knows)
        return f"{module} is in Python's standard library, but not in this {pack.name} runtime"
    if session:
        return (
            f"{module} is not part of this {pack.name} runtime, and a session cannot add packages; if it is a "
            f"pure-Python package on PyPI, a one-shot run can (--pip {_pypi_guess(module)} on the command line, "
            "packages in the library and MCP)"
        )
    return (
        f"{module} is not part of this {pack.name} runtime; if it is a pure-Python package on PyPI, "
        f"add it to the run (--pip {_pypi_guess(module)} on the command line, packages in the library and MCP)"
    )


def _last_marker(markers: Mapping[str, str], stderr: bytes) -> str | None:
    """The sentence of the marker written last in ``stderr`` (nearest to what failed the program), or None."""
    tail = stderr[-STDERR_TAIL:]
    found = max(((tail.rfind(marker.encode()), why) for marker, why in markers.items()), default=(-1, ""))
    return found[1] if found[0] >= 0 else None


def nowhere_hint(pack: Pack, stderr: bytes) -> str | None:
    """One sentence on what no tier of ``pack`` can do that a failed program tried (``Pack.nowhere``), or None."""
    return _last_marker(pack.nowhere, stderr)


def cannot_hint(pack: Pack, stderr: bytes, *, runtime: str = "", source: str = "") -> str | None:
    """One sentence on what the Wasm runtime that ran a failed program cannot do (``WasmSpec.cannot``), or None.

    ``runtime`` names the variant that ran (empty: the pack's own). The
    marker written last in ``stderr`` wins: it is nearest to what failed
    the program. Without one, a ``SyntaxError`` in ``stderr`` and the
    program's ``source`` give the sentence of the first ``cannot_parse``
    pattern the source matches. The sentence says where it can be done:
    the pack's Docker tier, when it has one (else the sentence itself says
    what there is).
    """
    spec = pack.wasm
    for variant in _variants(pack):
        if variant.name == runtime:
            spec = variant.wasm
    if spec is None:
        return None
    why = _last_marker(spec.cannot, stderr)
    if why is None and source and b"SyntaxError" in stderr[-STDERR_TAIL:]:
        why = next((says for pattern, says in spec.cannot_parse.items() if re.search(pattern, source)), None)
    if why is None or pack.docker is None:
        return why
    return (
        f"{why}; the Docker tier's {pack.name} can run this program (playground run --policy docker-only, "
        "or Docker in the window's backend choice; Docker must be installed)"
    )


def provided_distributions(variant: WasmVariant) -> set[str]:
    """The PyPI names (normalised) of what ``variant`` provides: ``sklearn`` gives ``scikit-learn`` and ``sklearn``.

    Its ``distributions`` count too (``pillow``, ``python-dateutil``).
    """
    guessed = {_normal(m) for m in variant.provides} | {_normal(_pypi_guess(m)) for m in variant.provides}
    return guessed | {_normal(d) for d in variant.distributions}


def import_name(variant: WasmVariant, distribution: str) -> str | None:
    """The top-level module ``variant`` has for the PyPI name ``distribution`` (``scikit-learn``: ``sklearn``)."""
    wanted = _normal(distribution)
    for module in variant.provides:
        if wanted in (_normal(module), _normal(_pypi_guess(module))):
            return module
    return None


def _variants(pack: Pack) -> Iterable[WasmVariant]:
    return pack.wasm.variants if pack.wasm is not None else ()


def _package_name(requirement: str) -> str:
    """``"pandas==2.2"`` -> ``"pandas"`` (PEP 503 normalised: lower case, ``-`` for ``_`` and ``.``)."""
    name = re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0]
    return _normal(name)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: Import names whose PyPI distribution is called differently (the common ones).
_DISTRIBUTIONS: Final = {
    "sklearn": "scikit-learn", "PIL": "pillow", "yaml": "pyyaml", "bs4": "beautifulsoup4", "cv2": "opencv-python",
    "dateutil": "python-dateutil", "attr": "attrs", "slugify": "python-slugify", "dotenv": "python-dotenv",
    "jwt": "PyJWT", "docx": "python-docx", "pptx": "python-pptx", "pkg_resources": "setuptools",
}  # fmt: skip


def _pypi_guess(module: str) -> str:
    return _DISTRIBUTIONS.get(module, module)


def pypi_name(module: str) -> str:
    """The PyPI distribution most likely to provide the top-level ``module`` (``yaml``: ``pyyaml``)."""
    return _pypi_guess(module)
