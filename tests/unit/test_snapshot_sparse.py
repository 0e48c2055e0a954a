"""Snapshot files leave 64 KiB runs of zeros as holes, and read back byte for byte (``snapshot._write_sparse``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backends.wasm.snapshot import _write_sparse

CHUNK = 65536


@pytest.mark.parametrize("prefix", [b"", b"header + meta, not aligned"])
def test_zero_runs_are_holes_and_the_bytes_are_the_same(tmp_path: Path, prefix: bytes) -> None:
    data = os.urandom(CHUNK) + bytes(20 * CHUNK) + os.urandom(100) + bytes(CHUNK - 100) + bytes(3 * CHUNK)
    path = tmp_path / "x.snap"
    with path.open("wb") as handle:
        handle.write(prefix)
        _write_sparse(handle, data)
    assert path.read_bytes() == prefix + data  # the trailing zeros count in the size too
    allocated = path.stat().st_blocks * 512
    assert allocated <= 3 * CHUNK < len(data) // 4, allocated


def test_data_without_zero_runs_is_written_whole(tmp_path: Path) -> None:
    data = os.urandom(5 * CHUNK + 17)
    path = tmp_path / "y.snap"
    with path.open("wb") as handle:
        _write_sparse(handle, data)
    assert path.read_bytes() == data and path.stat().st_blocks * 512 >= len(data)
