"""Pure-Python packages from PyPI added to a run on the Wasm tier, for real: pip, the cache, wasmtime.

The light runtime (CPython 3.12) and the scientific one (3.15, next to
numpy) import a package and its dependency from the read-only tree the
host fetched; a native package is refused by name; a tampered cached
wheel is refused and fetched again; the guest still has no network; the
CLI's ``--pip`` and its hint work.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from playground.cli import main
from playground.core import Limits, Policy, Sandbox, SandboxError, Spec, package_plan
from playground.core.limits import MiB
from playground.core.packages import PackageRefused, PackageRequest, PackageStore
from playground.packs import python

from .conftest import SLUGIFY, fail_or_skip, filled_store

pytestmark = pytest.mark.timeout(900)

LIMITS = Limits(wall_time=60.0, cpu_time=60.0, memory=512 * MiB)
USE = (
    "import importlib.metadata, os, sys\nimport slugify\n"
    "print(sys.version_info[:2], slugify.slugify('Héllo Wörld!'), importlib.metadata.version('text-unidecode'))\n"
    "where = os.path.dirname(slugify.__file__)\nprint(where)\n"
    "for attempt in (lambda: open(where + '/x.py', 'w'), lambda: os.remove(where + '/__init__.py'),\n"
    "                lambda: os.rename(where, '/work/moved')):\n"
    "    try:\n        attempt()\n        print('changed')\n"
    "    except OSError as exc:\n        print(type(exc).__name__)\n"
)


@pytest.fixture(scope="module")
def sandbox(store: PackageStore) -> Iterator[Sandbox]:
    sb = Sandbox(backends=[WasmBackend()], packs=[python.PACK], packages=store, default_limits=LIMITS)
    try:
        sb.prepare("python", lambda line: None)
    except SandboxError as exc:
        fail_or_skip(f"the Python runtime cannot be set up here: {exc}")
    with sb:
        yield sb


async def test_a_pure_python_package_and_its_dependency_on_the_light_runtime(sandbox: Sandbox) -> None:
    spec = Spec(lang="python", code=USE, packages=[SLUGIFY])
    assert sandbox.pack_for(spec) is sandbox.pack("python")  # nothing here picks the scientific runtime
    result = await sandbox.run(spec)
    assert result.exit_code == 0, result.stderr.decode()
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "(3, 12) hello-world 1.3"
    assert lines[1] == "/opt/playground/site-packages/slugify"
    assert len(lines) == 5 and all(line.endswith("Error") for line in lines[2:]), lines
    assert result.usage.fs_bytes < 1000  # the packages are charged to no quota: only the program is


async def test_a_package_next_to_numpy_on_the_scientific_runtime(sandbox: Sandbox) -> None:
    status = sandbox.variant_status("python")["scientific"]
    try:
        sandbox.prepare_pack(status.pack, lambda line: print(line, flush=True))
    except SandboxError as exc:
        fail_or_skip(f"the scientific runtime cannot be set up here: {exc}")
    code = "import numpy as np\n" + USE
    result = await sandbox.run(Spec(lang="python", code=code, packages=[SLUGIFY]))
    assert result.exit_code == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines()[0] == "(3, 15) hello-world 1.3"


async def test_a_native_package_is_refused_with_its_name(sandbox: Sandbox, store: PackageStore) -> None:
    with pytest.raises(PackageRefused) as refused:
        await sandbox.run(Spec(lang="python", code="import orjson", packages=["orjson"]))
    message = str(refused.value)
    assert "orjson needs native code" in message and "scientific runtime does not have it" in message
    where = package_plan.elsewhere(python.PACK, None)  # as on a tier without the scientific runtime
    with pytest.raises(PackageRefused) as refused:
        store.ensure(PackageRequest(("pandas",), "3.12"), elsewhere=where)
    assert "pandas needs native code" in str(refused.value)
    assert "scientific runtime has it: import it by name (import pandas)" in str(refused.value)


def test_a_tampered_cached_wheel_is_refused_and_fetched_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = filled_store(tmp_path)
    request = PackageRequest((SLUGIFY,), "3.12")
    first = store.ensure(request)
    (wheel,) = [w for w in first.wheels if w.name == "text-unidecode"]
    path = store.wheel_path(wheel)
    good = path.read_bytes()
    assert hashlib.sha256(good).hexdigest() == wheel.sha256
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    for again in (store, PackageStore(tmp_path)):  # the same process's store, and a fresh one
        path.write_bytes(good.replace(b"text_unidecode", b"text_unidecodf", 1))
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            found = again.ensure(request)
        assert "corrupt or was replaced" in caplog.text
        assert path.read_bytes() == good  # fetched again, and it matches
        assert dict(found.files) == dict(first.files)


async def test_the_packages_give_the_guest_no_network(sandbox: Sandbox) -> None:
    code = (
        "import socket, slugify\n"
        "try:\n    socket.create_connection(('pypi.org', 443), timeout=3)\n    print('connected')\n"
        "except Exception as exc:\n    print('no network:', type(exc).__name__)\n"
    )
    result = await sandbox.run(Spec(lang="python", code=code, packages=[SLUGIFY]))
    assert result.exit_code == 0, result.stderr.decode()
    assert result.stdout.decode().startswith("no network:")


def test_the_cli_adds_a_package_and_says_how_when_one_is_missing(
    store: PackageStore, capfd: pytest.CaptureFixture[str]
) -> None:
    def make(policy: Policy) -> Sandbox:
        return Sandbox(backends=[WasmBackend()], packs=[python.PACK], packages=store, policy=policy)

    code = "import slugify\nprint(slugify.slugify('a b'))"
    assert main(["run", "-l", "python", "-e", code, "--pip", SLUGIFY], make_sandbox=make) == 0
    assert capfd.readouterr().out == "a-b\n"
    assert main(["run", "-l", "python", "-e", "import slugify"], make_sandbox=make) == 1
    assert f"--pip {SLUGIFY}" in capfd.readouterr().err  # the module is slugify, the package python-slugify
    assert main(["run", "-l", "python", "-e", "print(1)", "--pip", "orjson"], make_sandbox=make) == 120
    assert "orjson needs native code" in capfd.readouterr().err
