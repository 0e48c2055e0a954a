import math

import pytest

from playground.core import DEFAULT_LIMITS, UNLIMITED, InvalidLimits, Limits, Sandbox
from playground.core.limits import MAXIMA, MiB


def test_defaults_match_the_seed() -> None:
    assert Limits(
        memory=128 * MiB, wall_time=10.0, cpu_time=10.0, max_output=1 * MiB,
        fs_quota=16 * MiB, max_files=256, max_procs=64,
    ) == DEFAULT_LIMITS
    DEFAULT_LIMITS.validate()


@pytest.mark.parametrize(
    ("base", "over", "expected"),
    [
        (Limits(memory=1, wall_time=2.0), None, Limits(memory=1, wall_time=2.0)),
        (Limits(memory=1, wall_time=2.0), Limits(), Limits(memory=1, wall_time=2.0)),
        (Limits(memory=1, wall_time=2.0), Limits(memory=5), Limits(memory=5, wall_time=2.0)),
        (Limits(memory=1), Limits(memory=UNLIMITED), Limits(memory=UNLIMITED)),
        (Limits(memory=UNLIMITED), Limits(memory=7), Limits(memory=7)),
        (Limits(max_files=3), Limits(max_procs=9), Limits(max_files=3, max_procs=9)),
    ],
)
def test_merge_is_field_by_field(base: Limits, over: Limits | None, expected: Limits) -> None:
    assert base.merged(over) == expected


def test_three_layer_merge_through_the_sandbox() -> None:
    sb = Sandbox(default_limits=Limits(memory=64 * MiB, wall_time=3.0))
    resolved = sb.resolve_limits(Limits(wall_time=1.5))
    assert resolved.memory == 64 * MiB
    assert resolved.wall_time == 1.5
    assert resolved.max_output == DEFAULT_LIMITS.max_output


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory", -1, "negative"),
        ("memory", 0, "zero"),
        ("wall_time", 0.0, "zero"),
        ("wall_time", -0.5, "negative"),
        ("cpu_time", math.nan, "NaN"),
        ("wall_time", math.inf, "maximum"),
        ("max_files", 0, "zero"),
        ("max_procs", -1, "negative"),
        ("memory", MAXIMA["memory"] + 1, "maximum"),
        ("fs_quota", 2**64, "maximum"),
        ("max_output", 1.5, "int"),
        ("memory", "64M", "int"),
        ("memory", True, "bool"),
        ("wall_time", "5s", "number"),
        ("max_files", 3.0, "int"),
    ],
)
def test_validate_rejects(field: str, value: object, message: str) -> None:
    limits = DEFAULT_LIMITS.merged(Limits(**{field: value}))  # type: ignore[arg-type]
    with pytest.raises(InvalidLimits, match=message) as info:
        limits.validate()
    assert field in str(info.value)


def test_unset_field_after_merge_is_refused() -> None:
    with pytest.raises(InvalidLimits, match="not set"):
        Limits(memory=1).validate()


def test_zero_override_is_not_unlimited() -> None:
    sb = Sandbox()
    with pytest.raises(InvalidLimits, match="zero"):
        sb.resolve_limits(Limits(wall_time=0))


def test_unlimited_must_be_asked_for_and_validates() -> None:
    limits = DEFAULT_LIMITS.merged(Limits(memory=UNLIMITED, wall_time=UNLIMITED, max_files=UNLIMITED)).validate()
    assert limits.memory_cap is None
    assert limits.wall_time_cap is None
    assert limits.fs_quota_cap == 16 * MiB


def test_bad_sandbox_defaults_fail_at_construction() -> None:
    with pytest.raises(InvalidLimits):
        Sandbox(default_limits=Limits(memory=-5))


def test_integer_durations_are_accepted() -> None:
    assert DEFAULT_LIMITS.merged(Limits(wall_time=3)).validate().wall_time == 3
