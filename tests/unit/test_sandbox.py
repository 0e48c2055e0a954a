import asyncio
import subprocess
import sys

import pytest

from playground import core
from playground.core import (
    DOCKER_ONLY,
    PREFER_WASM,
    WASM_ONLY,
    BackendUnavailable,
    DockerSpec,
    FSQuotaExceeded,
    InvalidPack,
    Limits,
    Outcome,
    OutputLimitExceeded,
    Pack,
    Policy,
    Request,
    Sandbox,
    Spec,
    TimeLimitExceeded,
    UnknownLanguage,
    Unsupported,
    VFSError,
    WasmSpec,
)
from playground.core.errors import LimitExceeded
from tests.fake_backend import FakeBackend

JS = Pack(name="javascript", aliases=("js",), extensions=(".js", ".mjs"), wasm=WasmSpec(module=None))
PY = Pack(name="python", aliases=("py",), extensions=(".py",), wasm=WasmSpec(module=None),
          docker=DockerSpec(image="python:3", cmd=("python", "{main}")))
GO = Pack(name="go", aliases=("golang",), extensions=(".go",), docker=DockerSpec(image="golang", cmd=("go", "run")))


def needs(spec_kind: str):  # type: ignore[no-untyped-def]
    """A refusal rule like a real backend's: it runs only packs with its spec."""
    return lambda pack: None if getattr(pack, spec_kind) is not None else f"{pack.name} has no {spec_kind} spec"


def two_backends(policy: Policy = PREFER_WASM) -> tuple[Sandbox, FakeBackend, FakeBackend]:
    wasm = FakeBackend("wasm", refuse=needs("wasm"))
    docker = FakeBackend("docker", refuse=needs("docker"), supports_network=True)
    return Sandbox(backends=[wasm, docker], packs=[JS, PY, GO], policy=policy), wasm, docker


# -- lookup --------------------------------------------------------------------

def test_lookup_by_name_alias_case_and_extension() -> None:
    sb, _, _ = two_backends()
    assert sb.pack("JavaScript") is JS
    assert sb.pack("JS") is JS
    assert sb.pack(" py ") is PY
    assert sb.pack_for_file("dir/app.MJS") is JS
    assert sb.pack_for_file("main.go") is GO
    assert sb.languages() == ["go", "javascript", "python"]
    with pytest.raises(UnknownLanguage, match="known: go, javascript, python"):
        sb.pack("cobol")
    with pytest.raises(UnknownLanguage, match=r"\.txt"):
        sb.pack_for_file("notes.txt")
    with pytest.raises(UnknownLanguage):
        sb.pack_for_file("Makefile")


def test_duplicate_packs_and_backends_fail_at_construction() -> None:
    with pytest.raises(InvalidPack):
        Sandbox(packs=[JS, JS])
    with pytest.raises(InvalidPack):
        Sandbox(backends=[FakeBackend("wasm"), FakeBackend("wasm")])


# -- routing ---------------------------------------------------------------------

async def test_prefer_wasm_uses_wasm_then_docker() -> None:
    sb, wasm, docker = two_backends()
    assert (await sb.run(Spec(lang="py", code="x"))).backend == "wasm"
    assert (await sb.run(Spec(lang="go", code="x"))).backend == "docker"
    assert len(wasm.runs) == 1 and len(docker.runs) == 1


async def test_docker_only_never_uses_wasm() -> None:
    sb, wasm, _ = two_backends(DOCKER_ONLY)
    assert (await sb.run(Spec(lang="py", code="x"))).backend == "docker"
    with pytest.raises(BackendUnavailable) as info:
        await sb.run(Spec(lang="js", code="x"))
    message = str(info.value)
    assert "javascript" in message and "DOCKER_ONLY" in message and "no docker spec" in message
    assert wasm.runs == []


async def test_wasm_only_never_downgrades_to_docker() -> None:
    sb, _, docker = two_backends(WASM_ONLY)
    with pytest.raises(BackendUnavailable, match=r"go.*WASM_ONLY.*wasm: go has no wasm spec"):
        await sb.run(Spec(lang="go", code="x"))
    assert docker.runs == []


