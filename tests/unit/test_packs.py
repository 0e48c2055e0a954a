"""The shipped packs: valid, unique, and pinned to exactly what the installer fetches."""

import json
from pathlib import Path

from playground.core import Sandbox, validate_packs
from playground.packs import ALL_PACKS
from playground.packs.runtimes import BY_MANIFEST_NAME

MANIFEST = Path(__file__).resolve().parents[2] / "resources" / "runtimes.json"


def test_packs_validate_together() -> None:
    names = validate_packs(ALL_PACKS)
    for expected in ("python", "py", "javascript", "js", "typescript", "ts", "lua", "wasm", "wasi"):
        assert expected in names


def test_pack_artifacts_match_the_installer_manifest() -> None:
    manifest = {r["name"]: r for r in json.loads(MANIFEST.read_text())["runtimes"]}
    assert set(manifest) == set(BY_MANIFEST_NAME)
    for name, artifact in BY_MANIFEST_NAME.items():
        entry = manifest[name]
        assert (artifact.name, artifact.sha256, artifact.size) == (entry["filename"], entry["sha256"], entry["size"])
    used = {p.wasm.module for p in ALL_PACKS if p.wasm and p.wasm.module} | {
        p.wasm.transformer for p in ALL_PACKS if p.wasm and p.wasm.transformer
    }
    assert used <= set(BY_MANIFEST_NAME.values())


def test_extensions_route_to_the_right_pack() -> None:
    sb = Sandbox(packs=ALL_PACKS)
    assert sb.pack_for_file("a.py").name == "python"
    assert sb.pack_for_file("a.js").name == "javascript"
    assert sb.pack_for_file("a.ts").name == "typescript"
    assert sb.pack_for_file("a.lua").name == "lua"
    assert sb.pack_for_file("a.wasm").name == "wasm"


def test_every_backend_spec_says_how_fast_it_starts() -> None:
    for pack in ALL_PACKS:
        for spec in (pack.wasm, pack.docker):
            if spec is not None:
                assert 0 < spec.typical_start < 5, pack.name
