"""Does the editor's program look like a web server? A static check made before Run.

Run gives a program its wall-time limit and waits; a server never ends, so
Run would just time out after 10 s and teach nothing. Before a run the
controller asks ``server_evidence``: when the code registers a fetch
handler (``export default { fetch }``, ``serve(fn)``, which the Wasm
handler bridge serves) or calls a listening API (``listen(``,
``serve_forever``, ``http.server``...), the window says "this is a server:
use Serve" at once instead of running it. The check is a handful of regular
expressions over the source (microseconds for a classroom-sized file): it
can be fooled by a comment, so the window offers to run the program anyway.
"""

from __future__ import annotations

import re
from typing import Final

_JS: Final = (
    (re.compile(r"export\s+default\s*\{[^}]*\bfetch\b", re.S), "exports a fetch(request) handler"),
    (re.compile(r"(?<![\w.$])serve\s*\(\s*(?:async\s*)?(?:function\b|\(|\w+\s*=>|[A-Za-z_$][\w$]*\s*\))"),
     "calls serve(handler)"),
    (re.compile(r"\b(?:Deno|Bun)\.serve\s*\("), "calls Deno.serve / Bun.serve"),
    (re.compile(r"\bcreateServer\s*\("), "calls createServer()"),
    (re.compile(r"\.listen\s*\("), "calls listen()"),
)
_PYTHON: Final = (
    (re.compile(r"\bserve_forever\s*\("), "calls serve_forever()"),
    (re.compile(r"^\s*(?:from|import)\s+(?:http\.server|socketserver)\b", re.M), "uses http.server"),
    (re.compile(r"\bHTTPServer\s*\("), "creates an HTTPServer"),
    (re.compile(r"\bsocket\b.*\.listen\s*\(", re.S), "listens on a socket"),  # not turtle's listen()
    (re.compile(r"\b(?:uvicorn\.run|web\.run_app)\s*\(|\bflask\b.*\.run\s*\(", re.S | re.I),
     "starts a web framework's server"),
)
_BY_LANGUAGE: Final = {
    "javascript": _JS,
    "typescript": _JS,
    "node": _JS,
    "python": _PYTHON,
    "go": ((re.compile(r"\bhttp\.ListenAndServe(?:TLS)?\s*\(|\bnet\.Listen\s*\("), "listens on a port"),),
    "java": ((re.compile(r"\bHttpServer\.create\s*\(|\bnew\s+ServerSocket\s*\("), "listens on a port"),),
    "rust": ((re.compile(r"\bTcpListener::bind\s*\("), "listens on a port"),),
    "bash": ((re.compile(r"\b(?:nc|ncat|netcat)\b[^\n]*\s-\w*l|\bhttp\.server\b"), "listens on a port"),),
}


def server_evidence(language: str, code: str) -> str | None:
    """Why ``code`` looks like a server in ``language`` ("calls serve_forever()"), or None.

    Pure and cheap (a few regular expressions, no I/O): safe on the GUI thread.
    """
    for pattern, why in _BY_LANGUAGE.get(language, ()):
        if pattern.search(code):
            return why
    return None
