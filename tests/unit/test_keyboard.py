"""``InputStream``: the keyboard channel between a front end and a running guest (issue #17)."""

from __future__ import annotations

import threading
import time

import pytest

from playground.core import InputStream


def test_a_read_returns_what_is_there_without_waiting_for_more() -> None:
    stream = InputStream()
    assert stream.write(b"Alice\n")
    assert stream.read(4096, timeout=0) == b"Alice\n"
    stream.write(b"abc")
    assert stream.read(2, timeout=0) == b"ab"
    assert stream.read(2, timeout=0) == b"c"
    assert stream.delivered == 9


def test_nothing_typed_times_out_with_none_and_end_of_input_is_empty() -> None:
    stream = InputStream()
    started = time.monotonic()
    assert stream.read(10, timeout=0.05) is None
    assert time.monotonic() - started >= 0.04
    assert stream.ready() is None and not stream.wait(0.01)
    stream.write(b"last")
    stream.close()
    assert stream.closed and stream.ready() == 4
    assert stream.read(10, timeout=0) == b"last"
    assert stream.read(10, timeout=0) == b""  # end of input, at once, every time
    assert stream.read(10) == b""
    assert not stream.write(b"too late") and stream.read(10, timeout=0) == b""


def test_a_blocked_reader_wakes_when_a_line_arrives() -> None:
    stream = InputStream()
    got: list[bytes | None] = []
    reader = threading.Thread(target=lambda: got.append(stream.read(100, timeout=5.0)))
    reader.start()
    deadline = time.monotonic() + 2
    while not stream.waiting and time.monotonic() < deadline:
        time.sleep(0.005)
    assert stream.waiting  # a UI can say "waiting for input"
    stream.write(b"Bob\n")
    reader.join(2)
    assert got == [b"Bob\n"] and not stream.waiting


def test_close_wakes_a_blocked_reader_with_end_of_input() -> None:
    stream = InputStream()
    got: list[bytes | None] = []
    reader = threading.Thread(target=lambda: got.append(stream.read(100, timeout=5.0)))
    reader.start()
    time.sleep(0.05)
    stream.close()
    reader.join(2)
    assert got == [b""]


def test_write_takes_bytes_only() -> None:
    with pytest.raises(TypeError):
        InputStream().write("text")  # type: ignore[arg-type]
