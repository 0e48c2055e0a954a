"""A worker process prepares the next run's instance while its parent hands the run over (``runner.prepare``).

The worker's own code (``procworker._Worker``) runs here, on the real
runtimes, with its messages written to a buffer we read back, so the
tests can see the backend's prepared instance: each run after the first
starts from the one made after the run before (``Prepared.taken``), and
everything a run has is still its own: nothing of an earlier run, its own
arguments, environment, stdin and files, and its own limits (memory,
including the image's pages, wall and CPU time from its own start). A run
that does not fit the prepared instance (another memory limit, another
language, cancelled before it started) gets a fresh one, as before.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from typing import Any

import pytest

from backends.wasm import WasmBackend, procwire, procworker
from backends.wasm.artifacts import cache_root
from backends.wasm.runner import Prepared
from playground.core import Limits, Spec
from playground.core.limits import DEFAULT_LIMITS, MiB
from playground.core.output import Stream
from playground.core.pack import Pack
from playground.core.sandbox import _seed
from playground.core.vfs import VFS
from playground.packs import javascript, lua, python
from tests.integration.wasm.conftest import require_runtime
from tests.integration.wasm.test_snapshot import ISOLATION, ISOLATION_PLAIN

CLEAN = b"seen False None None None False False None False False False\n"
PACKS = {pack.name: pack for pack in (python.PACK, javascript.PACK, lua.PACK)}


class _Here:
    """A worker process's code in this process: its messages go to a buffer that ``run`` reads back."""

    def __init__(self) -> None:
        self.sent = tempfile.TemporaryFile()  # noqa: SIM115 (the module's worker writes here; ``run`` reads it back)
        self.worker = procworker._Worker(cache_root(), procwire.Writer(self.sent.fileno()))
        self.backend: WasmBackend = self.worker._backend
        self.jobs = itertools.count(1)

    def run(self, spec: Spec, *, cancelled: bool = False) -> tuple[tuple[Any, ...], bytes, bytes]:
        """Run ``spec`` as the parent would send it: its answer (``done``/``failed``), stdout and stderr."""
        pack: Pack = PACKS[spec.lang]
        limits = DEFAULT_LIMITS.validate().merged(spec.limits)
        vfs = VFS.for_limits(limits)
        _seed(vfs, spec)
        self.worker._packs[pack.name] = pack
        job = next(self.jobs)
        if cancelled:
            self.worker._cancelled.add(job)
        start = self.sent.tell()
        self.worker._run(("run", job, pack.name, spec, limits, spec.stdin_bytes, vfs))
        self.sent.seek(start)
        messages = []
        while (message := procwire.receive(self.sent)) is not None:
            messages.append(message)
        output = {Stream.STDOUT: b"", Stream.STDERR: b""}
        for message in messages[:-1]:
            assert message[:2] == ("output", job), message
            output[message[2]] += message[3]
        for stream, data in messages[-1][-1]:  # the output the answer carries comes after what was sent before
            output[stream] += data
        return messages[-1], output[Stream.STDOUT], output[Stream.STDERR]

    @property
    def prepared(self) -> Prepared | None:
        return self.backend._prepared


@pytest.fixture(scope="module")
def here() -> _Here:
    worker = _Here()
    for pack in PACKS.values():
        require_runtime(worker.backend, pack)
    return worker


def _python(code: str, **kw: Any) -> Spec:
    return Spec(lang="python", code=code, **kw)


def _ok(answer: tuple[Any, ...]) -> int:
    assert answer[0] == "done", answer
    return int(answer[2].exit_code)


def test_a_run_starts_from_the_instance_prepared_after_the_one_before(here: _Here) -> None:
    assert _ok(here.run(_python("print(1)"))[0]) == 0
    prepared = here.prepared
    assert prepared is not None and not prepared.taken
    assert here.backend._spent == []  # the run's own Store was closed after its answer
    answer, out, err = here.run(_python("print(6 * 7)"))
    assert (_ok(answer), out, err) == (0, b"42\n", b"")
    assert prepared.taken
    assert here.prepared is not None and here.prepared is not prepared  # and the next one is ready


@pytest.mark.parametrize("program", [ISOLATION, ISOLATION_PLAIN], ids=["stdlib", "plain"])
def test_nothing_of_a_run_reaches_the_next(here: _Here, program: str) -> None:
    """Each run takes the instance prepared after the one before (the same snapshot: the stdlib one for
    ``ISOLATION``, which imports json, the plain one for ``ISOLATION_PLAIN``)."""
    here.run(_python(program))
    for _ in range(3):
        prepared = here.prepared
        answer, out, err = here.run(_python(program))
        assert (_ok(answer), out, err) == (0, CLEAN, b"")
        assert prepared is not None and prepared.taken
    assert _ok(here.run(_python("import builtins\nbuiltins.len = lambda x: 42\nbuiltins.print = None\n"))[0]) == 0
    answer, out, _ = here.run(_python("print(len('ab'), print is not None)"))
    assert (_ok(answer), out) == (0, b"2 True\n")