async def test_unavailable_backend_is_not_silently_skipped_outside_the_policy() -> None:
    wasm = FakeBackend("wasm", refuse=lambda p: "runtime not installed")
    docker = FakeBackend("docker")
    sb = Sandbox(backends=[wasm, docker], packs=[JS], policy=WASM_ONLY)
    with pytest.raises(BackendUnavailable, match="runtime not installed"):
        await sb.run(Spec(lang="js", code="x"))
    assert docker.runs == []


async def test_every_reason_is_named() -> None:
    wasm = FakeBackend("wasm", refuse=lambda p: "wasmtime missing")
    sb = Sandbox(backends=[wasm], packs=[JS])
    with pytest.raises(BackendUnavailable) as info:
        await sb.run(Spec(lang="js", code="x"))
    assert "wasm: wasmtime missing" in str(info.value)
    assert "docker: backend not registered" in str(info.value)
    status = sb.status("js")
    assert status.backend is None
    assert status.reasons == {"wasm": "wasmtime missing", "docker": "backend not registered"}


async def test_network_policy_is_never_ignored() -> None:
    sb, wasm, _docker = two_backends(WASM_ONLY)
    with pytest.raises(Unsupported, match="network"):
        await sb.run(Spec(lang="py", code="x", net=core.NetPolicy(allow_hosts=["a.test"])))
    assert wasm.runs == []
    sb2, wasm2, _docker2 = two_backends(PREFER_WASM)
    result = await sb2.run(Spec(lang="py", code="x", net=core.NetPolicy(allow_hosts=["a.test"])))
    assert result.backend == "docker"
    assert wasm2.runs == []


# -- bookkeeping ---------------------------------------------------------------

async def test_result_fields() -> None:
    def handler(req: Request) -> Outcome:
        req.output.write_stdout(b"out")
        req.output.write_stderr(b"err")
        req.vfs.write_file("/out/r.txt", req.vfs.read_file("/in/data.txt") + b"!")
        return Outcome(exit_code=3, peak_memory=1234)

    sb = Sandbox(backends=[FakeBackend("wasm", handler)], packs=[JS])
    result = await sb.run(Spec(lang="js", code="x", files={"data.txt": b"hi"}))
    assert result.stdout == b"out" and result.stderr == b"err"
    assert result.exit_code == 3
    assert dict(result.files) == {"r.txt": b"hi!"}
    assert result.usage.peak_memory == 1234
    assert result.usage.fs_files == 6  # in, work, out, tmp, in/data.txt, out/r.txt
    assert result.usage.fs_bytes == 5
    assert result.usage.wall >= 0
    assert not result.truncated


async def test_limits_reach_the_backend_merged() -> None:
    backend = FakeBackend("wasm")
    sb = Sandbox(backends=[backend], packs=[JS], default_limits=Limits(memory=64 << 20))
    await sb.run(Spec(lang="js", code="x", limits=Limits(wall_time=2.0)))
    limits = backend.runs[0].limits
    assert limits.memory == 64 << 20 and limits.wall_time == 2.0 and limits.max_files == 256


async def test_output_limit_error_carries_partial_result() -> None:
    def flood(req: Request) -> Outcome:
        req.vfs.write_file("/out/partial.txt", b"kept")
        while True:
            req.output.write_stdout(b"x" * 1000)

    sb = Sandbox(backends=[FakeBackend("wasm", flood)], packs=[JS])
    with pytest.raises(OutputLimitExceeded) as info:
        await sb.run(Spec(lang="js", code="x", limits=Limits(max_output=2500)))
    result = info.value.result
    assert result is not None
    assert result.stdout == b"x" * 2500
    assert result.truncated
    assert dict(result.files) == {"partial.txt": b"kept"}
    assert result.backend == "wasm"


async def test_truncation_swallowed_by_a_backend_is_still_reported() -> None:
    def swallow(req: Request) -> Outcome:
        try:
            req.output.write_stdout(b"y" * 100)
        except OutputLimitExceeded:
            pass
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", swallow)], packs=[JS])
    with pytest.raises(OutputLimitExceeded) as info:
        await sb.run(Spec(lang="js", code="x", limits=Limits(max_output=10)))
    assert info.value.result is not None and info.value.result.stdout == b"y" * 10


