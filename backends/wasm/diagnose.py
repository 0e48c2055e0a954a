"""``playground doctor`` lines for the Wasm tier: wasmtime, the cache, each pinned runtime."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from backends.wasm.artifacts import INSTALL_HINT, ArtifactMismatch, ArtifactStore, artifact_path
from playground.core.backend import Diagnostic
from playground.core.errors import BackendUnavailable
from playground.core.pack import Artifact, Pack


def diagnose(root: Path, store: ArtifactStore, packs: Iterable[Pack], wasmtime_version: str) -> list[Diagnostic]:
    """Check wasmtime, the cache directory and every runtime the packs pin (hash-verified)."""
    lines = [Diagnostic(name="wasmtime", ok=True, detail=f"wasmtime-py {wasmtime_version} (Cranelift)")]
    lines.append(_cache_line(root))
    seen: dict[str, tuple[Artifact, list[str]]] = {}
    for pack in packs:
        spec = pack.wasm
        if spec is None:
            continue
        for artifact in (spec.module, spec.transformer):
            if artifact is not None:
                seen.setdefault(artifact.sha256, (artifact, []))[1].append(pack.name)
    for artifact, users in seen.values():
        lines.append(_runtime_line(root, store, artifact, users))
    return lines


def _cache_line(root: Path) -> Diagnostic:
    modules = root / "modules"
    size = sum(p.stat().st_size for p in modules.glob("*.cwasm")) if modules.is_dir() else 0
    if root.exists() and (root.stat().st_mode & 0o077):
        return Diagnostic(name="cache", ok=False, detail=f"{root} is readable by other users",
                          hint=f"chmod 700 {root}")
    writable = os.access(root if root.exists() else root.parent, os.W_OK)
    return Diagnostic(
        name="cache",
        ok=writable,
        detail=f"{root} (compiled modules: {size / (1 << 20):.1f} MiB)",
        hint="" if writable else f"make {root} writable, or set PLAYGROUND_CACHE_DIR",
    )


def _runtime_line(root: Path, store: ArtifactStore, artifact: Artifact, users: list[str]) -> Diagnostic:
    name = f"runtime {artifact.name}"
    for_whom = f"for {', '.join(users)}"
    if not artifact_path(artifact, root).is_file():
        return Diagnostic(name=name, ok=False, detail=f"not installed ({for_whom})", hint=INSTALL_HINT)
    try:
        store.verified_path(artifact, artifact.name)
    except ArtifactMismatch as exc:
        return Diagnostic(name=name, ok=False, detail=str(exc), hint=f"delete it and {INSTALL_HINT}")
    except BackendUnavailable as exc:
        return Diagnostic(name=name, ok=False, detail=str(exc), hint=INSTALL_HINT)
    return Diagnostic(name=name, ok=True, detail=f"sha256 {artifact.sha256[:12]}... verified ({for_whom})")
