"""``playground doctor`` lines for the Wasm tier: wasmtime, the cache, each pinned runtime (variants too)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from backends.wasm.artifacts import INSTALL_HINT, ArtifactMismatch, ArtifactStore, artifact_path
from playground.core.backend import Diagnostic
from playground.core.errors import BackendUnavailable
from playground.core.pack import Artifact, Pack

#: How to get a runtime only a variant needs (else fetched and compiled when a program first needs it).
VARIANT_HINT = "playground setup --scientific (or let the first program that imports numpy set it up)"


def diagnose(
    root: Path,
    store: ArtifactStore,
    packs: Iterable[Pack],
    wasmtime_version: str,
    compiled: Callable[[str], bool] = lambda sha256: True,
) -> list[Diagnostic]:
    """Check wasmtime, the cache directory and every runtime the packs pin (hash-verified).

    A runtime only a variant uses (Python's scientific runtime) is optional:
    missing, it warns (it is fetched when a program first needs it).
    ``compiled`` says whether a module is compiled for this machine yet.
    """
    lines = [Diagnostic(name="wasmtime", ok=True, detail=f"wasmtime-py {wasmtime_version} (Cranelift)")]
    lines.append(_cache_line(root))
    seen: dict[str, tuple[Artifact, list[str]]] = {}
    for pack in packs:
        spec = pack.wasm
        if spec is None:
            continue
        for label, runtime in ((pack.name, spec), *((f"{pack.name} ({v.name})", v.wasm) for v in spec.variants)):
            artifacts = [runtime.module, runtime.transformer, *(m.artifact for m in runtime.mounts)]
            for artifact in artifacts:
                if artifact is not None and label not in seen.setdefault(artifact.sha256, (artifact, []))[1]:
                    seen[artifact.sha256][1].append(label)
    # A runtime with a snapshot is never compiled whole: its snapshot's code module is (the snapshot's line).
    modules = {a.sha256 for p in packs if p.wasm for w in (p.wasm, *(v.wasm for v in p.wasm.variants))
               for a in (w.module if w.snapshot is None else None, w.transformer) if a is not None}  # fmt: skip
    for artifact, users in seen.values():
        line = _runtime_line(root, store, artifact, users)
        if all("(" in user for user in users):  # used by variants only
            line = replace(line, required=False, hint=line.hint and VARIANT_HINT)
        if line.ok and artifact.sha256 in modules and not compiled(artifact.sha256):
            line = replace(line, detail=line.detail + "; not compiled for this machine yet (the first use compiles it)")
        lines.append(line)
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
