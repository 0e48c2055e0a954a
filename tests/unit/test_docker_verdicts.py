"""The Docker tier's verdicts come from the kernel's counters, never from a guess (issue #17).

Pure parts: the trailer's counter lines, the OOM and process-limit
verdicts, and the wrapper's settle loop (builtins only, a ``kill`` dash
understands). The real runs are in ``tests/integration/docker/test_verdicts.py``.
"""

from __future__ import annotations

from backends.docker.trailer import Trailer, parse_counters, parse_trailer
from backends.docker.usage import kernel_oom_kill, limits_reached
from backends.docker.wrapper import _SETTLE, expand, wrapper_script
from playground.packs import bash, java


def test_counters_follow_the_peak_line() -> None:
    counters = parse_counters("134217728\noom_kill 2\nforks_refused 17\n")
    assert counters == {"peak": 134217728, "oom_kill": 2, "forks_refused": 17}


def test_counters_without_a_peak_and_with_junk() -> None:
    assert parse_counters("oom_kill 0\nforks_refused x\nnonsense\n-5\n") == {"oom_kill": 0}
    assert parse_counters("") == {}


def test_trailer_carries_the_counters_and_none_when_absent() -> None:
    data = b"df\nM\ndfi\nM\n4096\noom_kill 1\nforks_refused 0\nM\nTAR"
    trailer = parse_trailer(data, "M")
    assert (trailer.peak_memory, trailer.oom_kills, trailer.forks_refused) == (4096, 1, 0)
    old = parse_trailer(b"df\nM\ndfi\nM\n4096\nM\nTAR", "M")
    assert (old.peak_memory, old.oom_kills, old.forks_refused) == (4096, None, None)


def test_oom_only_when_the_kernel_says_so() -> None:
    # A peak at the limit is page cache the kernel reclaims (a compiler reading its libraries), not an OOM kill.
    at_limit = Trailer(peak_memory=128 << 20, oom_kills=0)
    assert not kernel_oom_kill(at_limit, oom_killed=False)
    assert kernel_oom_kill(Trailer(peak_memory=1 << 20, oom_kills=1), oom_killed=False)
    assert kernel_oom_kill(None, oom_killed=True)
    assert not kernel_oom_kill(None, oom_killed=False)
    assert not kernel_oom_kill(Trailer(), oom_killed=False)  # a cgroup that reports no counter


def test_process_limit_reached_when_forks_were_refused() -> None:
    assert limits_reached(Trailer(forks_refused=3)) == ("max_procs",)
    assert limits_reached(Trailer(forks_refused=0)) == ()
    assert limits_reached(Trailer()) == ()
    assert limits_reached(None) == ()


def test_settle_loop_forks_nothing_and_kills_with_a_kill_dash_understands() -> None:
    """After a fork bomb the pids limit is full: a shell that forks there dies (dash exits 2), losing the trailer."""
    loop = "\n".join(_SETTLE)
    assert "sleep" not in loop and "$(" not in loop and "`" not in loop
    # dash's kill reads a bare -1 as an option ("Illegal option -1") and kills nothing.
    assert "kill -s KILL -- -1" in loop


def test_wrapper_reports_the_counters_after_the_peak() -> None:
    script = wrapper_script(bash.PACK.docker, [])  # type: ignore[arg-type]
    peak = script.index("memory.max_usage_in_bytes")
    assert peak < script.index("memory.oom_control") < script.index("pids.events")
    assert script.index("pids.events") < script.index("tar -c -f - -C /out")


def test_stem_names_the_java_class() -> None:
    words = expand(("java", "-cp", "/work", "{stem}", "{args}"), "/work/Hello.java", ["a"])
    assert words == ["java", "-cp", "/work", "Hello", "a"]
    assert java.PACK.docker is not None and "{stem}" in java.PACK.docker.cmd
