"""Issue #15: the attempt log's bounds and who may say what (``core.attempts``)."""

from __future__ import annotations

import json

from playground.core.attempts import (
    MAX_RECORDS,
    MAX_REPORT_LINE,
    MAX_TARGET,
    Attempt,
    AttemptKind,
    AttemptLog,
    Observer,
    parse_guest_report,
    report_json,
    summarize,
)


def test_repeats_are_one_record_with_a_count() -> None:
    log = AttemptLog()
    for _ in range(10_000):
        log.record(AttemptKind.FILE_READ, "/home/u/.ssh/id_rsa", "refused: not in the sandbox")
    (only,) = log.snapshot()
    assert only.count == 10_000 and only.observer is Observer.HOST and only.target == "/home/u/.ssh/id_rsa"


def test_the_cap_keeps_the_first_records_and_counts_the_rest() -> None:
    log = AttemptLog()
    for i in range(MAX_RECORDS + 50):
        log.record(AttemptKind.FILE_READ, f"/etc/f{i}", "refused")
    for i in range(MAX_RECORDS + 50):  # repeats of dropped ones are not counted again
        log.record(AttemptKind.FILE_READ, f"/etc/f{i}", "refused")
    records = log.snapshot()
    assert len(records) == MAX_RECORDS and log.dropped == 50
    assert records[0].target == "/etc/f0" and records[0].count == 2
    assert "read /etc/f5 (x2), and 244 more - all refused" in summarize(records, dropped=log.dropped)  # 6 named


def test_targets_are_cut_and_kept_on_one_line() -> None:
    log = AttemptLog()
    log.record(AttemptKind.PROCESS_SPAWN, "rm -rf ~\nx" + "y" * 1000, "refused")
    (record,) = log.snapshot()
    assert len(record.target) == MAX_TARGET and "\n" not in record.target and record.target.startswith("rm -rf ~\\x0ax")


def test_a_guest_report_is_always_a_guest_record() -> None:
    log = AttemptLog()
    line = {"kind": "network_connect", "target": "api.github.com:443", "verdict": "refused: no network",
            "observer": "host"}  # fmt: skip
    parse_guest_report(json.dumps(line).encode(), log)
    (record,) = log.snapshot()
    assert record.observer is Observer.GUEST and record.target == "api.github.com:443"
    assert record.describe() == "connect api.github.com:443 (guest report)"


def test_a_guest_cannot_report_what_only_the_host_says() -> None:
    log = AttemptLog()
    parse_guest_report(b'{"kind": "limit_reached", "target": "the process limit (64)"}', log)
    parse_guest_report(b'{"kind": "reporting_tampered", "target": "nothing"}', log)
    parse_guest_report(b"not json at all", log)
    parse_guest_report(b'["a", "list"]', log)
    parse_guest_report(b'{"kind": "file_read"}', log)  # no target
    parse_guest_report(b'{"kind": "file_read", "target": "' + b"x" * MAX_REPORT_LINE + b'"}', log)
    records = log.snapshot()
    assert {r.kind for r in records} == {AttemptKind.REPORTING_TAMPERED}
    assert all(r.observer is Observer.HOST for r in records)
    assert {r.target for r in records} == {
        "a forged limit_reached record on the report channel",
        "a forged reporting_tampered record on the report channel",
        "a garbled line on the report channel",
        "an over-long line on the report channel",
    }


def test_summary_and_json_report() -> None:
    records = [
        Attempt(kind=AttemptKind.FILE_READ, target="/home/u/.ssh/id_rsa", verdict="refused: not in the sandbox",
                observer=Observer.HOST),
        Attempt(kind=AttemptKind.NETWORK_CONNECT, target="api.github.com:443", verdict="refused: no network",
                observer=Observer.GUEST, count=3),
    ]  # fmt: skip
    assert summarize([]) == ""
    assert summarize(records) == (
        "tried: read /home/u/.ssh/id_rsa, connect api.github.com:443 (x3) (guest report) - all refused"
    )
    report = report_json(records)
    assert report["attempts"][1] == {
        "kind": "network_connect", "target": "api.github.com:443", "verdict": "refused: no network",
        "observer": "guest", "count": 3, "first_at": 0.0,
    }  # fmt: skip
    assert report["summary"] == summarize(records) and report["dropped"] == 0


def test_guest_text_in_a_record_is_safe_to_print() -> None:
    log = AttemptLog()
    log.record(AttemptKind.FILE_READ, "/etc/\x1b[2Jx\udcff\u2028", "refused")
    parse_guest_report(b'{"kind": "process_spawn", "target": "ls", "verdict": "refused\\u001b[31m"}', log)
    first, second = log.snapshot()
    assert first.target == "/etc/\\x1b[2Jx\\xff\\u2028"
    assert second.verdict == "refused\\x1b[31m"
    assert all(a.target.isprintable() and a.verdict.isprintable() for a in log.snapshot())


def test_merge_adds_a_worker_processs_records_with_their_times() -> None:
    theirs = AttemptLog()
    theirs.record(AttemptKind.FILE_READ, "/etc/passwd", "refused")
    theirs.record(AttemptKind.FILE_READ, "/etc/passwd", "refused")
    (attempt,) = theirs.snapshot()
    mine = AttemptLog()
    mine.record(AttemptKind.FILE_READ, "/etc/passwd", "refused")
    mine.merge(theirs.snapshot(), dropped=2)
    (merged,) = mine.snapshot()
    assert merged.count == 3 and mine.dropped == 2
    full = AttemptLog()
    for n in range(MAX_RECORDS):
        full.record(AttemptKind.FILE_READ, f"/x{n}", "refused")
    full.merge([attempt])
    assert full.dropped == 1 and len(full.snapshot()) == MAX_RECORDS
