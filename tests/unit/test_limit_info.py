"""Limits resolved once into a typed value, and one table (``LIMIT_INFO``) behind every front end's limit fields."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest

from playground.cli import build_parser
from playground.core import (
    DEFAULT_LIMITS,
    LIMIT_FIELDS,
    LIMIT_INFO,
    UNLIMITED,
    InvalidLimits,
    LimitKind,
    Limits,
    ResolvedLimits,
    Sandbox,
)
from playground.core.limits import MiB


def _complete(**changes: object) -> dict[str, object]:
    values = {f: getattr(DEFAULT_LIMITS, f) for f in LIMIT_FIELDS}
    values.update(changes)
    return values


def test_validate_gives_the_typed_value_and_the_sandbox_passes_it_down() -> None:
    resolved = Sandbox().resolve_limits(Limits(wall_time=2, memory=UNLIMITED))
    assert type(resolved) is ResolvedLimits
    assert resolved.wall_time_cap == 2.0 and isinstance(resolved.wall_time_cap, float)
    assert resolved.memory_cap is None  # UNLIMITED
    assert resolved.max_output_cap == 1 * MiB
    assert resolved.max_procs_cap == 64
    assert not hasattr(resolved, "get") and not hasattr(Limits, "get")  # no lookups of fields by name


@pytest.mark.parametrize(
    ("field", "value"),
    [("memory", None), ("memory", 0), ("wall_time", -1.0), ("max_files", 2.5), ("max_procs", True),
     ("fs_quota", "16M"), ("cpu_time", float("nan")), ("memory", 1 << 50)],
)  # fmt: skip
def test_a_resolved_value_cannot_be_made_wrong(field: str, value: object) -> None:
    """Built directly, bypassing ``Limits.validate``, it still checks every field."""
    with pytest.raises(InvalidLimits, match=field):
        ResolvedLimits(**_complete(**{field: value}))  # type: ignore[arg-type]
    resolved = DEFAULT_LIMITS.validate()
    with pytest.raises(InvalidLimits, match=field):
        dataclasses.replace(resolved, **{field: value})


def test_merging_a_resolved_value_checks_again() -> None:
    resolved = DEFAULT_LIMITS.validate()
    assert resolved.merged(Limits(memory=64 * MiB)).memory_cap == 64 * MiB
    with pytest.raises(InvalidLimits, match="memory"):
        resolved.merged(Limits(memory=-5))
    assert resolved.as_limits() == DEFAULT_LIMITS


def test_the_table_describes_every_field_in_order() -> None:
    assert tuple(LIMIT_INFO) == LIMIT_FIELDS
    kinds = {name: info.kind for name, info in LIMIT_INFO.items()}
    for name in LIMIT_FIELDS:  # the kind matches what validate accepts
        sample = {"size": 4096, "duration": 1.5, "count": 7}[kinds[name].value]
        DEFAULT_LIMITS.merged(Limits(**{name: sample})).validate()  # type: ignore[arg-type]
    assert LIMIT_INFO["wall_time"].parse("500ms") == 0.5
    assert LIMIT_INFO["memory"].parse("64M") == 64 * MiB
    assert LIMIT_INFO["max_files"].parse("unlimited") is UNLIMITED
    for bad in ("1_000", " 3", "٣", "3.0"):
        with pytest.raises(ValueError, match="whole number"):
            LIMIT_INFO["max_files"].parse(bad)
    assert LIMIT_INFO["memory"].kind is LimitKind.SIZE


def _flag_help(command: str) -> dict[str, str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        option: action.help or ""
        for action in sub.choices[command]._actions
        for option in action.option_strings
    }


@pytest.mark.parametrize("command", ["run", "repl", "serve"])
def test_cli_help_states_the_defaults_from_the_table(command: str) -> None:
    helps = _flag_help(command)
    offered = [info for info in LIMIT_INFO.values() if info.flag in helps]
    assert {"--timeout", "--mem"} <= {info.flag for info in offered}
    for info in offered:
        assert f"(default {info.default()}" in helps[info.flag], (info.flag, helps[info.flag])
        assert info.meaning in helps[info.flag]


def test_cli_flags_read_back_into_limits() -> None:
    args = build_parser().parse_args(["run", "-e", "1", "-l", "lua", "--timeout", "250ms", "--mem", "64M",
                                      "--max-files", "unlimited", "--max-procs", "9"])
    from playground.cli.limit_flags import limits_from_args

    assert limits_from_args(args) == Limits(wall_time=0.25, memory=64 * MiB, max_files=UNLIMITED, max_procs=9)


def test_mcp_schemas_state_the_defaults_from_the_table() -> None:
    from playground.mcp.tools import MaxOutputArg, MemoryArg, TimeoutArg

    for arg, name in ((TimeoutArg, "wall_time"), (MemoryArg, "memory"), (MaxOutputArg, "max_output")):
        text = json.dumps([getattr(m, "description", "") for m in arg.__metadata__])
        assert f"server default ({LIMIT_INFO[name].default()}" in text
        assert LIMIT_INFO[name].agent_grammar in text
