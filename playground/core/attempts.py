"""What a guest tried beyond its sandbox: ``Attempt`` records and the ``AttemptLog`` that collects them.

The point of the report is that a person trying an untrusted snippet
learns what it *would* have done ("read ~/.ssh/id_rsa, connect
api.github.com:443, run ``rm -rf ~``: all refused"), not only that it
could not.

Who may say what:

* ``Observer.HOST`` records come from code of ours outside the guest (the
  Wasm tier's WASI layer, the container engine's verdicts, the core's
  limit bookkeeping). The guest cannot forge or suppress them: it has no
  way to call ``AttemptLog.record`` with ``Observer.HOST``.
* ``Observer.GUEST`` records come from a hook inside the guest's runtime
  (a Python audit hook, a JavaScript driver), delivered over a channel
  the guest could also write to. They are always marked as such, however
  they are worded; a backend parses them with ``parse_guest_report``,
  which can only ever produce guest records. When the guest closes that
  channel, the backend records ``AttemptKind.REPORTING_TAMPERED`` as the host.

Bounds: repeats of the same (kind, target, verdict, observer) are one
record with a ``count``; at most ``MAX_RECORDS`` distinct records are
kept (``dropped`` counts what the cap cut), targets are cut at
``MAX_TARGET`` characters, and an in-guest report line longer than
``MAX_REPORT_LINE`` bytes is refused whole.

Thread-safe: a backend records from the guest's worker thread while the
core may read a snapshot.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

#: Distinct records kept per run (or per session eval).
MAX_RECORDS: Final = 200
#: Characters of a target kept (a path, host:port, command line).
MAX_TARGET: Final = 300
#: Bytes of one in-guest report line; a longer line is refused (and is itself a record).
MAX_REPORT_LINE: Final = 2048


class AttemptKind(enum.Enum):
    """What was attempted. The values are the words the CLI, MCP and JSON reports use."""

    FILE_READ = "file_read"
    FILE_WRITE = "file_write"
    FILE_DELETE = "file_delete"
    FILE_LIST = "file_list"
    NETWORK_CONNECT = "network_connect"
    DNS_LOOKUP = "dns_lookup"
    PROCESS_SPAWN = "process_spawn"
    ENV_LOOKUP = "env_lookup"
    SIGNAL = "signal"
    NATIVE_CODE = "native_code"
    LIMIT_REACHED = "limit_reached"
    #: The guest interfered with its runtime's in-guest reporting (closed the channel, wrote junk or forgeries).
    REPORTING_TAMPERED = "reporting_tampered"


class Observer(enum.Enum):
    """Who saw the attempt: code of ours outside the guest, or a hook inside the guest's runtime."""

    HOST = "host"
    GUEST = "guest"


#: What a guest may report about itself. Not LIMIT_REACHED or REPORTING_TAMPERED: only the host says those.
GUEST_KINDS: Final = frozenset(AttemptKind) - {AttemptKind.LIMIT_REACHED, AttemptKind.REPORTING_TAMPERED}

#: How each kind reads in a one-line summary ("read ~/.ssh/id_rsa").
_VERBS: Final = {
    AttemptKind.FILE_READ: "read",
    AttemptKind.FILE_WRITE: "write",
    AttemptKind.FILE_DELETE: "delete",
    AttemptKind.FILE_LIST: "list",
    AttemptKind.NETWORK_CONNECT: "connect",
    AttemptKind.DNS_LOOKUP: "look up",
    AttemptKind.PROCESS_SPAWN: "run",
    AttemptKind.ENV_LOOKUP: "read env",
    AttemptKind.SIGNAL: "send",
    AttemptKind.NATIVE_CODE: "load native code",
    AttemptKind.LIMIT_REACHED: "hit",
    AttemptKind.REPORTING_TAMPERED: "tamper with its reporting:",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """One kind of thing the guest tried, against one target, and what became of it.

    ``verdict`` says how it was refused, in words ("refused: not in the
    sandbox", "refused: /in is read-only", "refused: no network").
    ``first_at`` is seconds since the run started, of the first time;
    ``count`` how many times in all.
    """

    kind: AttemptKind
    target: str
    verdict: str
    observer: Observer
    count: int = 1
    first_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value, "target": self.target, "verdict": self.verdict,
            "observer": self.observer.value, "count": self.count, "first_at": round(self.first_at, 3),
        }  # fmt: skip

    def describe(self) -> str:
        """``read /home/u/.ssh/id_rsa`` (with ``x3`` for repeats, ``(guest report)`` when in-guest)."""
        text = f"{_VERBS[self.kind]} {self.target}"
        if self.count > 1:
            text += f" (x{self.count})"
        if self.observer is Observer.GUEST:
            text += " (guest report)"
        return text


