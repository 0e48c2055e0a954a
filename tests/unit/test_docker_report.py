"""Issue #15, Docker tier: the in-guest report inside the trailer, and the egress log as host records."""

from __future__ import annotations

from backends.docker.report import END_OF_REPORT, START_OF_REPORT, read_report, record_net_log
from backends.docker.trailer import parse_trailer, report_line
from backends.docker.wrapper import REPORT_CAP
from playground.core import AttemptKind, AttemptLog, NetLogEntry, Observer

LINE = b'{"kind": "env_lookup", "target": "AWS_KEY", "verdict": "refused: not given to the program"}'


def test_the_report_section_is_split_off_before_the_counters_are_read() -> None:
    report = b"forks_refused 9\noom_kill 1\n" + LINE + b"\n"
    data = b"df\nM\ndfi\nM\n4096\nforks_refused 0\n" + report_line("M") + report + b"M\nTAR"
    trailer = parse_trailer(data, "M")
    assert (trailer.peak_memory, trailer.forks_refused, trailer.oom_kills) == (4096, 0, None)
    assert trailer.report == report and trailer.out_tar == b"TAR" and trailer.complete


def test_report_lines_are_guest_records_counted_and_forged_kinds_are_refused() -> None:
    log = AttemptLog()
    forged = b'{"kind": "limit_reached", "target": "x", "verdict": "refused"}'
    read_report(b"\n".join([START_OF_REPORT, LINE, LINE, forged, END_OF_REPORT, b""]), log, ended_by_itself=True)
    records = {(a.kind, a.target, a.observer, a.count) for a in log.snapshot()}
    assert records == {
        (AttemptKind.ENV_LOOKUP, "AWS_KEY", Observer.GUEST, 2),
        (AttemptKind.REPORTING_TAMPERED, "a forged limit_reached record on the report channel", Observer.HOST, 1),
    }


def test_a_report_that_started_and_did_not_end_is_a_record_unless_the_run_was_stopped() -> None:
    stopped = AttemptLog()
    read_report(START_OF_REPORT + b"\n" + LINE + b"\n", stopped, ended_by_itself=True)
    assert [a.kind for a in stopped.snapshot()] == [AttemptKind.ENV_LOOKUP, AttemptKind.REPORTING_TAMPERED]
    killed = AttemptLog()
    read_report(START_OF_REPORT + b"\n", killed, ended_by_itself=False)
    assert killed.snapshot() == ()
    no_hook = AttemptLog()
    read_report(b"", no_hook, ended_by_itself=True)
    assert no_hook.snapshot() == ()


def test_a_report_at_the_cap_is_said_to_be_cut() -> None:
    log = AttemptLog()
    report = (LINE + b"\n") * (REPORT_CAP // (len(LINE) + 1)) + b'{"kind": "env'
    read_report(report[:REPORT_CAP].ljust(REPORT_CAP, b" "), log, ended_by_itself=False)
    env, cut = log.snapshot()
    assert env.count == REPORT_CAP // (len(LINE) + 1)
    assert (cut.kind, cut.verdict, cut.observer) == (
        AttemptKind.REPORTING_TAMPERED, "cut: the rest not read", Observer.HOST
    )  # fmt: skip


def test_the_egress_log_becomes_host_records() -> None:
    log = AttemptLog()
    record_net_log(
        [
            NetLogEntry(timestamp=0, method="GET", url="http://api.example.test:8080/x", status_code=200),
            NetLogEntry(timestamp=0, method="CONNECT", url="github.com:443", status_code=403, error="not allowed"),
            NetLogEntry(timestamp=0, method="GET", url="http://h/", error="upstream closed without a response"),
        ],
        log,
    )
    assert [(a.kind, a.target, a.verdict, a.observer) for a in log.snapshot()] == [
        (AttemptKind.NETWORK_CONNECT, "api.example.test:8080", "allowed by the network policy", Observer.HOST),
        (AttemptKind.NETWORK_CONNECT, "github.com:443", "refused: not allowed", Observer.HOST),
        (AttemptKind.NETWORK_CONNECT, "h:80", "failed: upstream closed without a response", Observer.HOST),
    ]
