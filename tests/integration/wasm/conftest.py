"""Fixtures for the Wasm backend tests: test guests compiled at test time, a sandbox per test.

The C guest (``guests/probe.c``) is compiled once per session with the
``ziglang`` package into a session temp dir; binaries are never committed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from playground.core import Artifact, Backend, Limits, Pack, Sandbox, SandboxError, Session, SessionConfig, WasmSpec

GUESTS = Path(__file__).parent / "guests"

#: The user's module is the code (the ``wasm`` pack).
WASM_PACK = Pack(name="wasm", aliases=("wasi",), wasm=WasmSpec(module=None))

#: Generous limits so only the limit under test trips.
TEST_LIMITS = Limits(wall_time=20.0, cpu_time=20.0)


def compile_c(source: Path, out: Path) -> bytes:
    cmd = [
        sys.executable, "-m", "ziglang", "cc", "-target", "wasm32-wasi", "-O2", "-s",
        "-Wl,-z,stack-size=262144", str(source), "-o", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        pytest.fail(f"cannot compile {source.name}:\n{proc.stderr}")
    return out.read_bytes()


@pytest.fixture(scope="session")
def probe_wasm(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    pytest.importorskip("ziglang")
    return compile_c(GUESTS / "probe.c", tmp_path_factory.mktemp("guests") / "probe.wasm")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def backend(cache_dir: Path) -> Iterator[WasmBackend]:
    wasm = WasmBackend(cache_dir=cache_dir)
    yield wasm
    wasm.close()


@pytest.fixture
def sandbox(backend: WasmBackend) -> Iterator[Sandbox]:
    with Sandbox(backends=[backend], packs=[WASM_PACK]) as sb:
        yield sb


def install_artifact(cache_dir: Path, name: str, data: bytes) -> Artifact:
    """Place ``data`` in the cache as an installed artifact and return its pin."""
    sha = hashlib.sha256(data).hexdigest()
    target = cache_dir / "artifacts" / sha / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return Artifact(name=name, sha256=sha, size=len(data))


def runtime_pack(artifact: Artifact, *, args: tuple[str, ...] = ("{main}", "{args}")) -> Pack:
    """A pack whose runtime is ``artifact`` (the probe guest stands in for an interpreter)."""
    return Pack(name="probe", wasm=WasmSpec(module=artifact, args=args, main_file="prog.txt", env={"PACK": "1"}))


__all__ = ["TEST_LIMITS", "WASM_PACK", "compile_c", "install_artifact", "runtime_pack"]


def require_runtime(backend: Backend, pack: Pack) -> None:
    """Skip unless ``pack``'s runtime is installed where ``backend`` looks; under CI (``CI`` set) fail instead
    (CI installs every runtime, so a missing one is a defect there, not a reason to skip)."""
    reason = backend.unavailable_reason(pack)
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have every runtime installed: {reason}")
        pytest.skip(reason)


def need_scientific(sb: Sandbox) -> None:
    """Prepare Python's scientific runtime on ``sb``: skipped where it cannot be set up, a failure on CI."""
    status = sb.variant_status("python")["scientific"]
    try:
        sb.prepare_pack(status.pack, lambda line: print(line, flush=True))
    except SandboxError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must be able to set up the scientific runtime: {exc}")
        pytest.skip(f"the scientific runtime cannot be set up here: {exc}")


def need_runtime(sb: Sandbox, lang: str) -> None:
    """Skip unless ``lang``'s runtime is installed in the user cache (``packaging/runtimes/install.py``)."""
    reason = sb.backends["wasm"].unavailable_reason(sb.pack(lang))
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture
async def open_sessions() -> AsyncIterator[list[Session]]:
    """Sessions a test opened with ``open_session``; closed after it."""
    sessions: list[Session] = []
    yield sessions
    for session in sessions:
        session.close()


async def open_session(sb: Sandbox, lang: str, opened: list[Session], **config: object) -> Session:
    """A session on ``sb`` (skipped without the runtime), remembered in ``opened`` to be closed."""
    need_runtime(sb, lang)
    session = await sb.new_session(lang, SessionConfig(**config))  # type: ignore[arg-type]
    opened.append(session)
    return session
