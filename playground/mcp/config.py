"""``ServerConfig``: what the user allowed, and how an agent's limit request is checked against it.

The user who starts ``playground mcp`` sets the ceilings (flags); an agent
may ask for less, never more. A request above a ceiling is *refused* with a
message naming the ceiling, rather than silently clamped: an agent that
asked for 5 minutes and quietly got 30 seconds would misread the timeout
that follows. Requests are parsed with the same unit parsers as the CLI,
so ``"5s"``, ``"500ms"``, ``"64M"`` mean the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from playground.core import (
    DEFAULT_LIMITS,
    PREFER_WASM,
    UNLIMITED,
    InvalidLimits,
    Limits,
    Policy,
    ResolvedLimits,
    Unlimited,
    format_duration,
    format_size,
    parse_duration,
    parse_size,
)

MiB = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """Server-side ceilings and policy. Frozen; validated on construction.

    ``max_*`` are the highest values an agent may request; the per-call
    defaults are the core defaults clipped to them. ``languages`` is the
    allowed list of canonical pack names (empty tuple = every registered
    pack). Size caps bound what an agent may send (code, files, stdin) and
    how much of ``/out`` is sent back embedded.

    Raises:
        ValueError: a cap is zero, negative or of the wrong kind.
    """

    max_timeout: float | Unlimited = 60.0
    max_memory: int | Unlimited = 512 * MiB
    max_output: int | Unlimited = 4 * MiB
    policy: Policy = PREFER_WASM
    languages: tuple[str, ...] = ()
    max_sessions: int = 8
    max_concurrent: int = 4
    session_idle_timeout: float = 300.0
    max_code_bytes: int = 1 * MiB
    max_files_bytes: int = 8 * MiB
    max_files: int = 64
    max_stdin_bytes: int = 1 * MiB
    max_args: int = 256
    #: /out files up to this size that are valid UTF-8 come back inline as text.
    inline_text_bytes: int = 64 * 1024
    #: Total /out bytes embedded (as resources) in one result; the rest are listed as omitted.
    max_embed_bytes: int = 8 * MiB
    defaults: ResolvedLimits = field(init=False)

    def __post_init__(self) -> None:
        for name in ("max_timeout", "max_memory", "max_output"):
            value = getattr(self, name)
            if value is UNLIMITED:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be positive (or unlimited), got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{name} must be finite (use unlimited), got {value!r}")
        for name in ("max_sessions", "max_concurrent", "max_code_bytes", "max_files_bytes", "max_files",
                     "max_stdin_bytes", "max_args", "inline_text_bytes", "max_embed_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not self.session_idle_timeout > 0:
            raise ValueError("session_idle_timeout must be positive")
        object.__setattr__(self, "languages", tuple(self.languages))
        object.__setattr__(self, "defaults", self.clipped(DEFAULT_LIMITS.validate()))

    def clipped(self, base: ResolvedLimits) -> ResolvedLimits:
        """``base`` (validated: the core defaults, or a language's) with time, memory and output held to the ceilings.

        A language's own defaults (a compiler's memory) apply on this server
        only up to what the user allowed: never above a ceiling.
        """
        wall = _clip_duration(base.wall_time, self.max_timeout)
        cpu = _clip_duration(base.cpu_time, self.max_timeout)
        clipped = Limits(
            wall_time=wall,
            cpu_time=cpu,
            memory=_clip_size(base.memory, self.max_memory),
            max_output=_clip_size(base.max_output, self.max_output),
        )
        return base.merged(clipped)

    def describe(self) -> str:
        """One line for logs and the server instructions: the ceilings in human units."""
        langs = ", ".join(self.languages) if self.languages else "all installed"
        return (
            f"max timeout {_fmt_duration(self.max_timeout)}, max memory {_fmt_size(self.max_memory)}, "
            f"max output {_fmt_size(self.max_output)}, languages: {langs}, policy {self.policy}, "
            f"max sessions {self.max_sessions}"
        )

    def request_limits(
        self,
        *,
        timeout: str | float | None,
        memory: str | int | None,
        max_output: str | int | None,
        base: ResolvedLimits | None = None,
    ) -> ResolvedLimits:
        """The limits for one call: the server defaults with the agent's requests merged in.

        ``timeout`` sets both wall time and CPU time. ``base`` is the
        language's defaults (``Sandbox.default_limits_for``), clipped to the
        ceilings; without it, the core defaults (``defaults``).

        Raises:
            InvalidLimits: a value does not parse, is zero or negative, or is
                above the ceiling the user set; the message says which.
        """
        overrides = Limits()
        if timeout is not None:
            wall = _duration("timeout", timeout)
            _check_cap("timeout", wall, self.max_timeout, "--max-timeout", _fmt_duration)
            overrides = Limits(wall_time=wall, cpu_time=wall)
        if memory is not None:
            mem = _size("memory", memory)
            _check_cap("memory", mem, self.max_memory, "--max-memory", _fmt_size)
            overrides = overrides.merged(Limits(memory=mem))
        if max_output is not None:
            out = _size("max_output", max_output)
            _check_cap("max_output", out, self.max_output, "--max-output", _fmt_size)
            overrides = overrides.merged(Limits(max_output=out))
        defaults = self.defaults if base is None else self.clipped(base)
        return defaults.merged(overrides)


def _clip_duration(value: float | Unlimited | None, cap: float | Unlimited) -> float | Unlimited | None:
    if cap is UNLIMITED or value is None:
        return value
    return cap if value is UNLIMITED else min(value, cap)


def _clip_size(value: int | Unlimited | None, cap: int | Unlimited) -> int | Unlimited | None:
    if cap is UNLIMITED or value is None:
        return value
    return cap if value is UNLIMITED else min(value, cap)


def _duration(name: str, value: str | float) -> float | Unlimited:
    if isinstance(value, bool):
        raise InvalidLimits(f"{name}: expected a duration like '5s' or a number of seconds, got a boolean")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value <= 0:
            raise InvalidLimits(f"{name}: must be a positive number of seconds, got {value!r}")
        return float(value)
    try:
        parsed = parse_duration(value)
    except ValueError as exc:
        raise InvalidLimits(f"{name}: {exc}") from None
    if parsed is not UNLIMITED and not parsed > 0:
        raise InvalidLimits(f"{name}: must be positive, got {value!r}")
    return parsed


def _size(name: str, value: str | int) -> int | Unlimited:
    if isinstance(value, bool):
        raise InvalidLimits(f"{name}: expected a size like '64M' or a number of bytes, got a boolean")
    if isinstance(value, int):
        if value <= 0:
            raise InvalidLimits(f"{name}: must be a positive number of bytes, got {value!r}")
        return value
    try:
        parsed = parse_size(value)
    except ValueError as exc:
        raise InvalidLimits(f"{name}: {exc}") from None
    if parsed is not UNLIMITED and parsed <= 0:
        raise InvalidLimits(f"{name}: must be positive, got {value!r}")
    return parsed


Formatter = Callable[[float | Unlimited], str]


def _check_cap(name: str, value: float | Unlimited, cap: float | Unlimited, flag: str, fmt: Formatter) -> None:
    if cap is UNLIMITED:
        return
    if value is UNLIMITED or value > cap:
        raise InvalidLimits(
            f"{name} {fmt(value)} is above this server's maximum of {fmt(cap)} "
            f"(set by the user with {flag}); ask for at most {fmt(cap)}"
        )


def _fmt_duration(value: float | Unlimited) -> str:
    return format_duration(value)


def _fmt_size(value: float | Unlimited) -> str:
    if isinstance(value, Unlimited):
        return "unlimited"
    return format_size(int(value))