class AttemptLog:
    """The attempts of one run; see the module docstring for who may record what and the bounds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[tuple[AttemptKind, str, str, Observer], Attempt] = {}
        self._start = time.monotonic()
        #: Distinct records the cap refused (their repeats are not counted again).
        self.dropped = 0
        self._dropped_keys: set[tuple[AttemptKind, str, str, Observer]] = set()

    def restart_clock(self) -> None:
        """``first_at`` counts from now (the guest's own start, after any compile)."""
        self._start = time.monotonic()

    def record(self, kind: AttemptKind, target: str, verdict: str, *, observer: Observer = Observer.HOST) -> None:
        """Count one attempt; a new (kind, target, verdict, observer) becomes a record while there is room."""
        key = (kind, _cut(target), verdict, observer)
        with self._lock:
            found = self._records.get(key)
            if found is not None:
                self._records[key] = Attempt(
                    kind=kind, target=key[1], verdict=verdict, observer=observer,
                    count=found.count + 1, first_at=found.first_at,
                )  # fmt: skip
                return
            if len(self._records) >= MAX_RECORDS:
                if key not in self._dropped_keys and len(self._dropped_keys) < 10 * MAX_RECORDS:
                    self._dropped_keys.add(key)
                    self.dropped += 1
                return
            self._records[key] = Attempt(
                kind=kind, target=key[1], verdict=verdict, observer=observer, first_at=time.monotonic() - self._start
            )

    def merge(self, attempts: Iterable[Attempt], dropped: int = 0) -> None:
        """Add the records of another log of the same run (a Wasm worker process's), their times kept."""
        with self._lock:
            for attempt in attempts:
                key = (attempt.kind, attempt.target, attempt.verdict, attempt.observer)
                found = self._records.get(key)
                if found is not None:
                    self._records[key] = dataclasses.replace(found, count=found.count + attempt.count)
                elif len(self._records) < MAX_RECORDS:
                    self._records[key] = attempt
                else:
                    self.dropped += 1
            self.dropped += dropped

    def snapshot(self) -> tuple[Attempt, ...]:
        """The records so far, in the order first seen."""
        with self._lock:
            return tuple(self._records.values())


def _cut(target: str, limit: int = MAX_TARGET) -> str:
    """``target`` made safe to show anywhere, at most ``limit`` characters.

    Targets are the guest's text (a path, a command line): every character
    that is not printable (a newline, a terminal escape, a lone surrogate
    from undecodable bytes) is written as ``\\xNN`` / ``\\uNNNN``, so a
    record can be printed on a terminal or put in JSON as it is.
    """
    if not target.isprintable():
        target = "".join(ch if ch.isprintable() else _escaped(ch) for ch in target)
    return target if len(target) <= limit else target[: limit - 1] + "…"


def _escaped(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def parse_guest_report(line: bytes, log: AttemptLog) -> None:
    """Record one line of an in-guest hook's report: ``{"kind": ..., "target": ..., "verdict": ...}``.

    Whatever the line says, the record is ``Observer.GUEST``. A kind the
    guest may not report, or a line that is not such an object, is not
    believed: the host records ``REPORTING_TAMPERED`` instead (a guest
    writing junk to its channel is worth knowing, not trusting).
    """
    if len(line) > MAX_REPORT_LINE:
        log.record(AttemptKind.REPORTING_TAMPERED, "an over-long line on the report channel", "ignored")
        return
    try:
        data = json.loads(line)
        kind = AttemptKind(data["kind"])
        target = str(data["target"])
        verdict = str(data.get("verdict", "refused"))
    except (ValueError, KeyError, TypeError, AttributeError):
        log.record(AttemptKind.REPORTING_TAMPERED, "a garbled line on the report channel", "ignored")
        return
    if kind not in GUEST_KINDS:
        log.record(AttemptKind.REPORTING_TAMPERED, f"a forged {kind.value} record on the report channel", "ignored")
        return
    log.record(kind, target, _cut(verdict, 120), observer=Observer.GUEST)


def summarize(attempts: Iterable[Attempt], *, dropped: int = 0, width: int = 6) -> str:
    """One line for a person: ``tried: read /home/u/.ssh/id_rsa, connect api.github.com:443 - all refused``.

    Empty when nothing was tried. At most ``width`` records are named; the
    rest are counted.
    """
    records = list(attempts)
    if not records:
        return ""
    named = [a.describe() for a in records[:width]]
    more = len(records) - len(named) + dropped
    if more:
        named.append(f"and {more} more")
    refused = all(a.verdict.startswith("refused") or a.kind is AttemptKind.LIMIT_REACHED for a in records)
    return "tried: " + ", ".join(named) + (" - all refused" if refused else "")


def report_json(attempts: Iterable[Attempt], *, dropped: int = 0) -> dict[str, Any]:
    """The full report as plain data (``--report json``, MCP structured content)."""
    records = list(attempts)
    summary = summarize(records, dropped=dropped)
    return {"attempts": [a.to_json() for a in records], "dropped": dropped, "summary": summary}
