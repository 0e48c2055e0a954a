"""``recipes.embedded_sources``: the Node compatibility files become C arrays, byte for byte, and a table."""

from __future__ import annotations

import re

from backends.wasm.recipes import embedded_sources
from playground.resource_files import resource_path


def _arrays(header: str) -> dict[str, bytes]:
    found = re.findall(r"static const char node_compat_(\w+)\[\] = \{\n(.*?)\};", header, re.S)
    return {name: bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", body)) for name, body in found}


def test_every_byte_goes_in_and_only_the_core_stays_out_of_the_table() -> None:
    files = {"core": b"(function () {})\n", "path": bytes(range(1, 256)) + b"'\"\\\n", "url": b""}
    header = embedded_sources(files)
    assert _arrays(header) == {name: text + b"\0" for name, text in files.items()}
    assert '{"path", node_compat_path, sizeof node_compat_path - 1},' in header
    assert '{"url", node_compat_url, sizeof node_compat_url - 1},' in header and '"core"' not in header


def test_the_shipped_files_are_a_core_and_modules() -> None:
    names = {p.stem for p in resource_path("runtime_sources", "quickjs", "node_compat").iterdir()}
    assert {"core", "path", "events", "util", "assert", "buffer", "crypto", "url"} <= names
