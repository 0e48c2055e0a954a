"""Runtime artifacts: lookup, hash verification, the compiled-module cache on disk."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from backends.wasm import INSTALL_HINT, ArtifactMismatch, WasmBackend, artifacts
from playground.core import BackendUnavailable, Limits, Sandbox, Spec

from .conftest import install_artifact, runtime_pack


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_runtime_pack_gets_program_file_argv_and_env(cache_dir: Path, probe_wasm: bytes) -> None:
    pack = runtime_pack(install_artifact(cache_dir, "probe.wasm", probe_wasm), args=("args", "{main}", "{args}"))
    with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack]) as sb:
        result = await sb.run(Spec(lang="probe", code="program text", args=["u1", "u2"]))
        assert result.stdout == b"probe\nargs\n/work/prog.txt\nu1\nu2\n"
        shown = await sb.run(Spec(lang="probe", code="program text", args=[]))
        assert shown.exit_code == 0
    pack_cat = runtime_pack(install_artifact(cache_dir, "probe.wasm", probe_wasm), args=("cat", "{main}"))
    with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack_cat]) as sb:
        assert (await sb.run(Spec(lang="probe", code="print(1)"))).stdout == b"print(1)"


async def test_program_file_counts_against_the_quota(cache_dir: Path, probe_wasm: bytes) -> None:
    from playground.core import FSQuotaExceeded

    pack = runtime_pack(install_artifact(cache_dir, "probe.wasm", probe_wasm))
    with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack]) as sb, pytest.raises(FSQuotaExceeded):
        await sb.run(Spec(lang="probe", code="x" * 2000, limits=Limits(fs_quota=1000)))


def test_missing_runtime_says_how_to_install(cache_dir: Path, probe_wasm: bytes) -> None:
    artifact = install_artifact(cache_dir / "elsewhere", "probe.wasm", probe_wasm)
    backend = WasmBackend(cache_dir=cache_dir)
    reason = backend.unavailable_reason(runtime_pack(artifact))
    assert reason == f"runtime probe is not installed; {INSTALL_HINT}"
    assert INSTALL_HINT == "run: playground setup"


async def test_hash_mismatch_is_a_clear_error(cache_dir: Path, probe_wasm: bytes) -> None:
    artifact = install_artifact(cache_dir, "probe.wasm", probe_wasm)
    path = cache_dir / "artifacts" / artifact.sha256 / "probe.wasm"
    path.write_bytes(probe_wasm + b"tampered")
    sandbox = Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[runtime_pack(artifact)])
    with sandbox as sb, pytest.raises(ArtifactMismatch) as info:
        await sb.run(Spec(lang="probe", code=""))
    message = str(info.value)
    assert str(path) in message and artifact.sha256 in message
    assert isinstance(info.value, BackendUnavailable)


async def test_module_cache_modes_and_corrupt_entry_rebuilt(cache_dir: Path, probe_wasm: bytes) -> None:
    pack = runtime_pack(install_artifact(cache_dir, "probe.wasm", probe_wasm), args=("hello",))
    progress: list[tuple[str, float]] = []
    backend = WasmBackend(cache_dir=cache_dir)
    with Sandbox(backends=[backend], packs=[pack]) as sb:
        assert (
            await sb.run(Spec(lang="probe", code=""), on_progress=lambda m, f: progress.append((m, f)))
        ).exit_code == 0
    assert progress and progress[0][1] == -1.0 and "compiling probe.wasm" in progress[0][0]
    entries = list((cache_dir / "modules").glob("*.cwasm"))
    assert len(entries) == 1
    assert _mode(cache_dir / "modules") == 0o700
    assert _mode(entries[0]) == 0o600
    blob = bytearray(entries[0].read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    entries[0].write_bytes(bytes(blob))
    rebuilt: list[tuple[str, float]] = []
    with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack]) as sb:
        result = await sb.run(Spec(lang="probe", code=""), on_progress=lambda m, f: rebuilt.append((m, f)))
    assert result.stdout == b"hello world\n"
    assert rebuilt, "a corrupt entry must be recompiled"
    assert entries[0].read_bytes() != bytes(blob)
    warm: list[tuple[str, float]] = []
    with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack]) as sb:
        await sb.run(Spec(lang="probe", code=""), on_progress=lambda m, f: warm.append((m, f)))
    assert warm == []


async def test_an_entry_of_the_earlier_format_is_checked_and_rewritten(cache_dir: Path, probe_wasm: bytes) -> None:
    """Entries used to carry a header (magic, SHA-256) before wasmtime's bytes; now those bytes are the
    file (mapped, not read) and the hash is beside it. An old entry is reused once checked, a corrupt
    one rebuilt."""
    import hashlib

    pack = runtime_pack(install_artifact(cache_dir, "probe.wasm", probe_wasm), args=("hello",))
    with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack]) as sb:
        await sb.run(Spec(lang="probe", code=""))
    (entry,) = (cache_dir / "modules").glob("*.cwasm")
    digest = entry.with_name(entry.name + ".sha256")
    payload = entry.read_bytes()
    assert payload[:4] == b"\x7fELF" and digest.read_text() == hashlib.sha256(payload).hexdigest()
    for corrupt in (False, True):
        old = bytearray(b"SPCWASM1" + hashlib.sha256(payload).digest() + payload)
        if corrupt:
            old[len(old) // 2] ^= 0xFF
        entry.write_bytes(bytes(old))
        digest.unlink()
        progress: list[tuple[str, float]] = []
        with Sandbox(backends=[WasmBackend(cache_dir=cache_dir)], packs=[pack]) as sb:
            result = await sb.run(
                Spec(lang="probe", code=""), on_progress=lambda m, f, seen=progress: seen.append((m, f))
            )
        assert result.stdout == b"hello world\n"
        assert bool(progress) is corrupt, progress  # compiled again only when the old entry was corrupt
        assert entry.read_bytes()[:4] == b"\x7fELF" and _mode(entry) == _mode(digest) == 0o600
        assert digest.read_text() == hashlib.sha256(entry.read_bytes()).hexdigest()


async def test_closed_backend_refuses_and_close_is_idempotent(cache_dir: Path, probe_wasm: bytes) -> None:
    backend = WasmBackend(cache_dir=cache_dir)
    backend.close()
    backend.close()
    from .conftest import WASM_PACK

    assert backend.unavailable_reason(WASM_PACK) == "wasm backend is closed"
    with Sandbox(backends=[backend], packs=[WASM_PACK]) as sb, pytest.raises(BackendUnavailable):
        await sb.run(Spec(lang="wasm", code=probe_wasm))


async def test_a_runtime_installed_shows_at_once_and_one_removed_within_present_for(
    cache_dir: Path, probe_wasm: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Routing asks ``missing_reason`` before every run: a miss is never remembered (an install shows at the
    next call), a hit is for ``PRESENT_FOR``; a run that meets a file removed meanwhile fails as not installed."""
    monkeypatch.setattr(artifacts, "PRESENT_FOR", 0.3)
    artifact = install_artifact(cache_dir / "elsewhere", "probe.wasm", probe_wasm)
    backend = WasmBackend(cache_dir=cache_dir)
    pack = runtime_pack(artifact, args=("hello",))
    assert backend.unavailable_reason(pack) == f"runtime probe is not installed; {INSTALL_HINT}"
    install_artifact(cache_dir, "probe.wasm", probe_wasm)
    assert backend.unavailable_reason(pack) is None
    with Sandbox(backends=[backend], packs=[pack]) as sb:
        assert (await sb.run(Spec(lang="probe", code=""))).stdout == b"hello world\n"
        (cache_dir / "artifacts" / artifact.sha256 / "probe.wasm").unlink()
        with pytest.raises(BackendUnavailable, match="not installed"):
            await sb.run(Spec(lang="probe", code=""))  # still taken as there: the run's own look finds it gone
        time.sleep(0.3)
        assert backend.unavailable_reason(pack) == f"runtime probe is not installed; {INSTALL_HINT}"
