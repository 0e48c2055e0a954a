"""The Docker tier's record of what a guest tried (``core.attempts``): the in-guest report and the host's own.

In-guest report: a hook inside the guest's runtime (``packs.python_docker_watch``,
``packs.node_watch``) writes one JSON line per attempt to the descriptor the
root wrapper opened for it (``wrapper.REPORT_FD``); once no guest process is
left, the wrapper copies what was written into the trailer, after the
memory counters (``trailer.report_line``). It is the trailer's method, so the
same guarantees hold: the host reads the report only from behind the run's
secret marker, which the guest cannot know, so report lines the guest prints
on stdout, stderr or any other descriptor stay its output; and whatever the
channel holds is parsed with ``parse_guest_report``, which can only make
``Observer.GUEST`` records (or a host record that the channel was misused).

``START_OF_REPORT`` / ``END_OF_REPORT``: a hook writes the first when it is
installed and the second when its runtime exits normally. A report that
started and did not end, in a run that ended by itself (no limit, no
signal), means the program stopped its reporting (closed the channel,
removed the exit handler, left through ``os._exit``): a host record.

The in-guest records all carry the time the host read the report (the end
of the run) as ``first_at``: the report has no clock the host could trust.

Host records (``Observer.HOST``) come from the kernel, the engine and our
own code, and the guest cannot write any of them:

* the pids cgroup's count of refused forks (``max_procs`` reached: the fork
  bomb), recorded by the core from ``Outcome.limits_reached``;
* without a network, every connect and DNS query, refused inside the run's
  own network namespace (``sinkhole``);
* on ``NetPolicy`` runs, every request the egress proxy saw
  (``record_net_log``);
* the commands the program spawns, from the kernel's process events
  (``spawnwatch``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from backends.docker.wrapper import REPORT_CAP
from playground.core import NetLogEntry
from playground.core.attempts import AttemptKind, AttemptLog, Observer, parse_guest_report

#: What a hook writes first, and last when its runtime ends normally.
START_OF_REPORT: Final = b'{"start": true}'
END_OF_REPORT: Final = b'{"end": true}'


def read_report(report: bytes, attempts: AttemptLog, *, ended_by_itself: bool) -> None:
    """Record the lines of an in-guest report (``Trailer.report``) as guest records; see the module docstring.

    ``ended_by_itself``: the guest's program exited with a status below 128
    and no limit stopped it, so a started report must have ended.
    """
    lines = report.split(b"\n")
    tail = lines.pop()  # b"" when the report ends with a newline
    started = ended = False
    for line in lines:
        if not line:
            continue
        if line == START_OF_REPORT:
            started = True
        elif line == END_OF_REPORT:
            ended = True
        else:
            parse_guest_report(line, attempts)
    if len(report) >= REPORT_CAP:
        attempts.record(
            AttemptKind.REPORTING_TAMPERED, f"an in-guest report over {REPORT_CAP >> 20} MiB", "cut: the rest not read"
        )
    elif tail:
        parse_guest_report(tail, attempts)  # an unfinished line
    if started and not ended and ended_by_itself:
        attempts.record(
            AttemptKind.REPORTING_TAMPERED,
            "stopped its in-guest report before the end (closed the channel, removed the hook or skipped the exit)",
            "noted",
        )


def record_net_log(entries: Iterable[NetLogEntry], attempts: AttemptLog) -> None:
    """Every request the egress proxy saw, as a host record: ``network_connect`` ``host:port``.

    The verdict is the proxy's: ``allowed by the network policy`` (with the
    status), or ``refused: <why>``.
    """
    for entry in entries:
        attempts.record(AttemptKind.NETWORK_CONNECT, _place(entry), _verdict(entry), observer=Observer.HOST)


def _place(entry: NetLogEntry) -> str:
    url = entry.url
    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme or "", 0)
    except ValueError:
        return url
    if not parts.hostname:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}" if port else host


def _verdict(entry: NetLogEntry) -> str:
    """The proxy's refusals carry an error and its status (403, 407, 429, ...); a lost exchange has no status."""
    if not entry.error or 100 <= entry.status_code < 400:
        return "allowed by the network policy"
    if entry.status_code >= 400:
        return f"refused: {entry.error}"
    return f"failed: {entry.error}"
