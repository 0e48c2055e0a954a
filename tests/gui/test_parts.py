"""The GUI's parts on their own: output batching, file previews, lexing, the excepthook, exports, the CLI."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading

import pytest

import playground.app
from playground.app.files_panel import Kind, classify
from playground.app.highlighter import lex_lines, make_lexer
from playground.app.output_buffer import OutputBuffer, Piece
from playground.core import Stream


def test_buffer_keeps_order_merges_streams_and_splits_to_the_budget() -> None:
    buffer = OutputBuffer()
    buffer.write(Stream.STDOUT, b"ab")
    buffer.write(Stream.STDOUT, b"cd")
    buffer.write(Stream.STDERR, b"E")
    buffer.write(Stream.STDOUT, b"0123456789")
    assert buffer.drain(8) == [Piece(Stream.STDOUT, "abcd"), Piece(Stream.STDERR, "E"), Piece(Stream.STDOUT, "012")]
    buffer.note("[truncated]")
    buffer.finish()
    assert not buffer.done
    assert buffer.drain(100) == [Piece(Stream.STDOUT, "3456789"), Piece(None, "[truncated]")]
    assert buffer.done and buffer.pending == 0


def test_buffer_decodes_characters_split_across_writes() -> None:
    buffer = OutputBuffer()
    data = "héllo ✓ 🎉".encode()
    for i in range(len(data)):
        buffer.write(Stream.STDOUT, data[i: i + 1])
    buffer.write(Stream.STDERR, b"\xff")
    buffer.finish()
    assert buffer.drain(1000) == [Piece(Stream.STDOUT, "héllo ✓ 🎉"), Piece(Stream.STDERR, "\ufffd")]


def test_buffer_takes_writes_from_many_threads() -> None:
    buffer = OutputBuffer()

    def writer(stream: Stream) -> None:
        for _ in range(2000):
            buffer.write(stream, b"x" * 10)

    threads = [threading.Thread(target=writer, args=(s,)) for s in (Stream.STDOUT, Stream.STDERR) * 2]
    for t in threads:
        t.start()
    drained = 0
    while any(t.is_alive() for t in threads) or buffer.pending:
        drained += sum(len(p.text) for p in buffer.drain(4096))
    assert drained == 4 * 2000 * 10


@pytest.mark.parametrize(
    ("name", "data", "kind"),
    [
        ("a.png", b"\x89PNG\r\n\x1a\n....", Kind.IMAGE),
        ("photo", b"\xff\xd8\xff\xe0JFIF", Kind.IMAGE),
        ("c.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>", Kind.SVG),
        ("d", b"<?xml version='1.0'?>\n<svg/>", Kind.SVG),
        ("e.txt", "naïve text\n".encode(), Kind.TEXT),
        ("f.bin", bytes(range(256)), Kind.BINARY),
        ("g", b"\xff\xfe\xfa not utf-8", Kind.BINARY),
    ],
)
def test_out_files_are_classified_by_content(name: str, data: bytes, kind: Kind) -> None:
    assert classify(name, data) is kind


def test_lexed_spans_line_up_with_the_document_even_with_wide_characters() -> None:
    lines = lex_lines(make_lexer("python3"), "s = '🎉'  # c\n\nx = 1")
    assert [text for text, _ in lines] == ["s = '🎉'  # c", "", "x = 1"]
    first = lines[0][1]
    comment = next(span for span in first if "Comment" in str(span[2]))
    assert comment[0] == 10  # UTF-16 units: the emoji counts twice, as in QTextBlock positions
    assert lines[1][1] == ()


def test_excepthook_logs_and_notifies(caplog: pytest.LogCaptureFixture) -> None:
    from playground.app.excepthook import install_excepthook

    notes: list[str] = []
    before = sys.excepthook
    restore = install_excepthook(notes.append)
    try:
        with caplog.at_level(logging.ERROR):
            try:
                raise RuntimeError("boom")
            except RuntimeError as exc:
                sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        restore()
    assert sys.excepthook is before
    assert notes == ["Internal error: RuntimeError: boom (details in the log)"]
    assert "unhandled error" in caplog.text and "boom" in caplog.text


def test_app_package_exports_and_has_no_import_time_qt() -> None:
    assert playground.app.__all__ == sorted(playground.app.__all__)
    for name in playground.app.__all__:
        assert hasattr(playground.app, name)
    probe = "import sys, playground.app, playground.cli; print(sorted(m for m in sys.modules if 'PySide6' in m))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_gui_is_the_default_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from playground import cli

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    calls: list[str] = []
    monkeypatch.setattr("playground.app.run_gui", lambda make: calls.append("gui") or 0)
    assert cli.main([]) == 0
    assert cli.main(["gui"]) == 0
    assert calls == ["gui", "gui"]


def test_garbage_is_collected_on_the_gui_thread_only(qtbot) -> None:  # type: ignore[no-untyped-def]
    import gc
    import weakref

    from playground.app.gc_guard import GuiThreadCollector

    class Node:
        def __init__(self) -> None:
            self.me = self

    assert not gc.isenabled()  # the autouse fixture runs a collector, as the app does
    node = Node()
    ref = weakref.ref(node)
    del node
    junk = [[] for _ in range(5 * gc.get_threshold()[0])]  # live allocations cross the threshold
    qtbot.waitUntil(lambda: ref() is None, timeout=5000)  # collected by a timer on this (the GUI) thread
    assert junk
    nested = GuiThreadCollector()
    nested.start()
    nested.stop()
    nested.stop()
    assert not gc.isenabled()  # stop() restores what start() found


def test_gui_without_a_display_says_so_instead_of_aborting() -> None:
    from playground.cli.gui_cmd import missing_display

    assert "no display" in (missing_display({}, "linux") or "")
    assert missing_display({"DISPLAY": ":0"}, "linux") is None
    assert missing_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert missing_display({}, "darwin") is None
