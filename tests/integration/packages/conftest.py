"""Fixtures for packages added to runs: one wheel cache per module, filled from the real package index.

The index is needed (pip resolves and downloads the wheels); without it
these tests are skipped with the reason, and under ``CI=true`` they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from playground.core import SandboxError
from playground.core.packages import PackageRequest, PackageStore

#: A pure-Python package with a pure-Python dependency (text-unidecode), in no runtime of ours.
SLUGIFY = "python-slugify"


def fail_or_skip(message: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def filled_store(root: Path) -> PackageStore:
    """A store under ``root`` that has already fetched ``SLUGIFY`` (so the index is reachable)."""
    store = PackageStore(root)
    try:
        store.ensure(PackageRequest((SLUGIFY,), "3.12"))
    except SandboxError as exc:
        fail_or_skip(f"the package index cannot be used here: {exc}")
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> PackageStore:
    return filled_store(tmp_path_factory.mktemp("package-cache"))
