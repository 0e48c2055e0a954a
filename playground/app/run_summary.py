"""What a run did, in words: exit code, the limit that tripped, wall time, peak memory, backend.

Pure functions over core values; the output view shows their text.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from playground.core import LIMIT_INFO, LimitExceeded, Limits, ResolvedLimits, Result, reached_note, summarize

#: The limits an execution ran under, as the front ends hold them.
AnyLimits = Limits | ResolvedLimits

@dataclass(frozen=True, slots=True)
class Summary:
    """One line for the output pane; ``kind``: ok, tried (ok, but it tried things), failed, limit, stopped, error."""

    kind: str
    text: str


def human_size(n: int) -> str:
    """Approximate binary size for people: ``12.3 MiB``."""
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def human_duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def limit_value(limits: AnyLimits | None, field: str) -> str:
    """A limit's value as the panel would write it (``10s``, ``1M``, ``256``)."""
    info = LIMIT_INFO.get(field)
    return "?" if info is None else info.shown(limits)


def describe_limit(exc: LimitExceeded, limits: AnyLimits | None) -> str:
    """``Stopped: the wall time limit (2s) was reached``."""
    info = LIMIT_INFO.get(exc.limit)
    title = info.title if info is not None else exc.limit or "a"
    return f"Stopped: the {title.lower()} limit ({limit_value(limits, exc.limit)}) was reached. {exc}"


def usage_text(result: Result) -> str:
    parts = [human_duration(result.usage.wall)]
    if result.usage.peak_memory:
        parts.append(f"peak {human_size(result.usage.peak_memory)}")
    if result.backend:
        parts.append(f"on {result.backend}")
    return " · ".join(parts)


def limits_used(result: Result, limits: AnyLimits | None) -> str:
    """What an execution used against its limits: ``3 ms of 10s wall time · peak 11.2 MiB of 128M memory``."""
    usage = result.usage
    parts = [f"{human_duration(usage.wall)} of {limit_value(limits, 'wall_time')} wall time"]
    if usage.peak_memory:
        parts.append(f"peak {human_size(usage.peak_memory)} of {limit_value(limits, 'memory')} memory")
    if usage.fs_bytes:
        parts.append(f"{human_size(usage.fs_bytes)} of {limit_value(limits, 'fs_quota')} files")
    return " · ".join(parts)


def summarize_result(result: Result, limits: AnyLimits | None = None) -> Summary:
    """``exit 0 · 12 ms · on wasm``; a limit the program ran into without being stopped leads, in words.

    ``limits_reached`` makes the kind ``limit``: a contained fork bomb whose
    program exited 0 is not a clean run, and the summary must not read like one.
    """
    if result.limits_reached:
        notes = "; ".join(reached_note(name, limits) for name in result.limits_reached)
        text = f"{notes[:1].upper()}{notes[1:]}; the program ran on · exit {result.exit_code} · {usage_text(result)}"
        return Summary("limit", text)
    kind = "ok" if result.exit_code == 0 else "failed"
    text = f"exit {result.exit_code} · {usage_text(result)}"
    if result.restarted:
        text += " · restarted"
    if result.truncated:
        text += " · output truncated"
    if result.attempts and kind == "ok":
        kind = "tried"  # a clean exit, but not a clean run: it reached beyond the sandbox
    return Summary(kind, text + attempts_note(result))


def attempts_note(result: Result) -> str:
    """`` · tried: read ~/.ssh/id_rsa, connect api.github.com:443 - all refused`` (empty when it tried nothing)."""
    line = summarize(result.attempts, dropped=result.attempts_dropped, width=3)
    return f" · {line}" if line else ""


def summarize_limit(exc: LimitExceeded, limits: AnyLimits | None) -> Summary:
    text = describe_limit(exc, limits)
    if exc.result is not None:
        text += f" · {usage_text(exc.result)}" + attempts_note(exc.result)
    return Summary("limit", text)


def summary_html(summary: Summary, colours: dict[str, str]) -> str:
    """The summary as rich text, coloured by kind (``colours`` maps kind -> CSS colour)."""
    colour = colours.get(summary.kind, "")
    body = html.escape(summary.text)
    return f'<span style="color:{colour}">{body}</span>' if colour else body
