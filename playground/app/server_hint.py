"""Does the editor's program look like a web server? A static check made before Run.

Run gives a program its wall-time limit and waits; a server never ends, so
Run would just time out after 10 s and teach nothing. Before a run the
controller asks ``server_evidence``: when the code registers a fetch
handler (``export default { fetch }``, ``serve(fn)``, which the Wasm
handler bridge serves) or calls a listening API (``listen(``,
``serve_forever``, ``http.server``...), the window says "this is a server:
use Serve" at once instead of running it. The signs are the pack's data
(``Editing.server_signs``): a handful of regular expressions over the
source (microseconds for a classroom-sized file). They can be fooled by a
comment, so the window offers to run the program anyway.
"""

from __future__ import annotations

import functools
import re

from playground.core import Editing


@functools.lru_cache(maxsize=64)
def _compiled(signs: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), why) for pattern, why in signs)


def server_evidence(editing: Editing, code: str) -> str | None:
    """Why ``code`` looks like a server ("calls serve_forever()") by its pack's signs, or None.

    Pure and cheap (a few regular expressions, no I/O): safe on the GUI thread.
    """
    for pattern, why in _compiled(editing.server_signs):
        if pattern.search(code):
            return why
    return None
