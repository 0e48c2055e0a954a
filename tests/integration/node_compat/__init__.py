"""Programs written for Node and what Node prints for them (``PROGRAMS``).

Each ``NAME.js`` (``.mjs``: an ES module) uses a part of Node's library that
the Wasm tier's JavaScript provides in ``node_compat/`` (QuickJS driver):
CommonJS, path, events, util, assert, Buffer, crypto, URL and url, os,
structuredClone, Intl in English, timers (on the real clock) and
timers/promises, string_decoder; ``NAME.expected`` is its stdout under Node
(Debian's nodejs, the Docker tier's node image), written by running it
there. Both tiers are tested against the same file: the Wasm tier must
print what Node prints (``tests/integration/wasm``), and Node must still
print it (``tests/integration/docker``), so an expectation is never only
ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).parent
#: (program file name, its source, Node's stdout for it).
PROGRAMS: Final = [
    (p.name, p.read_text(), p.with_suffix(".expected").read_bytes())
    for p in sorted(HERE.iterdir())
    if p.suffix in (".js", ".mjs")
]
