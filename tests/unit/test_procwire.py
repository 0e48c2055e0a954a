"""``backends.wasm.procwire``: what a run's request and answer carry arrives as it was sent."""

from __future__ import annotations

import dataclasses
import os
import pickle
from types import MappingProxyType

import pytest

from backends.wasm import procwire
from playground.core import Limits, Spec
from playground.core.limits import DEFAULT_LIMITS, ResolvedLimits
from playground.core.result import NetLogEntry, Outcome


def _round_trip(message: tuple[object, ...]) -> tuple[object, ...]:
    return procwire.FrameReader().feed(_frame(message))[0]


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


def _frame(message: tuple[object, ...]) -> bytes:
    data = procwire.dumps(message)
    return len(data).to_bytes(4, "little") + data


def test_frames_come_out_whole_however_the_reads_cut_them() -> None:
    """One frame per read (the usual case), two in one read, and a stream cut at every byte: same messages."""
    first, second = ("done", 1, b"x" * 300), ("output", 2, "stdout", b"hello\n")
    stream = _frame(first) + _frame(second)
    assert procwire.FrameReader().feed(_frame(first)) == [first]
    assert procwire.FrameReader().feed(stream) == [first, second]
    for cut in range(1, len(stream)):
        reader = procwire.FrameReader()
        assert reader.feed(stream[:cut]) + reader.feed(stream[cut:]) == [first, second], cut
    reader = procwire.FrameReader()
    assert [m for byte in range(len(stream)) for m in reader.feed(stream[byte : byte + 1])] == [first, second]


def test_a_frame_too_large_or_not_a_message_is_refused_even_alone_in_its_read() -> None:
    with pytest.raises(OSError, match="a frame of"):
        procwire.FrameReader().feed((procwire.MAX_FRAME + 1).to_bytes(4, "little"))
    with pytest.raises(OSError, match="not a message"):
        procwire.FrameReader().feed(len(data := pickle.dumps([1])).to_bytes(4, "little") + data)


def test_a_writer_writes_each_message_as_one_frame_to_its_descriptor() -> None:
    read, write = os.pipe()
    try:
        writer = procwire.Writer(write)
        writer.send(("ready",))
        writer.send(("loaded",))
        assert procwire.FrameReader().feed(os.read(read, 1 << 16)) == [("ready",), ("loaded",)]
    finally:
        os.close(read)
        os.close(write)
