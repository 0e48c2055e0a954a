"""The daemon's ``FinishedAt``, which decides whether a prepared container is old enough to sweep (``pool``)."""

import pytest

from backends.docker.engine_types import parse_timestamp

EPOCH_0750 = 1796197800.0  # 2026-12-02T07:50:00Z


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2026-12-02T07:50:00Z", EPOCH_0750), ("2026-12-02T07:50:00.123456789Z", EPOCH_0750 + 0.123456),
     ("2026-12-02T08:50:00.5+01:00", EPOCH_0750 + 0.5), ("2026-12-02T07:50:00", EPOCH_0750)],
)  # fmt: skip
def test_the_daemons_forms_are_read(text: str, seconds: float) -> None:
    assert parse_timestamp(text) == pytest.approx(seconds, abs=1e-6)


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00Z", "", "junk", "2026-13-45T99:00:00Z", "2026-12-02"])
def test_never_and_nonsense_are_zero(text: str) -> None:
    """Zero reads as "has not exited": a sweep never removes on a time it could not read."""
    assert parse_timestamp(text) == 0.0
