"""Every package's public face: ``__all__`` sorted (isort style) and complete, in one place."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "playground.core",
    "playground.serve",
    "playground.net",
    "playground.mcp",
    "backends",
    "backends.wasm",
    "backends.docker",
]


def isort_key(name: str) -> tuple[int, str]:
    """CONSTANTS, then Classes, then functions, each alphabetical (isort's style)."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted_and_complete(package: str) -> None:
    module = importlib.import_module(package)
    names: list[str] = module.__all__
    assert names == sorted(names, key=isort_key)
    for name in names:
        assert hasattr(module, name), f"{package}.__all__ names {name!r}, which does not exist"
    exported = {id(getattr(module, n)) for n in names}
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or type(value).__name__ == "module" or name == "annotations":
            continue
        assert id(value) in exported, f"{name} is public in {package} but not in __all__"
