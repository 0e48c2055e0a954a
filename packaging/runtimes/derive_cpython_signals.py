#!/usr/bin/env python3
"""Maintainers' tool: derive the CPython WASI runtime's SIGINT words and check them against the pin.

    .venv/bin/python packaging/runtimes/derive_cpython_signals.py

The host interrupts a Python eval by setting the interpreter's own signal
flags (``backends/wasm/cpython_signals.py``, which holds the pinned
addresses per runtime SHA-256 and the code that writes them). This finds
the addresses again from the binary's behaviour, not from its layout, so
run it after changing the Python runtime and update ``PINNED`` when it
says the pin differs (``tests/integration/wasm/test_cpython_signals.py``
runs ``derive`` and fails on a stale pin):

1. a probe script (``_PROBE``) sets a wakeup fd on the session control
   channel, so that ``trip_signal`` writes a byte to the host right after
   it has set every flag; the host snapshots linear memory at that write
   and at control writes just before and just after;
2. the words that read 0 before, 1 during and 0 after, in every one of
   several repetitions (at different C stack depths and heap states), are
   the flags; repeating with ``FLUSH_SIGNAL`` separates each signal's own
   ``tripped`` word (the only one that differs) from the shared ones;
3. the word after each ``tripped`` must hold the address of that signal's
   handler (CPython's ``{tripped, func}`` pair), which the probe reports.

Like the other scripts here it imports the installed project (``pip
install -e .``); nothing in the application imports it.
"""

from __future__ import annotations

import array
from collections.abc import Sequence
from typing import Final

import wasmtime

from backends.wasm import runner
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.backend import WasmBackend
from backends.wasm.channel import SessionChannel
from backends.wasm.cpython_signals import FLUSH_SIGNAL, SignalWords, words_for
from backends.wasm.engine import WasmEngine, shared_engine
from backends.wasm.state import RunControl, RunState
from playground.core.output import OutputCapture
from playground.core.vfs import VFS
from playground.packs.python import PACK


class DerivationFailed(Exception):
    """The probe did not single out the signal words (the runtime is not a CPython we understand)."""


_REPEATS: Final = 4

#: The probe (``python -c``): control writes ``I<ids of SIGINT's and FLUSH_SIGNAL's handlers, None, int; SIG_DFL,
#: SIG_IGN>``,
#: then per round ``B<sig>``, the wakeup byte (written by trip_signal itself, after the flags),
#: ``A<sig>``. ``nest`` varies the C stack depth.
_PROBE: Final = f"""
import os, signal, _signal
c = os.open("/.session/control", os.O_WRONLY)
os.set_blocking(c, False)
def nest(depth, fn):
    return fn() if depth == 0 else list(map(lambda _: nest(depth - 1, fn), [0]))[0]
def once(sig):
    signal.set_wakeup_fd(c)
    os.write(c, b"B%d" % sig)
    try:
        signal.raise_signal(sig)
        for _ in range(3):
            pass
    except KeyboardInterrupt:
        pass
    signal.set_wakeup_fd(-1)
    os.write(c, b"A%d" % sig)
signal.signal(signal.SIGINT, signal.default_int_handler)
flush = lambda *args: None
signal.signal({FLUSH_SIGNAL}, flush)
os.write(c, b"I%d %d %d %d %d %d" % (id(signal.default_int_handler), id(flush), id(None), id(int), _signal.SIG_DFL,
                                    _signal.SIG_IGN))
for round in range({_REPEATS}):
    junk = [object() for _ in range(round * 300)]
    nest(round * 3, lambda: once(2))
    nest(round * 2 + 1, lambda: once({FLUSH_SIGNAL}))
"""


