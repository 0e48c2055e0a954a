"""Human units for sizes and durations: ``64M``, ``1.5GiB``, ``5s``, ``500ms``.

The CLI, the MCP server and the GUI's limits panel all parse what a person
typed with these two functions, so ``64M`` means the same everywhere.
Sizes are binary (``K`` = 1024). ``unlimited`` is accepted by both parsers.
"""

from __future__ import annotations

import math
import re

from playground.core.limits import UNLIMITED, Unlimited

_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}

_DURATION_UNITS: dict[str, float] = {
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
}

_NUMBER = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int | Unlimited:
    """Parse ``"64M"``, ``"512k"``, ``"1.5GiB"``, ``"1000"`` or ``"unlimited"``.

    Raises:
        ValueError: the text is not a size (the message says what was expected).
    """
    if text.strip().lower() in ("unlimited", "inf", "none"):
        return UNLIMITED
    match = _NUMBER.match(text)
    if not match or match.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f"not a size: {text!r} (expected e.g. 64M, 512K, 1G, unlimited)")
    value = float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"not a whole number of bytes: {text!r}")
    return int(value)


def parse_duration(text: str) -> float | Unlimited:
    """Parse ``"5s"``, ``"500ms"``, ``"2m"``, ``"1.5"`` (seconds) or ``"unlimited"``.

    Raises:
        ValueError: the text is not a duration.
    """
    if text.strip().lower() in ("unlimited", "inf", "none"):
        return UNLIMITED
    match = _NUMBER.match(text)
    if not match or match.group(2).lower() not in _DURATION_UNITS:
        raise ValueError(f"not a duration: {text!r} (expected e.g. 5s, 500ms, 2m, unlimited)")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2).lower()]


def parse_count(text: str) -> int | Unlimited:
    """Parse a plain whole number (``256``; ``-1`` too: the range is the caller's to check) or ``"unlimited"``.

    Strict on purpose: ``int()`` would also take ``1_000`` and full-width
    digits; a limit is either plainly a number or an error.

    Raises:
        ValueError: anything else.
    """
    if text.strip().lower() in ("unlimited", "inf", "none"):
        return UNLIMITED
    if not re.fullmatch(r"[-+]?[0-9]+", text, re.ASCII):
        shown = repr(text if len(text) <= 40 else text[:40] + "...")
        raise ValueError(f"not a whole number: {shown} (expected e.g. 256, unlimited)")
    return int(text)


def format_size(value: int | Unlimited) -> str:
    """The shortest exact binary form: ``64M``, ``1536K``, ``1000``, ``unlimited``."""
    if isinstance(value, Unlimited):
        return "unlimited"
    for suffix, factor in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value and value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


def format_duration(value: float | Unlimited) -> str:
    """``5s``, ``500ms``, ``unlimited``."""
    if isinstance(value, Unlimited):
        return "unlimited"
    if value < 1 and round(value * 1000, 6).is_integer():
        return f"{round(value * 1000)}ms"
    return f"{value:g}s"
