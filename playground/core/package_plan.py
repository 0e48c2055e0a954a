"""From a run's ``Spec.packages`` to what ``PackageStore`` resolves, given the runtime that will run it.

Kept apart from ``Sandbox`` because it is where the language's runtimes
meet the package index:

* a requested package the chosen runtime already has (the scientific
  runtime's sympy) is not fetched: the runtime's copy is used. Asked for
  with a version that runtime does not have, it is refused rather than
  shadowed by a second copy;
* the rest is resolved for the runtime's Python version (read from the
  pack's version text, ``CPython 3.12.0 ...``), with the runtime's own
  distributions offered as present, so a package may depend on them;
* a refusal says where the package can be had instead: the language's
  other runtime when it has it, or that none has it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from playground.core import variants
from playground.core.errors import Unsupported
from playground.core.pack import Pack, WasmVariant
from playground.core.packages import PackageRefused, PackageRequest
from playground.core.requirements import parse_requirement
from playground.core.spec import Spec

#: The guest's Python when a pack's version text names none.
DEFAULT_PYTHON: Final = "3.12"
#: The backend (a policy name) that runs a ``WasmVariant``'s runtime; elsewhere the pack's own spec runs.
VARIANT_BACKEND: Final = "wasm"


def python_version(pack: Pack) -> str:
    """``"3.12"`` from a version text such as ``"CPython 3.12.0 (WASI)"``."""
    found = re.search(r"(\d+)\.(\d+)", pack.version)
    return f"{found[1]}.{found[2]}" if found else DEFAULT_PYTHON


def request_for(spec: Spec, runs: Pack, variant: WasmVariant | None) -> PackageRequest | None:
    """What must be fetched for ``spec`` run by ``runs`` (``variant``: the runtime chosen), or None: nothing.

    Raises:
        Unsupported: the language takes no packages, or ``spec`` has a caller's root.
        PackageRefused: a package is pinned to a version the chosen runtime does not have.
    """
    if not spec.packages:
        return None
    if not runs.caps.packages:
        raise Unsupported(f"{runs.name} takes no packages: Spec.packages are Python packages from PyPI")
    if spec.uses_caller_root:
        raise Unsupported("packages need the standard layout (a run with Spec.root_files cannot have them)")
    have = dict(variant.distributions) if variant is not None else {}
    provided = variants.provided_distributions(variant) if variant is not None else set()
    wanted: set[str] = set()
    for text in spec.packages:
        requirement = parse_requirement(text)
        if requirement.name not in provided:
            wanted.add(str(requirement))
            continue
        version = have.get(requirement.name)
        if version and requirement.op and not _satisfies(version, requirement.op, requirement.version):
            assert variant is not None
            raise PackageRefused(
                f"{requirement}: the {variant.name} runtime has {requirement.name} {version}, which the run uses "
                "(a package it has cannot be replaced by another version)"
            )
    if not wanted:
        return None
    return PackageRequest(tuple(sorted(wanted)), python_version(runs), tuple(sorted(have.items())))


def elsewhere(base: Pack, runtime: WasmVariant | None) -> Callable[[str], str]:
    """For a refusal: where the language's runtimes other than ``runtime`` stand on a package."""
    others = [v for v in (base.wasm.variants if base.wasm is not None else ()) if v is not runtime]

    def where(name: str) -> str:
        for variant in others:
            if name in variants.provided_distributions(variant):
                module = variants.import_name(variant, name) or name
                return (
                    f"{base.name}'s {variant.name} runtime has it: import it by name (import {module}) and the "
                    "sandbox runs the program there"
                )
        if others:
            return f"{base.name}'s {', '.join(v.name for v in others)} runtime does not have it either"
        return ""

    return where


def _satisfies(have: str, op: str, wanted: str) -> bool:
    """``have op wanted`` for plain versions: ``==`` by release numbers and suffix, ``>=`` by release numbers."""
    if op == "==":
        return _exact(have) == _exact(wanted)
    return _numbers(have) >= _numbers(wanted)


def _exact(version: str) -> tuple[tuple[int, ...], str]:
    text = version.lower().lstrip("v")
    return _numbers(text), re.sub(r"^[0-9.]+", "", text)


def _numbers(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits[0]))
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)
