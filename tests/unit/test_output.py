import threading

import pytest

from playground.core import OutputCapture, OutputLimitExceeded, Stream


def test_cap_is_exact_across_both_streams() -> None:
    cap = OutputCapture(10)
    cap.write(Stream.STDOUT, b"1234")
    cap.write(Stream.STDERR, b"5678")
    with pytest.raises(OutputLimitExceeded):
        cap.write(Stream.STDOUT, b"abcdef")
    assert cap.stdout() == b"1234ab"
    assert cap.stderr() == b"5678"
    assert cap.total == 10
    assert cap.truncated


def test_exactly_at_the_cap_is_not_truncated() -> None:
    cap = OutputCapture(4)
    cap.write(Stream.STDOUT, b"1234")
    assert not cap.truncated
    with pytest.raises(OutputLimitExceeded):
        cap.write(Stream.STDOUT, b"5")
    assert cap.stdout() == b"1234"


def test_writes_after_the_cap_keep_failing_and_store_nothing() -> None:
    cap = OutputCapture(3)
    with pytest.raises(OutputLimitExceeded):
        cap.write(Stream.STDOUT, b"abcdef")
    for _ in range(5):
        with pytest.raises(OutputLimitExceeded):
            cap.write(Stream.STDERR, b"more")
    assert cap.stdout() == b"abc"
    assert cap.stderr() == b""


def test_no_cap() -> None:
    cap = OutputCapture(None)
    cap.write(Stream.STDOUT, b"x" * 5_000_000)
    assert cap.total == 5_000_000
    assert not cap.truncated


def test_listener_sees_only_kept_bytes() -> None:
    seen: list[tuple[Stream, bytes]] = []
    cap = OutputCapture(5, lambda s, b: seen.append((s, b)))
    cap.write(Stream.STDOUT, b"abc")
    with pytest.raises(OutputLimitExceeded):
        cap.write(Stream.STDERR, b"defgh")
    assert seen == [(Stream.STDOUT, b"abc"), (Stream.STDERR, b"de")]


def test_concurrent_writers_never_exceed_the_cap() -> None:
    cap = OutputCapture(100_000)  # each thread alone would write 200_000
    errors = []

    def flood() -> None:
        try:
            for _ in range(20_000):
                cap.write(Stream.STDOUT, b"0123456789")
        except OutputLimitExceeded:
            errors.append(1)

    threads = [threading.Thread(target=flood) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cap.total == 100_000
    assert len(cap.stdout()) == 100_000
    assert len(errors) == 8
