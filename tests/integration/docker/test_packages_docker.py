"""Pure-Python packages from PyPI added to a run on the Docker tier: same mechanism, no network in the container.

The host fetches and checks the wheels (``core.packages``); they reach the
container in its input archive, unpacked read-only in a tmpfs of their own
on ``PYTHONPATH`` (``backends.docker.packages``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from playground.core import DOCKER_ONLY, Limits, Sandbox, SandboxError, Spec
from playground.core.packages import PackageRequest, PackageStore
from playground.packs import python

from .conftest import require_image

pytestmark = pytest.mark.timeout(600)

LIMITS = Limits(wall_time=60.0, cpu_time=60.0)


@pytest.fixture
def packaged(engine: Engine, backend: DockerBackend, tmp_path: Path) -> Iterator[Sandbox]:
    require_image(engine, python.PACK)
    store = PackageStore(tmp_path / "cache")
    try:
        store.ensure(PackageRequest(("python-slugify",), "3.12"))
    except SandboxError as exc:
        pytest.fail(f"the package index cannot be used here: {exc}")
    sb = Sandbox(backends=[backend], packs=[python.PACK], policy=DOCKER_ONLY, default_limits=LIMITS, packages=store)
    yield sb
    sb.close()


async def test_a_pure_python_package_runs_read_only_without_network(packaged: Sandbox) -> None:
    code = (
        "import importlib.metadata, os, socket\nimport slugify\n"
        "print(slugify.slugify('Héllo Wörld!'), importlib.metadata.version('text-unidecode'))\n"
        "where = os.path.dirname(slugify.__file__)\nprint(where, oct(os.stat(where).st_mode & 0o777))\n"
        "try:\n    open(where + '/x.py', 'w')\n    print('written')\n"
        "except OSError as exc:\n    print(type(exc).__name__)\n"
        "try:\n    socket.create_connection(('pypi.org', 443), timeout=3)\n    print('connected')\n"
        "except OSError as exc:\n    print('no network')\n"
    )
    result = await packaged.run(Spec(lang="python", code=code, packages=["python-slugify"]))
    assert result.exit_code == 0, result.stderr.decode()
    assert result.backend == "docker"
    assert result.stdout.decode().splitlines() == [
        "hello-world 1.3", "/opt/playground/site-packages/slugify 0o555", "PermissionError", "no network"]


async def test_the_packages_do_not_eat_the_programs_quota_or_memory(packaged: Sandbox) -> None:
    # A 1 MiB quota: far less than the packages' pages, which live in their own tmpfs.
    code = "import slugify\nopen('/out/a.txt', 'w').write(slugify.slugify('a b'))\n"
    spec = Spec(lang="python", code=code, packages=["python-slugify"], limits=Limits(fs_quota=1 << 20, memory=64 << 20))
    result = await packaged.run(spec)
    assert result.exit_code == 0, result.stderr.decode()
    assert result.files == {"a.txt": b"a-b"}
