"""Cold starts of a runtime that has a snapshot run from the snapshot's code module (``Snapshots.cold_start``).

One compile serves every start: a run the snapshot cannot serve (a start-up
variable, a caller root), a cold session and a served program all run the
code module's ``_start`` over a memory mapped from the runtime's own data
segments, and the whole runtime is never compiled. They behave as the
runtime itself does, and the memory limit still covers the mapped memory.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from backends.wasm.artifacts import cache_root
from playground.core import Limits, MemoryLimitExceeded, Pack, Sandbox, SessionConfig, Spec
from playground.packs import javascript, python
from playground.serve import start_service_proxy
from tests.integration.wasm.conftest import require_runtime

#: A start-up variable: the run cannot use the snapshot.
COLD = {"PYTHONHASHSEED": "7"}
PROGRAMS = [
    "import sys, os\nprint(sys.argv, sorted(os.environ), sys.flags.hash_randomization, hash('a'))",
    "import json\nopen('/work/x.json', 'w').write(json.dumps({'a': 1}))\nprint(open('/work/x.json').read())",
    "import sys\nprint(sys.stdin.read().upper())\nraise SystemExit(3)",
    "def f(n): return f(n + 1)\nf(0)",
    "import sys\nprint(sorted(m for m in ('dataclasses', 'typing', 'json') if m in sys.modules))",
]


def _backend(cache: Path, *, modules: bool, pack: Pack = python.PACK) -> WasmBackend:
    """A backend over the user's runtime files; its compiled modules shared (``modules``) or its own."""
    cache.mkdir(exist_ok=True)
    user = cache_root()
    (cache / "artifacts").symlink_to(user / "artifacts")
    if modules:
        (cache / "modules").symlink_to(user / "modules")
    backend = WasmBackend(cache_dir=cache)
    require_runtime(backend, pack)
    return backend


@pytest.fixture(scope="module")
def own_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WasmBackend]:
    """A backend that has compiled nothing yet (it compiles the code module once, here)."""
    backend = _backend(tmp_path_factory.mktemp("cold") / "cache", modules=False)
    yield backend
    backend.close()


async def _run(sb: Sandbox, code: str, **kw: object) -> tuple[int, str, str]:
    result = await sb.run(Spec(lang="python", code=code, env=COLD, stdin=b"typed", **kw))  # type: ignore[arg-type]
    return result.exit_code, result.stdout.decode(), result.stderr.decode()


async def test_cold_runs_sessions_and_services_never_compile_the_whole_runtime(own_modules: WasmBackend) -> None:
    spec = python.PACK.wasm
    assert spec is not None and spec.module is not None
    assert not [item for item in own_modules.missing(python.PACK) if spec.module.name in item]  # never to compile
    with Sandbox(backends=[own_modules], packs=[python.PACK], default_limits=Limits(wall_time=30.0)) as sb:
        code, out, err = await _run(sb, "import sys\nprint('dataclasses' in sys.modules, sys.flags.hash_randomization)")
        assert (code, out) == (0, "False 1\n"), err  # cold: nothing preloaded, the variable read at start-up
        async with await sb.new_session("python", SessionConfig(env=COLD)) as session:
            first = await session.eval("x = 41")
            second = await session.eval("print(x + 1)")
            assert first.exit_code == 0 and second.stdout == b"42\n", second.stderr
        program = "print(open('/work/d.txt').read())"
        root = await sb.run(Spec(lang="python", code=program, root_files={"work/d.txt": b"hi"}))
        assert root.stdout == b"hi\n", root.stderr
    assert not own_modules.modules.has(spec.module.sha256), "the whole runtime was compiled"


async def test_a_cold_start_from_the_code_module_behaves_as_the_runtime(tmp_path: Path) -> None:
    backend = _backend(tmp_path / "cache", modules=True)
    with Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=30.0)) as sb:
        image = [await _run(sb, program) for program in PROGRAMS]
        backend.snapshots.cold_start = lambda pack, progress: None  # type: ignore[method-assign]
        whole = [await _run(sb, program) for program in PROGRAMS]
    for program, (a, b) in zip(PROGRAMS, zip(image, whole, strict=True), strict=True):
        assert a == b, program
    assert image[2][:2] == (3, "TYPED\n") and "RecursionError" in image[3][2]


async def test_the_memory_limit_covers_the_mapped_memory(tmp_path: Path) -> None:
    backend = _backend(tmp_path / "cache", modules=True)
    start = backend.snapshots.cold_start(python.PACK, None)
    assert start is not None
    initial = start[1].minimum
    with Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=30.0)) as sb:
        with pytest.raises(MemoryLimitExceeded):
            await _run(sb, "print(1)", limits=Limits(memory=initial - (1 << 20)))
        with pytest.raises(MemoryLimitExceeded):
            await _run(sb, "x = bytearray(200 << 20)", limits=Limits(memory=64 << 20))
        assert (await _run(sb, "print(1)", limits=Limits(memory=initial + (16 << 20))))[:2] == (0, "1\n")


async def test_concurrent_cold_runs_share_nothing(tmp_path: Path) -> None:
    backend = _backend(tmp_path / "cache", modules=True)
    program = (
        "import builtins, os\nprint(getattr(builtins, 'mark', None))\nbuiltins.mark = 1\n"
        "print(os.path.exists('/work/m'))\nopen('/work/m', 'w')"
    )
    with Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=30.0)) as sb:
        results = await asyncio.gather(*(_run(sb, program) for _ in range(4)))
    assert all(r[:2] == (0, "None\nFalse\n") for r in results), results


async def test_a_served_program_starts_from_the_code_module(tmp_path: Path) -> None:
    backend = _backend(tmp_path / "cache", modules=False, pack=javascript.PACK)
    spec = javascript.PACK.wasm
    assert spec is not None and spec.module is not None
    code = 'export default { fetch(request) { return Response.json({ path: request.path }); } };'
    with Sandbox(backends=[backend], packs=[javascript.PACK], proxy_starter=start_service_proxy) as sb:
        service = await sb.serve(Spec(lang="javascript", code=code))
        try:
            auth = {"Authorization": f"Bearer {service.token}"}
            request = urllib.request.Request(service.url.rstrip("/") + "/hi", headers=auth)
            body = await asyncio.to_thread(lambda: urllib.request.urlopen(request, timeout=10).read())
        finally:
            await service.stop()
    assert json.loads(body) == {"path": "/hi"}
    assert not backend.modules.has(spec.module.sha256), "the whole runtime was compiled"
