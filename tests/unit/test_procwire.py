"""``backends.wasm.procwire``: what a run's request and answer carry arrives as it was sent."""

from __future__ import annotations

import dataclasses
import pickle
from types import MappingProxyType

import pytest

from backends.wasm import procwire
from playground.core import Limits, Spec
from playground.core.limits import DEFAULT_LIMITS, ResolvedLimits
from playground.core.result import NetLogEntry, Outcome


def _round_trip(message: tuple[object, ...]) -> tuple[object, ...]:
    return procwire.FrameReader().feed(len(data := procwire.dumps(message)).to_bytes(4, "little") + data)[0]


def test_a_runs_spec_limits_and_outcome_arrive_equal_and_frozen() -> None:
    spec = Spec(
        lang="python", code=b"print(open('/in/a').read())", args=("x", "y"), env={"A": "1"}, stdin="typed",
        files={"a": b"\x00\xff"}, limits=Limits(memory=64 << 20, wall_time=2.5), work_files={"m.py": b"x = 1"},
        main_file="main.py", packages=("tabulate",),
    )  # fmt: skip
    limits = DEFAULT_LIMITS.validate().merged(Limits(max_output=2 << 20))
    outcome = Outcome(exit_code=3, peak_memory=1 << 20, limits_reached=("max_procs",),
                      net_log=(NetLogEntry(timestamp=1.0, method="GET", url="http://x/"),))  # fmt: skip
    got = _round_trip(("run", 7, spec, limits, outcome, MappingProxyType({"k": 1})))
    assert got == ("run", 7, spec, limits, outcome, {"k": 1})
    _, _, spec2, limits2, outcome2, proxy = got
    assert type(spec2) is Spec and type(limits2) is ResolvedLimits and type(outcome2) is Outcome
    assert isinstance(proxy, MappingProxyType)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec2.lang = "lua"  # type: ignore[misc]


def test_only_the_listed_dataclasses_are_rebuilt_field_by_field() -> None:
    """``rebuild`` makes only the classes it knows: a frame naming another one fails to load."""
    class Other:
        def __reduce__(self) -> tuple[object, ...]:
            return procwire.rebuild, (Limits, (None,) * len(dataclasses.fields(Limits)))

    frame = pickle.dumps(Other())
    with pytest.raises(KeyError):
        pickle.loads(frame)
    assert set(procwire._FIELDS) == {Spec, ResolvedLimits, Outcome}
    for cls, names in procwire._FIELDS.items():
        assert names == tuple(f.name for f in dataclasses.fields(cls))
