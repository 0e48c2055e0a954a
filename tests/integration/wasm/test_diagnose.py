"""``doctor`` lines of the Wasm backend: missing, corrupt and verified runtimes."""

from __future__ import annotations

import shutil
from pathlib import Path

from backends.wasm import WasmBackend
from backends.wasm.artifacts import INSTALL_HINT, artifact_path, cache_root
from playground.packs import lua


def test_missing_runtime_says_how_to_install(tmp_path: Path) -> None:
    lines = {d.name: d for d in WasmBackend(cache_dir=tmp_path, packs=[lua.PACK]).diagnostics()}
    runtime = lines["runtime lua.wasm"]
    assert not runtime.ok and runtime.required and "not installed" in runtime.detail
    assert runtime.hint == INSTALL_HINT
    assert lines["wasmtime"].ok


def test_corrupt_runtime_is_reported_and_verified_one_is_ok(tmp_path: Path) -> None:
    artifact = lua.PACK.wasm.module  # type: ignore[union-attr]
    assert artifact is not None
    real = artifact_path(artifact, cache_root())
    target = artifact_path(artifact, tmp_path)
    target.parent.mkdir(parents=True)
    if real.is_file():
        shutil.copyfile(real, target)
        good = {d.name: d for d in WasmBackend(cache_dir=tmp_path, packs=[lua.PACK]).diagnostics()}
        assert good["runtime lua.wasm"].ok and "verified" in good["runtime lua.wasm"].detail
    target.write_bytes(b"\0asm not really")
    bad = {d.name: d for d in WasmBackend(cache_dir=tmp_path, packs=[lua.PACK]).diagnostics()}
    line = bad["runtime lua.wasm"]
    assert not line.ok and artifact.sha256 in line.detail
