"""The real runtimes (QuickJS, Lua, CPython) on our WASI, when installed in the user cache."""

from __future__ import annotations

import os

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, MemoryLimitExceeded, Sandbox, Spec, TimeLimitExceeded
from playground.core.limits import MiB
from playground.packs import javascript, lua, python

PACKS = [javascript.PACK, lua.PACK, python.PACK]
HELLO = {
    "javascript": 'console.log("hello", 6 * 7)',
    "lua": 'print("hello", 6 * 7)',
    "python": 'print("hello", 6 * 7)',
}
GROW = {
    "javascript": "let a = []; for (;;) a.push(new Array(1e6).fill(1.5));",
    "lua": 't = {} while true do t[#t + 1] = string.rep("x", 1 << 20) .. #t end',
    "python": "a = []\nwhile True: a.append(bytearray(1 << 20))",
}
SPIN = {"javascript": "for (;;) {}", "lua": "while true do end", "python": "while True: pass"}


@pytest.fixture(scope="module")
def real() -> Sandbox:
    backend = WasmBackend()  # the user's cache, where packaging/runtimes/install.py puts runtimes
    return Sandbox(backends=[backend], packs=PACKS)


def _need(sb: Sandbox, lang: str) -> None:
    reason = sb.backends["wasm"].unavailable_reason(sb.pack(lang))
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have every runtime installed: {reason}")
        pytest.skip(reason)


@pytest.mark.parametrize("lang", sorted(HELLO))
async def test_hello(real: Sandbox, lang: str) -> None:
    _need(real, lang)
    result = await real.run(Spec(lang=lang, code=HELLO[lang]))
    assert result.stdout.replace(b"\t", b" ") == b"hello 42\n", result.stderr


@pytest.mark.parametrize("lang", sorted(GROW))
async def test_out_of_memory(real: Sandbox, lang: str) -> None:
    _need(real, lang)
    with pytest.raises(MemoryLimitExceeded):
        await real.run(Spec(lang=lang, code=GROW[lang], limits=Limits(memory=64 * MiB)))


@pytest.mark.parametrize("lang", sorted(SPIN))
async def test_spin_is_stopped(real: Sandbox, lang: str) -> None:
    _need(real, lang)
    with pytest.raises(TimeLimitExceeded):
        await real.run(Spec(lang=lang, code=SPIN[lang], limits=Limits(wall_time=0.5)))


async def test_python_files_and_env(real: Sandbox) -> None:
    _need(real, "python")
    code = "import os\nprint(open('/in/a.txt').read(), sorted(os.environ.items()))\nopen('/out/r.txt', 'w').write('ok')"
    result = await real.run(Spec(lang="python", code=code, files={"a.txt": b"A"}, env={"K": "v"}))
    # The spec's environment and the pack's HOME (outside the tree, python.HOME); nothing from the host.
    assert result.stdout == b"A [('HOME', '/home/user'), ('K', 'v')]\n", result.stderr
    assert result.files["r.txt"] == b"ok"
