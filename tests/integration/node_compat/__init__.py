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
from typing import Final, NamedTuple

HERE: Final = Path(__file__).parent


class NodeProgram(NamedTuple):
    """A program file's name and source, its stdin, and Node's stdout for it."""

    name: str
    code: str
    stdin: bytes
    expected: bytes


#: What the programs that read ``process.stdin`` get on it.
STDIN: Final = b"3 4\nline two\n"
#: Programs that read ``process.stdin`` the ways Node programs do: (name, source, Node's stdout with ``STDIN``).
_READING_STDIN: Final = [
    (
        "stdin-data-end.js",  # the template of HackerRank's JavaScript problems
        "process.stdin.resume();\nprocess.stdin.setEncoding('ascii');\nlet inputStdin = '';\n"
        "process.stdin.on('data', (data) => { inputStdin += data; });\n"
        "process.stdin.on('end', () => {\n"
        "  const [a, b] = inputStdin.split(/\\s+/).map(Number);\n"
        "  console.log(a + b);\n"
        "});\n"
        "console.log('sync part first');\n",
        b"sync part first\n7\n",
    ),
    (
        "stdin-readable.js",
        "let input = '';\nprocess.stdin.on('readable', () => { let c; while ((c = process.stdin.read()) !== null) "
        "input += c; });\nprocess.stdin.on('end', () => console.log(JSON.stringify(input), typeof input));\n",
        b'"3 4\\nline two\\n" string\n',
    ),
    (
        "stdin-async-iterator.js",
        "(async () => { const chunks = []; for await (const c of process.stdin) chunks.push(c);\n"
        "  console.log(Buffer.concat(chunks).toString().toUpperCase().trim()); })();\n",
        b"3 4\nLINE TWO\n",
    ),
    (
        "stdin-readfilesync.js",  # competitive programming's way: all of stdin as a Buffer, then its text
        "const lines = require('fs').readFileSync(0).toString().trim().split('\\n');\n"
        "const [a, b] = lines[0].split(' ').map(Number);\n"
        "console.log(a * b, lines.length, Buffer.isBuffer(require('fs').readFileSync('/dev/stdin')));\n",
        b"12 2 true\n",
    ),
    (
        "stdin-pipe.js",
        "process.stdin.pipe(process.stdout);\nprocess.stdin.on('end', () => console.log('[end]'));\n",
        b"3 4\nline two\n[end]\n",
    ),
]
#: Each ``NAME.js`` here with no stdin, and the programs that read ``STDIN``. ``test_js_node_compat`` holds
#: the Wasm tier to them, ``test_node_compat_docker`` holds Node to them.
PROGRAMS: Final = [
    *(NodeProgram(p.name, p.read_text(), b"", p.with_suffix(".expected").read_bytes())
      for p in sorted(HERE.iterdir()) if p.suffix in (".js", ".mjs")),
    *(NodeProgram(name, code, STDIN, expected) for name, code, expected in _READING_STDIN),
]  # fmt: skip