def _words(snapshot: bytes) -> array.array[int]:
    values = array.array("I")
    values.frombytes(snapshot[: len(snapshot) // 4 * 4])
    return values


def _raised(before: bytes, during: bytes, after: bytes) -> set[int]:
    """Addresses of aligned words that are 0 before and after and 1 during (page-wise first: fast)."""
    page = 4096
    found: set[int] = set()
    size = min(len(before), len(during), len(after))
    b, d, a = _words(before), _words(during), _words(after)
    for start in range(0, size, page):
        end = min(size, start + page)
        if before[start:end] == during[start:end] == after[start:end]:
            continue
        for index in range(start // 4, end // 4):
            if d[index] == 1 and b[index] == 0 and a[index] == 0:
                found.add(index * 4)
    return found


def find_words(messages: Sequence[tuple[bytes, bytes]]) -> SignalWords:
    """Single out the words from the probe's control writes, each with the memory snapshot taken at it.

    Raises:
        DerivationFailed: the writes are not the probe's, or the words are not unique.
    """
    if not messages or not messages[0][0].startswith(b"I"):
        raise DerivationFailed("the probe did not report its handler")
    try:
        handler, flush_handler, none, int_type, *inert_values = (int(value) for value in messages[0][0][1:].split())
    except ValueError:
        raise DerivationFailed(f"unexpected probe report {messages[0][0]!r}") from None
    rounds = messages[1:]
    if len(rounds) != 3 * 2 * _REPEATS:
        raise DerivationFailed(f"the probe wrote {len(rounds)} messages, expected {6 * _REPEATS}")
    common: dict[int, set[int]] = {}
    for i in range(0, len(rounds), 3):
        (tag_b, before), (tag_d, during), (tag_a, after) = rounds[i : i + 3]
        signum = int(tag_b[1:])
        if tag_d != bytes([signum]) or tag_a != b"A%d" % signum:
            raise DerivationFailed(f"unexpected probe messages {tag_b!r} {tag_d!r} {tag_a!r}")
        raised = _raised(before, during, after)
        common[signum] = raised if signum not in common else common[signum] & raised
    sigint, other = common.get(2, set()), common.get(FLUSH_SIGNAL, set())
    own, own_flush, shared = sigint - other, other - sigint, sigint & other
    if len(own) != 1 or len(own_flush) != 1 or len(shared) != 3:
        raise DerivationFailed(
            f"signal words not unique: SIGINT-only {sorted(own)}, signal {FLUSH_SIGNAL}-only {sorted(own_flush)}, "
            f"shared {sorted(shared)}"
        )
    tripped, flush = own.pop(), own_flush.pop()
    last = _words(rounds[-1][1])
    if last[tripped // 4 + 1] != handler or last[flush // 4 + 1] != flush_handler:
        raise DerivationFailed("the word after a signal's flag does not hold its handler")
    return SignalWords(
        tripped=tripped, pending=tuple(sorted(shared)), none=none, int_type=int_type,
        inert_values=tuple(inert_values), flush=flush,
    )  # fmt: skip


def derive(engine: WasmEngine, module: wasmtime.Module) -> SignalWords:
    """Run the probe in ``module`` (a CPython WASI) and return its SIGINT words. About 0.3 s.

    Raises:
        DerivationFailed: the probe failed or did not single out the words.
    """

    class Probe(SessionChannel):
        """Keeps every control write together with a copy of linear memory at that moment."""

        messages: list[tuple[bytes, bytes]]
        run: RunState | None = None

        def attach(self, run: RunState) -> None:
            super().attach(run)
            self.run = run
            self.messages = []

        def write_control(self, data: bytes) -> int:
            assert self.run is not None
            self.messages.append((bytes(data), bytes(self.run.memory.view)))
            return len(data)

    control = RunControl(wall_limit=60.0, cpu_limit=None)
    probe = Probe(control, memory_limit=None, ticker=engine, on_ready=lambda _: None)
    output = OutputCapture(1 << 16)
    launch = runner.Launch(
        module=module, argv=["python", "-B", "-c", _PROBE], env={}, stdin=b"",
        vfs=VFS(fs_quota=1 << 20, max_files=16), output=output, memory_limit=None, wall_limit=60.0,
        cpu_limit=None, session=probe,
    )  # fmt: skip
    outcome = runner.run(engine, launch, control)
    if outcome.exit_code != 0:
        text = output.stderr().decode("utf-8", "replace")[-2000:]
        raise DerivationFailed(f"the probe exited with {outcome.exit_code}: {text}")
    return find_words(probe.messages)


def main() -> None:
    spec = PACK.wasm
    assert spec is not None and spec.module is not None
    backend = WasmBackend(packs=[PACK])
    path = ArtifactStore(backend.cache_dir).verified_path(spec.module, PACK.name)
    module = backend.modules.runtime(spec.module.sha256, path, label=spec.module.name, progress=None)
    words = derive(shared_engine(), module)
    print(f'"{spec.module.sha256}": {words!r}')
    pinned = words_for(spec.module.sha256)
    print("matches the pin" if pinned == words else "differs from the pin: update PINNED")


if __name__ == "__main__":
    main()
