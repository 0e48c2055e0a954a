"""Resource limits: defaults, explicit ``UNLIMITED``, field-by-field merge, validation.

``None`` in a field means "not set here, take it from the layer below"
(spec overrides <- sandbox defaults <- built-in defaults). It never means
unlimited: unlimited has its own sentinel, ``UNLIMITED``, which a caller
must ask for by name. After merging, ``validate()`` rejects anything still
unset, zero, negative, absurd or of the wrong type.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, fields
from typing import Final, Literal

from playground.core.errors import InvalidLimits


class Unlimited(enum.Enum):
    """The type of the ``UNLIMITED`` sentinel (an enum so it pickles and types well)."""

    UNLIMITED = "unlimited"

    def __repr__(self) -> str:
        return "UNLIMITED"


#: Disables one limit explicitly. Zero or None never do.
UNLIMITED: Final = Unlimited.UNLIMITED

Size = int | Literal[Unlimited.UNLIMITED]
Duration = float | Literal[Unlimited.UNLIMITED]
Count = int | Literal[Unlimited.UNLIMITED]

MiB: Final = 1 << 20
GiB: Final = 1 << 30

_SIZE_FIELDS: Final = ("memory", "max_output", "fs_quota")
_DURATION_FIELDS: Final = ("wall_time", "cpu_time")
_COUNT_FIELDS: Final = ("max_files", "max_procs")

#: Values above these are refused as absurd (a typo, or an attempt to
#: smuggle "unlimited" in as a huge number). Ask for UNLIMITED instead.
MAXIMA: Final[dict[str, float]] = {
    "memory": 64 * GiB,
    "wall_time": 7 * 24 * 3600.0,
    "cpu_time": 7 * 24 * 3600.0,
    "max_output": 4 * GiB,
    "fs_quota": 64 * GiB,
    "max_files": 10_000_000,
    "max_procs": 1_000_000,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Bounds on one execution. Sizes in bytes, durations in seconds.

    Every field may be ``None`` (inherit) or ``UNLIMITED``. Enforcement and
    its precision are the backend's; each backend documents them.
    """

    memory: Size | None = None
    wall_time: Duration | None = None
    cpu_time: Duration | None = None
    max_output: Size | None = None
    fs_quota: Size | None = None
    max_files: Count | None = None
    max_procs: Count | None = None

    def merged(self, overrides: Limits | None) -> Limits:
        """Return these limits with every field set in ``overrides`` replacing ours."""
        if overrides is None:
            return self
        values = {
            f.name: (
                getattr(overrides, f.name)
                if getattr(overrides, f.name) is not None
                else getattr(self, f.name)
            )
            for f in fields(self)
        }
        return Limits(**values)

    def validate(self) -> ResolvedLimits:
        """Check a fully merged value and return it resolved: the one typed value enforcement reads.

        Raises:
            InvalidLimits: a field is unset, zero, negative, above ``MAXIMA``
                or of the wrong type. The message names the field.
        """
        return ResolvedLimits(**{f.name: getattr(self, f.name) for f in fields(self)})


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedLimits:
    """The limits of one execution, every field set and checked: what the backends enforce.

    Every field is checked when one is made (``Limits.validate()`` makes
    them), so a value of this type cannot hold an unset, zero, negative,
    absurd or mistyped field; the core resolves a run's
    limits once (``Sandbox.resolve_limits``) and passes this value down.
    Enforcement reads the ``*_cap`` properties: the number, or ``None`` when
    the field is ``UNLIMITED``, typed per field (no lookups by name).
    """

    memory: Size
    wall_time: Duration
    cpu_time: Duration
    max_output: Size
    fs_quota: Size
    max_files: Count
    max_procs: Count

    def __post_init__(self) -> None:
        """Raises ``InvalidLimits``: a field is unset, zero, negative, above ``MAXIMA`` or of the wrong type."""
        for f in fields(self):
            _check_field(f.name, getattr(self, f.name))

    def merged(self, overrides: Limits | None) -> ResolvedLimits:
        """These limits with the fields set in ``overrides`` replacing ours, checked again.

        Raises:
            InvalidLimits: as ``Limits.validate``.
        """
        if overrides is None:  # every run without limits of its own (checking them again took ~0.1 ms)
            return self
        return self.as_limits().merged(overrides).validate()

    def as_limits(self) -> Limits:
        """The same values as a ``Limits`` layer (to show, or to merge under something else)."""
        return Limits(**{f.name: getattr(self, f.name) for f in fields(self)})

    @property
    def memory_cap(self) -> int | None:
        return _int_cap(self.memory)

    @property
    def wall_time_cap(self) -> float | None:
        return _float_cap(self.wall_time)

    @property
    def cpu_time_cap(self) -> float | None:
        return _float_cap(self.cpu_time)

    @property
    def max_output_cap(self) -> int | None:
        return _int_cap(self.max_output)

    @property
    def fs_quota_cap(self) -> int | None:
        return _int_cap(self.fs_quota)

    @property
    def max_files_cap(self) -> int | None:
        return _int_cap(self.max_files)

    @property
    def max_procs_cap(self) -> int | None:
        return _int_cap(self.max_procs)


