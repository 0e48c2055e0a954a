"""The WASI side of the handler bridge: requests as stdin frames, responses on the control channel.

A served program is a session (``channel``) whose "evals" are HTTP
requests: the instance's driver (``qjs --serve``) loops reading one frame
from stdin, calls the program's handler, and writes the response to the
session's control channel (``/.session/control``), then reads again.
Everything about blocking, deadlines and when a request ends is
``SessionChannel``'s: a request ends when the driver waits for the next
one, never because of anything written anywhere.

Request (host -> guest, the frame's payload; the frame itself is
``SessionChannel``'s ``<length>\\n<payload>``)::

    {"method": "GET", "path": "/a?b=1", "headers": [["host", "..."], ...]}\\n<body bytes>

The JSON head is one line (``json.dumps`` never emits a raw newline); the
body is the rest, raw bytes.

Response (guest -> host, one ``fd_write`` on the control channel)::

    response <n>\\n<n bytes: {"status": 200, "headers": [[name, value], ...]}\\n<body bytes>>

A write that is not exactly one well-formed response is left to the
status-line parsing of ``SessionChannel`` (so ``oom`` still marks an eval
that ran out of memory) and is otherwise ignored. Guest stdout and stderr
go to the service's logs and are never parsed, so printing something that
looks like a response does nothing. Guest code could open the control
file itself and write a response: that only answers its own request,
which it can do anyway.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from backends.wasm.channel import EvalTicket, SessionChannel

#: The response marker at the start of a control write.
RESPONSE_TAG: Final = b"response "
#: Digits allowed in the response length (a response never exceeds guest memory, < 4 GiB).
_MAX_DIGITS: Final = 12


@dataclass(frozen=True, slots=True)
class GuestResponse:
    """One response as the guest's driver wrote it (validated)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(slots=True)
class ServeTicket(EvalTicket):
    """One request handed to the guest; ``response`` is the last well-formed response it wrote."""

    response: GuestResponse | None = field(default=None)


def request_payload(method: str, path_qs: str, headers: Sequence[tuple[str, str]], body: bytes) -> bytes:
    """The frame payload the driver expects for one request."""
    head = {"method": method, "path": path_qs, "headers": [[name, value] for name, value in headers]}
    return json.dumps(head, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n" + body


def parse_response(data: bytes) -> GuestResponse | None:
    """``data`` as one response write, or None when it is not exactly one well-formed response."""
    if not data.startswith(RESPONSE_TAG):
        return None
    end = data.find(b"\n", len(RESPONSE_TAG))
    digits = data[len(RESPONSE_TAG) : end]
    if end < 0 or not digits.isdigit() or len(digits) > _MAX_DIGITS:
        return None
    payload = data[end + 1 :]
    if len(payload) != int(digits):
        return None
    head_end = payload.find(b"\n")
    if head_end < 0:
        return None
    try:
        head = json.loads(payload[:head_end])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(head, dict):
        return None
    status = head.get("status")
    raw_headers = head.get("headers", [])
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return None
    if not isinstance(raw_headers, list):
        return None
    headers: list[tuple[str, str]] = []
    for item in raw_headers:
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            return None
        headers.append((item[0], item[1]))
    return GuestResponse(status=status, headers=tuple(headers), body=payload[head_end + 1 :])


class ServeChannel(SessionChannel):
    """A ``SessionChannel`` whose control channel also carries responses (see the module docstring)."""

    def take_control(self, ticket: EvalTicket, data: bytes) -> None:
        response = parse_response(data)
        if response is None or not isinstance(ticket, ServeTicket):
            super().take_control(ticket, data)
            return
        ticket.response = response
        ticket.status = b"ok"
