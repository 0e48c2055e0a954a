"""The pinned CPython SIGINT words are what the runtime binary itself says they are.

``derive`` (the maintainers' tool ``packaging/runtimes/derive_cpython_signals.py``)
finds them from the interpreter's behaviour (memory snapshots around
``trip_signal``); a pin that differs would make the host write into the
wrong words, so this test guards ``PINNED`` whenever the runtime changes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from backends.wasm import WasmBackend, cpython_signals
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.cpython_signals import SignalWords
from backends.wasm.engine import shared_engine
from backends.wasm.session import signal_words_of
from playground.core import Artifact, Pack, WasmSpec
from playground.packs import python

TOOL = Path(__file__).resolve().parents[3] / "packaging" / "runtimes" / "derive_cpython_signals.py"


def load_tool() -> ModuleType:
    """The maintainers' script, loaded from its file (``packaging`` is no package: it would shadow PyPI's)."""
    name = "derive_cpython_signals"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TOOL)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_pinned_words_match_the_runtime() -> None:
    backend = WasmBackend(packs=[python.PACK])
    spec = python.PACK.wasm
    assert spec is not None and spec.module is not None
    reason = backend.unavailable_reason(python.PACK)
    if reason is not None:
        pytest.skip(reason)
    path = ArtifactStore(backend.cache_dir).verified_path(spec.module, "python")
    module = backend.modules.runtime(spec.module.sha256, path, label=spec.module.name, progress=None)
    derived = load_tool().derive(shared_engine(), module)
    assert cpython_signals.words_for(spec.module.sha256) == derived
    assert signal_words_of(python.PACK) == derived


def test_another_binary_gets_no_words() -> None:
    """Words are keyed by the runtime's SHA-256: any other module is never written to."""
    spec = python.PACK.wasm
    assert spec is not None and spec.module is not None
    other = Artifact(name=spec.module.name, sha256="0" * 64, size=spec.module.size)
    pack = Pack(name="python", extensions=(".py",), wasm=WasmSpec(module=other, session=python.REPL))
    assert signal_words_of(pack) is None


def test_find_words_refuses_ambiguous_probes() -> None:
    page = bytearray(8192)
    quiet = bytes(page)
    page[64:68] = (1).to_bytes(4, "little")
    noisy = bytes(page)
    messages = [(b"I12 16 20 0 1692", quiet)] + [
        message
        for _ in range(4)
        for signum in (2, 10)
        for message in ((b"B%d" % signum, quiet), (bytes([signum]), noisy), (b"A%d" % signum, quiet))
    ]
    tool = load_tool()
    # One raised word, shared by both signals: no SIGINT-only word, so no answer rather than a guess.
    with pytest.raises(tool.DerivationFailed, match="not unique"):
        tool.find_words(messages)
    with pytest.raises(tool.DerivationFailed):
        tool.find_words(messages[:-1])


def test_signal_words_refuse_bad_addresses() -> None:
    with pytest.raises(ValueError):
        SignalWords(tripped=6, pending=(8,), none=12, int_type=16, inert_values=(0,))
    with pytest.raises(ValueError):
        SignalWords(tripped=0, pending=(), none=12, int_type=16, inert_values=(0,))


def test_the_driver_handles_the_flush_signal() -> None:
    """The host raises ``FLUSH_SIGNAL``; the Python REPL driver must install its handler on that number."""
    from backends.wasm.session import DRIVER_DIR

    driver = (DRIVER_DIR / "repl.py").read_text()
    assert f"signal.signal({cpython_signals.FLUSH_SIGNAL}, on_flush)" in driver


async def test_words_outside_the_memory_are_dropped_not_written(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A wrong pin cannot write outside the guest's memory: the words are dropped, the eval runs on."""
    from playground.core import Sandbox

    spec = python.PACK.wasm
    assert spec is not None and spec.module is not None
    backend = WasmBackend(packs=[python.PACK])
    reason = backend.unavailable_reason(python.PACK)
    if reason is not None:
        pytest.skip(reason)
    far = 0x7FFF_FFF0
    bogus = SignalWords(tripped=far, pending=(far - 8,), none=16, int_type=20, inert_values=(0,), flush=far - 16)
    monkeypatch.setitem(cpython_signals.PINNED, spec.module.sha256, bogus)
    sandbox = Sandbox(backends=[backend], packs=[python.PACK])
    async with await sandbox.new_session("python") as session:
        eval_task = asyncio.create_task(session.eval("import time\nfor _ in range(20): time.sleep(0.01)\n'ran on'"))
        await asyncio.sleep(0.1)
        assert session.interrupt() is True
        result = await asyncio.wait_for(eval_task, 10)
        assert (result.exit_code, result.stdout, result.restarted) == (0, b"'ran on'\n", False)
        assert (await session.eval("1 + 1")).stdout == b"2\n"
    assert "signal words lie outside this instance's memory" in caplog.text
    sandbox.close()
