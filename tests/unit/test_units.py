import pytest

from playground.core import UNLIMITED, format_duration, format_size, parse_duration, parse_size


@pytest.mark.parametrize(
    ("text", "value"),
    [("64M", 64 << 20), ("512k", 512 << 10), ("1G", 1 << 30), ("1.5GiB", 3 << 29), ("1000", 1000),
     ("10 MB", 10 << 20), ("unlimited", UNLIMITED), ("7b", 7)],
)
def test_parse_size(text: str, value: object) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "M", "-1M", "64X", "1.5", "1e9", "0x10", "64 M B"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"size|whole"):
        parse_size(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("5s", 5.0), ("500ms", 0.5), ("2m", 120.0), ("1.5", 1.5), ("1h", 3600.0), ("unlimited", UNLIMITED)],
)
def test_parse_duration(text: str, value: object) -> None:
    assert parse_duration(text) == value


@pytest.mark.parametrize("text", ["", "s", "-5s", "5 parsecs", "five"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_format_round_trips() -> None:
    for value in (64 << 20, 1536 << 10, 1000, 1 << 30):
        assert parse_size(format_size(value)) == value
    for seconds in (5.0, 0.5, 0.25, 12.5):
        assert parse_duration(format_duration(seconds)) == seconds
    assert format_size(UNLIMITED) == "unlimited"
    assert format_duration(UNLIMITED) == "unlimited"
