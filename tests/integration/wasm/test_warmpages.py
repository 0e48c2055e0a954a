"""Warm pages (``backends/wasm/warmpages``): what every run writes, copied before a concurrent run starts.

The page set is learned from host-chosen calibration runs only; a run
beside another is prefaulted and still sees only the image's content and
its own writes; a lone run is not prefaulted; the page map is read right.
"""

from __future__ import annotations

import asyncio
import ctypes
import mmap
from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend, warmpages
from backends.wasm.memlimit import MemoryImage
from backends.wasm.warmpages import PAGE, WarmPages
from playground.core import Limits, Sandbox, Spec
from playground.packs import python
from tests.integration.wasm.conftest import require_runtime


def test_common_is_what_every_run_wrote_in_merged_ranges() -> None:
    first = bytes([1, 1, 0, 1, 0, 0, 0, 0, 1, 1])
    second = bytes([1, 1, 1, 1, 0, 0, 0, 0, 0, 1])
    # pages 0, 1, 3 and 9; the gap of one page at 2 is merged, the one of five before 9 is not
    assert WarmPages.common([first, second]).ranges == ((0, 4), (9, 1))
    assert WarmPages.common([first]).ranges == ((0, 4), (8, 2))
    assert WarmPages.common([]).ranges == ()
    assert WarmPages.common([first, first[:5]]).ranges == ()  # runs of different images: nothing


def test_written_tells_a_written_page_from_a_read_one() -> None:
    image = MemoryImage(b"\x07" * 65536)  # non-zero: every page is the file's
    try:
        view = mmap.mmap(image.fd, 65536, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        image.close()
    try:
        base = ctypes.addressof(ctypes.c_char.from_buffer(view))
        assert view[2 * PAGE] == 7  # read: still the image's page
        view[PAGE] = 1  # written: this process's own copy
        flags = warmpages.written(base, 4 * PAGE)
        if flags is None:
            pytest.skip("no /proc/self/pagemap here")
        assert flags == bytes([0, 1, 0, 0])
        assert WarmPages.common([flags]).prefault(base)
        assert warmpages.written(base, 4 * PAGE) == bytes([0, 1, 0, 0])
        assert view[PAGE] == 1 and view[2 * PAGE] == 7  # prefaulting keeps the content
    finally:
        view.close()


@pytest.fixture(scope="module")
def backend() -> WasmBackend:
    backend = WasmBackend()
    require_runtime(backend, python.PACK)
    return backend


@pytest.fixture
def prefaults(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The memory bases runs were prefaulted at."""
    bases: list[int] = []
    real = WarmPages.prefault

    def spy(self: WarmPages, base: int) -> bool:
        bases.append(base)
        return real(self, base)

    monkeypatch.setattr(WarmPages, "prefault", spy)
    yield bases


#: Leaves its marks in the image's pages; prints what it found of earlier marks first.
MARK = """\
import builtins, sys, typing
print("seen", "MARK" in globals(), getattr(typing, "MARK", None), getattr(builtins, "mark", None))
MARK = 1
typing.MARK = 2
builtins.mark = 3
big = [str(i) * 10 for i in range(20000)]
"""


async def test_runs_beside_another_are_prefaulted_and_share_nothing(backend: WasmBackend, prefaults: list[int]) -> None:
    sb = Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=20.0))
    first = await sb.run(Spec(lang="python", code=MARK))
    assert first.stdout == b"seen False None None\n"
    assert prefaults == []  # a run alone is not prefaulted
    got = backend.snapshots.image(python.PACK, None)
    assert got is not None
    for batch in range(2):  # the first concurrent runs learn the pages (calibration), the next use them
        sleeper = asyncio.ensure_future(sb.run(Spec(lang="python", code="import time\ntime.sleep(1.5)")))
        await asyncio.sleep(0.3)
        results = await asyncio.gather(*(sb.run(Spec(lang="python", code=MARK)) for _ in range(6)))
        assert [r.stdout for r in results] == [b"seen False None None\n"] * 6
        assert (await sleeper).exit_code == 0
        if batch == 0:
            warm = got[1].memory.warm
            assert warm is not None and warm.pages > 0
            prefaults.clear()
    assert len(prefaults) >= 6
    # what the runs wrote taught the backend nothing: the pages are those of the calibration
    assert got[1].memory.warm is warm


async def test_a_prefaulted_run_keeps_its_memory_limit(backend: WasmBackend, prefaults: list[int]) -> None:
    sb = Sandbox(backends=[backend], packs=[python.PACK], default_limits=Limits(wall_time=20.0))
    sleeper = asyncio.ensure_future(sb.run(Spec(lang="python", code="import time\ntime.sleep(1.0)")))
    await asyncio.sleep(0.3)
    result = await sb.run(Spec(lang="python", code="x = bytearray(8 << 20)\nprint(len(x))",
                               limits=Limits(memory=64 << 20, wall_time=20.0)))  # fmt: skip
    assert result.stdout == b"8388608\n" and prefaults
    assert result.usage.peak_memory <= 64 << 20
    await sleeper