def test_arguments_environment_stdin_and_files_are_the_runs_own(here: _Here) -> None:
    show = "import os, sys\nprint(sys.argv[1:], os.environ.get('X'), sys.stdin.read(), os.listdir('/in'))\n"
    first = here.run(_python(show, args=("a",), env={"X": "1"}, stdin=b"one", files={"a.txt": b"1"}))
    assert (_ok(first[0]), first[1]) == (0, b"['a'] 1 one ['a.txt']\n")
    prepared = here.prepared  # made after a run with those: the next run still has only its own
    answer, out, _ = here.run(_python(show, args=("b", "c"), env={"X": "2"}, stdin=b"two", files={"b.txt": b"2"}))
    assert (_ok(answer), out) == (0, b"['b', 'c'] 2 two ['b.txt']\n")
    answer, out, _ = here.run(_python(show))
    assert (_ok(answer), out) == (0, b"[] None  []\n")
    assert prepared is not None and prepared.taken


def test_the_memory_limit_covers_the_image_and_the_runs_growth(here: _Here) -> None:
    here.run(_python("pass"))  # prepared under the default limit
    below = here.prepared
    answer, _, _ = here.run(_python("print(1)", limits=Limits(memory=8 * MiB)))
    assert answer[:3] == ("failed", answer[1], "MemoryLimitExceeded"), answer
    assert "starts with" in answer[3]  # the image alone is over the limit: the guest never ran
    assert below is not None and not below.taken  # another limit: not that instance
    assert here.prepared is None  # none can be made under 8 MiB either

    tight = Limits(memory=64 * MiB)
    assert _ok(here.run(_python("pass", limits=tight))[0]) == 0
    prepared = here.prepared
    answer, _, _ = here.run(_python("x = bytearray(200 * 1024 * 1024)\nprint(len(x))", limits=tight))
    assert answer[2] == "MemoryLimitExceeded", answer
    assert prepared is not None and prepared.taken and prepared.memory_limit == 64 * MiB


def test_time_limits_start_with_the_run_not_with_its_instance(here: _Here) -> None:
    quick = Limits(wall_time=0.5, cpu_time=0.5)
    here.run(_python("pass", limits=quick))
    prepared = here.prepared
    time.sleep(1.0)  # the instance waits longer than the run may take
    code = "import time\nprint(time.process_time() < 0.3, time.monotonic() >= 0)"
    answer, out, _ = here.run(_python(code, limits=quick))
    assert (_ok(answer), out) == (0, b"True True\n")
    assert prepared is not None and prepared.taken
    prepared = here.prepared
    answer, _, _ = here.run(_python("while True: pass", limits=quick))
    assert answer[2] in ("TimeLimitExceeded", "CPUTimeLimitExceeded"), answer
    assert prepared is not None and prepared.taken


@pytest.mark.parametrize(
    ("lang", "code"), [("javascript", "console.log(6 * 7, typeof globalThis.leak); globalThis.leak = 1"),
                       ("lua", "print(6 * 7, type(leak)); leak = 1")],
)  # fmt: skip
def test_javascript_and_lua_runs_start_from_prepared_instances_too(here: _Here, lang: str, code: str) -> None:
    here.run(Spec(lang=lang, code=""))
    for _ in range(2):
        prepared = here.prepared
        answer, out, err = here.run(Spec(lang=lang, code=code))
        fresh = b"undefined" if lang == "javascript" else b"nil"
        assert (_ok(answer), out.split()[:2], err) == (0, [b"42", fresh], b"")
        assert prepared is not None and prepared.taken


def test_a_run_of_another_language_or_cancelled_gets_a_fresh_instance(here: _Here) -> None:
    here.run(_python("pass"))
    prepared = here.prepared
    answer, out, _ = here.run(Spec(lang="lua", code="print(1)"))
    assert (_ok(answer), out) == (0, b"1\n")
    assert prepared is not None and not prepared.taken
    prepared = here.prepared
    answer, _, _ = here.run(Spec(lang="lua", code="print(2)"), cancelled=True)
    assert answer[:3] == ("failed", answer[1], "RunCancelled"), answer
    assert prepared is not None and not prepared.taken
    answer, out, _ = here.run(Spec(lang="lua", code="print(3)"))
    assert (_ok(answer), out) == (0, b"3\n")


def test_closing_the_backend_closes_its_prepared_instance() -> None:
    worker = _Here()
    require_runtime(worker.backend, python.PACK)
    worker.run(_python("pass"))
    assert worker.prepared is not None
    worker.backend.close()
    assert worker.prepared is None