async def test_time_limit_error_carries_partial_result() -> None:
    async def slow(req: Request) -> Outcome:
        req.output.write_stdout(b"before")
        await asyncio.sleep(10)
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", slow)], packs=[JS])
    with pytest.raises(TimeLimitExceeded) as info:
        await sb.run(Spec(lang="js", code="x", limits=Limits(wall_time=0.05)))
    assert info.value.result is not None and info.value.result.stdout == b"before"
    assert isinstance(info.value, LimitExceeded) and info.value.limit == "wall_time"


async def test_quota_hit_swallowed_by_the_guest_is_still_reported() -> None:
    def fill(req: Request) -> Outcome:
        try:
            req.vfs.write_file("/work/big", b"x" * 200)
        except VFSError:
            req.output.write_stderr(b"ENOSPC handled")
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", fill)], packs=[JS])
    with pytest.raises(FSQuotaExceeded) as info:
        await sb.run(Spec(lang="js", code="x", limits=Limits(fs_quota=100)))
    assert info.value.result is not None and info.value.result.stderr == b"ENOSPC handled"


async def test_inputs_over_quota() -> None:
    sb = Sandbox(backends=[FakeBackend("wasm")], packs=[JS])
    with pytest.raises(FSQuotaExceeded, match="input files"):
        await sb.run(Spec(lang="js", code="x", files={"a": b"x" * 11}, limits=Limits(fs_quota=10)))
    with pytest.raises(FSQuotaExceeded):
        await sb.run(Spec(lang="js", code="x", files={f"f{i}": b"" for i in range(10)}, limits=Limits(max_files=5)))


async def test_nothing_leaks_between_runs() -> None:
    def writer(req: Request) -> Outcome:
        assert req.vfs.listdir("/work") == []
        assert req.vfs.listdir("/out") == []
        req.vfs.write_file("/work/leftover", b"1")
        req.vfs.write_file("/out/leftover", b"1")
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", writer)], packs=[JS])
    for _ in range(3):
        assert dict((await sb.run(Spec(lang="js", code="x"))).files) == {"leftover": b"1"}


async def test_one_hundred_concurrent_runs_without_cross_talk() -> None:
    async def handler(req: Request) -> Outcome:
        tag = req.spec.code_bytes
        for _ in range(5):
            req.output.write_stdout(tag + b";")
            req.vfs.write_file("/out/tag", tag)
            await asyncio.sleep(0)
        req.output.write_stderr(req.stdin)
        return Outcome(exit_code=int(tag))

    sb = Sandbox(backends=[FakeBackend("wasm", handler)], packs=[JS])
    specs = [Spec(lang="js", code=str(i), stdin=f"in{i}") for i in range(100)]
    results = await asyncio.gather(*(sb.run(s) for s in specs))
    for i, result in enumerate(results):
        assert result.stdout == f"{i};".encode() * 5
        assert result.stderr == f"in{i}".encode()
        assert dict(result.files) == {"tag": str(i).encode()}
        assert result.exit_code == i


def test_run_sync_and_its_misuse() -> None:
    sb = Sandbox(backends=[FakeBackend("wasm")], packs=[JS])
    assert sb.run_sync(Spec(lang="js", code="hello", args=["a", "b"])).exit_code == 2

    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match="await"):
            sb.run_sync(Spec(lang="js", code="x"))

    asyncio.run(inside_a_loop())


def test_close_is_idempotent_and_reaches_backends() -> None:
    backend = FakeBackend("wasm")
    with Sandbox(backends=[backend], packs=[JS]) as sb:
        pass
    sb.close()
    assert backend.closed == 2


def test_core_imports_no_heavy_dependency() -> None:
    code = (
        "import sys, playground.core, playground.packs\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('wasmtime', 'docker', 'PySide6', 'qasync', 'mcp')]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


async def test_limit_error_keeps_what_the_backend_knew() -> None:
    from playground.core import MemoryLimitExceeded

    def oom(req: Request) -> Outcome:
        req.output.write_stdout(b"allocating")
        raise MemoryLimitExceeded("killed by the OOM killer", outcome=Outcome(exit_code=137, peak_memory=4096))

    sb = Sandbox(backends=[FakeBackend("wasm", oom)], packs=[JS])
    with pytest.raises(MemoryLimitExceeded) as info:
        await sb.run(Spec(lang="js", code="x"))
    result = info.value.result
    assert result is not None
    assert (result.exit_code, result.usage.peak_memory, result.stdout) == (137, 4096, b"allocating")