def _int_cap(value: int | Unlimited) -> int | None:
    return None if isinstance(value, Unlimited) else value


def _float_cap(value: float | Unlimited) -> float | None:
    return None if isinstance(value, Unlimited) else float(value)



def _check_field(name: str, value: object) -> None:
    if value is None:
        raise InvalidLimits(f"{name}: not set after merging with the defaults")
    if value is UNLIMITED:
        return
    if isinstance(value, bool):
        raise InvalidLimits(f"{name}: expected a number, got a bool ({value!r})")
    if name in _DURATION_FIELDS:
        if not isinstance(value, (int, float)):
            raise InvalidLimits(f"{name}: expected seconds as a number, got {type(value).__name__}")
        if math.isnan(value):
            raise InvalidLimits(f"{name}: NaN is not a duration")
    elif not isinstance(value, int):
        raise InvalidLimits(f"{name}: expected an int, got {type(value).__name__} ({value!r})")
    assert isinstance(value, (int, float))
    if value < 0:
        raise InvalidLimits(f"{name}: {value!r} is negative (use UNLIMITED to lift a limit)")
    if value == 0:
        raise InvalidLimits(f"{name}: zero is not a limit (use UNLIMITED to lift a limit)")
    if value > MAXIMA[name]:
        raise InvalidLimits(f"{name}: {value!r} is above the maximum {MAXIMA[name]:g}; use UNLIMITED")


#: The built-in safe defaults (seed: 128 MiB, 10 s, 10 s, 1 MiB, 16 MiB, 256, 64).
DEFAULT_LIMITS: Final = Limits(
    memory=128 * MiB,
    wall_time=10.0,
    cpu_time=10.0,
    max_output=1 * MiB,
    fs_quota=16 * MiB,
    max_files=256,
    max_procs=64,
)

#: The field names in display order.
LIMIT_FIELDS: Final = tuple(f.name for f in fields(Limits))


def reached_note(name: str, limits: Limits | ResolvedLimits | None = None) -> str:
    """One sentence for a limit the guest ran into without being stopped (``Result.limits_reached``).

    Shared by the CLI, the MCP server and the GUI so they tell it alike,
    e.g. ``the process limit (64) was reached: the sandbox refused to start more processes``.
    """
    named = reached_limit(name, limits)
    if name == "max_procs":
        return f"{named} was reached: the sandbox refused to start more processes"
    return f"{named} was reached"


def reached_limit(name: str, limits: Limits | ResolvedLimits | None = None) -> str:
    """The limit named for a person: ``the process limit (64)``."""
    value = None if limits is None else getattr(limits, name, None)
    shown = f" ({value!r})" if value is not None else ""
    return f"the process limit{shown}" if name == "max_procs" else f"the {name} limit{shown}"
