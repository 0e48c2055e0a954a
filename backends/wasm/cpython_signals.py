"""Ctrl-C for CPython under WASI: the host sets the interpreter's own signal flags.

CPython on WASI gets no signals and exports nothing to call, but its eval
loop still polls the flags its C signal handler sets: a pending-signal
word the loop checks at every backward jump and call, and the per-signal
``tripped`` word that makes it run the Python-level handler (for SIGINT,
the REPL driver's, which raises ``KeyboardInterrupt``). The host stops a
running eval in place by setting those 32-bit words to 1 itself, on the
guest's own thread at a safe point (the epoch callback, or inside a
blocking host call), exactly as ``trip_signal`` would have. Nothing runs
per instruction: the cost while nobody presses Ctrl-C is zero.

Where the words live is a fact about one binary (wasm linear memory has
no address randomisation: ``_PyRuntime`` sits at a fixed offset), so the
addresses are pinned here by the runtime's SHA-256 next to the artifact
pin, and are used only for a module with that hash: a different binary
gets no writes at all (its sessions restart on Ctrl-C instead). The
maintainers' tool ``packaging/runtimes/derive_cpython_signals.py`` finds
them again from the binary's behaviour, not from its layout (a probe that
snapshots linear memory around ``trip_signal``), and the test suite checks
the pin against it.

``FLUSH_SIGNAL`` (63) is how the host asks the REPL driver to flush its
output while an input runs (so a slow loop's prints appear as they happen):
the same words, another handler.

Regenerate after changing the Python runtime::

    .venv/bin/python packaging/runtimes/derive_cpython_signals.py
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from backends.wasm.memory import GuestMemory

_WORD: Final = struct.Struct("<I")
#: The head of a CPython 3.12 int on wasm32: refcount, type, lv_tag, first digit.
_LONG_HEAD: Final = struct.Struct("<IIII")


@dataclass(frozen=True, slots=True)
class SignalWords:
    """Addresses (in linear memory) of the 32-bit words ``trip_signal(SIGINT)`` sets to 1.

    ``tripped`` is SIGINT's own flag (``flush`` that of ``FLUSH_SIGNAL``), followed by its handler slot;
    ``pending`` the interpreter-wide ones (``is_tripped``, the runtime's
    signals-pending flag and the main interpreter's eval breaker), in
    address order.

    Like ``PyErr_SetInterruptEx``, the host trips nothing when SIGINT has
    no Python handler: NULL, ``None`` (address ``none``), or an ``int``
    (type object at ``int_type``) equal to one of ``inert_values`` (SIG_DFL,
    SIG_IGN; wasi-libc's SIG_IGN is a function index, not 1). Code that
    ignores SIGINT then runs on, and the caller cancels it, as SIG_DFL
    would have killed a real process.
    """

    tripped: int
    pending: tuple[int, ...]
    none: int
    int_type: int
    inert_values: tuple[int, ...]
    #: signal 63's (``FLUSH_SIGNAL``) own ``tripped`` word: the REPL driver's "flush your output now" (see ``channel``).
    flush: int = 0

    def __post_init__(self) -> None:
        for address in (self.tripped, *self.pending, self.none, self.int_type, self.flush):
            if address <= 0 or address % 4:
                raise ValueError(f"signal word address {address} is not a positive aligned offset")

    @property
    def addresses(self) -> tuple[int, ...]:
        return (self.tripped, *self.pending)

    def trip(self, memory: GuestMemory, *, flush: bool = False) -> bool | None:
        """Raise SIGINT (or, with ``flush``, ``FLUSH_SIGNAL``) in the run's linear memory (guest thread only).

        Returns True when set; False when there is no memory yet (try
        later); None when the signal has no Python handler (nothing to do).

        Raises:
            Fault: an address lies outside the memory (not this binary).
        """
        if not memory.resolved:
            return False
        own = self.flush if flush else self.tripped
        if self._no_python_handler(memory, own):
            return None
        for address in (own, *self.pending):
            memory.pack(_WORD, address, 1)
        return True

    def _no_python_handler(self, memory: GuestMemory, tripped: int) -> bool:
        (handler,) = memory.unpack(_WORD, tripped + 4)
        if handler in (0, self.none):
            return True
        _refcount, kind, tag, digit = memory.unpack(_LONG_HEAD, handler)
        if kind != self.int_type:
            return False
        # CPython 3.12 ints: ``lv_tag`` = digit count << 3 | sign (1: zero), then 30-bit digits.
        value = 0 if tag == 1 else digit if tag == 8 else None
        return value in self.inert_values


#: CPython 3.12.0 WASI (``python-3.12.0.wasm``, resources/runtimes.json), derived with
#: ``packaging/runtimes/derive_cpython_signals.py``.
PINNED: Final[Mapping[str, SignalWords]] = {
    "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763": SignalWords(
        tripped=3825048, pending=(3825560, 3825796, 3866492), none=3798888, int_type=3789668, inert_values=(0, 1692),
        flush=3825536,
    ),
}


def words_for(sha256: str) -> SignalWords | None:
    """The pinned words of the runtime with this SHA-256, or None (then it cannot be interrupted)."""
    return PINNED.get(sha256)


#: The signal the host raises to make the REPL driver flush (resources/drivers/repl.py installs the
#: handler): a real-time number that nothing in a WASI CPython uses, so no user handler is hit by it.
FLUSH_SIGNAL: Final = 63
