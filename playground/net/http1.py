"""HTTP/1.1 wire handling of the egress proxy: h11 does the framing, the checks on top keep it strict.

h11 (python-hyper's sans-IO HTTP/1.1 state machine) parses the guest's
request head and body and writes the request to the upstream. It already
refuses malformed request lines and header lines, whitespace before a colon,
conflicting ``Content-Length`` values, any ``Transfer-Encoding`` but
``chunked``, more than one ``Transfer-Encoding`` or ``Host``, a missing
``Host`` in HTTP/1.1, oversized heads and malformed chunks. Where h11 is
lenient, the checks here refuse on top: obsolete line folding, bare LF or
CR, non-letter methods and HTTP versions other than 1.0 and 1.1 when the
head is read (:func:`read_request`); list-form ``Content-Length`` and both
``Content-Length`` and ``Transfer-Encoding`` before a body is forwarded
(:meth:`Request.check_framing`). Every refusal is a :class:`Refused`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import urllib.parse
from dataclasses import dataclass

import h11

from playground.net.hop_by_hop import not_forwarded

MAX_HEAD = 64 << 10
CHUNK = 64 << 10
REASONS = {
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    407: "Proxy Authentication Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
# h11 reads these leniently (RFC 9112 allows it); a proxy in front of other parsers must not.
_BARE_LF = re.compile(rb"(?<!\r)\n")
_BARE_CR = re.compile(rb"\r(?!\n)")
_OBS_FOLD = re.compile(rb"\n[ \t]")
_CONTENT_LENGTH = re.compile(rb"\ncontent-length[ \t]*:([^\r\n]*)", re.IGNORECASE)
_HEAD_END = re.compile(rb"\n\r?\n")  # where h11 ends a head


class Refused(Exception):
    """A request ends here with an error response (and a log entry)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(slots=True)
class Request:
    """A parsed request head; ``wire`` is the h11 connection positioned just after it."""

    method: str
    target: str
    headers: list[tuple[bytes, bytes]]  # as sent (names keep their case)
    chunked: bool
    wire: h11.Connection
    #: Why the body framing is refused ("" when it is fine); checked by :meth:`check_framing`.
    framing_problem: str = ""

    def header(self, name: str) -> list[str]:
        """Values of header ``name`` (lower case), decoded as latin-1."""
        key = name.encode("ascii")
        return [v.decode("latin-1") for k, v in self.headers if k.lower() == key]

    def check_framing(self) -> None:
        """Refuse ambiguous body framing (checked where a body will be forwarded, after the request is counted)."""
        if self.framing_problem:
            raise Refused(400, self.framing_problem)

    @property
    def early_data(self) -> bytes:
        """Bytes the guest sent after the head (a tunnel forwards them first)."""
        return self.wire.trailing_data[0]


def _head_problem(head: bytes) -> str:
    if _OBS_FOLD.search(head):
        return "obsolete header folding is refused"
    if _BARE_LF.search(head) or _BARE_CR.search(head):
        return "bare LF or CR in the request head is refused"
    return ""


def _framing_problem(head: bytes, names: set[bytes]) -> str:
    if b"content-length" in names and b"transfer-encoding" in names:
        return "both Content-Length and Transfer-Encoding"
    for match in _CONTENT_LENGTH.finditer(head):  # h11 reads "5, 5" as 5
        if not match.group(1).strip(b" \t").isdigit():
            return "bad Content-Length"
    return ""


async def read_request(reader: asyncio.StreamReader, idle: float) -> Request | None:
    """Read and check one request head. ``None``: the guest sent no complete head (nothing to log).

    Raises:
        Refused: 431 for a head over ``MAX_HEAD``, else 400.
        TimeoutError, ConnectionError: from reading (no request).
    """
    wire = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    received = bytearray()
    while True:
        try:
            event = wire.next_event()
        except h11.RemoteProtocolError as exc:
            end = _HEAD_END.search(received)
            head = bytes(received[: end.end() if end else len(received)])
            if exc.error_status_hint == 431 or len(head) > MAX_HEAD:
                raise Refused(431, "request head too large") from None
            raise Refused(400, _head_problem(head) or f"bad request head: {str(exc)[:200]}") from None
        if isinstance(event, h11.Request):
            break
        if event is not h11.NEED_DATA:  # pragma: no cover - h11 yields nothing else before a request
            raise Refused(400, "no request")
        data = await asyncio.wait_for(reader.read(CHUNK), idle)
        if not data:
            return None
        received += data
        wire.receive_data(data)
    head = bytes(received[: len(received) - len(wire.trailing_data[0])])
    if len(head) > MAX_HEAD:  # h11 only limits heads it is still waiting for
        raise Refused(431, "request head too large")
    if problem := _head_problem(head):
        raise Refused(400, problem)
    method = event.method.decode("ascii")
    if not method.isalpha() or event.http_version not in (b"1.0", b"1.1"):
        line = head.split(b"\r\n", 1)[0][:100].decode("latin-1")
        raise Refused(400, f"bad request line {line!r}")
    names = {name for name, _ in event.headers}
    return Request(
        method=method.upper(),
        target=event.target.decode("ascii"),
        headers=list(event.headers.raw_items()),
        chunked=b"transfer-encoding" in names,
        wire=wire,
        framing_problem=_framing_problem(head, names),
    )


def split_authority(authority: str, *, default_port: int | None = None) -> tuple[str, int]:
    host, port_text = authority, ""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise Refused(400, f"bad authority {authority[:100]!r}")
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise Refused(400, f"bad authority {authority[:100]!r}")
            port_text = rest[1:]
    elif ":" in authority:
        host, _, port_text = authority.rpartition(":")
    if not port_text:
        if default_port is None:
            raise Refused(400, f"CONNECT needs host:port, got {authority[:100]!r}")
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise Refused(400, f"bad port in {authority[:100]!r}")
    return host, int(port_text)


class Upstream:
    """The upstream side of a forwarded request: h11 as client writes the request and reads the status."""

    __slots__ = ("_seen", "_wire", "status")

    def __init__(self) -> None:
        self._wire = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self._seen = False
        #: The final (non-1xx) status of the response; 502 when it is not HTTP; 0 until known.
        self.status = 0

    def head(self, request: Request, parts: urllib.parse.SplitResult, raw_host: str, port: int) -> bytes:
        """The request head for the upstream: origin-form target, our ``Host``, ``Connection: close``."""
        dropped = not_forwarded(request.header("connection"))
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        host = raw_host if port == 80 else f"{raw_host}:{port}"
        headers = [(b"Host", host.encode("ascii"))]
        for name, value in request.headers:
            low = name.decode("ascii").lower()
            if low not in dropped and low != "host":
                headers.append((name, value))
        if request.chunked:
            headers.append((b"Transfer-Encoding", b"chunked"))
        headers.append((b"Connection", b"close"))
        try:
            return self._wire.send(h11.Request(method=request.method, target=path, headers=headers))
        except (h11.LocalProtocolError, UnicodeEncodeError) as exc:
            raise Refused(400, f"cannot forward this request: {str(exc)[:200]}") from None

    async def send_body(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, idle: float
    ) -> None:
        """Relay the guest's body (re-framed); pipelined requests after it are never read."""
        while True:
            try:
                event = request.wire.next_event()
            except h11.RemoteProtocolError as exc:
                what = "bad chunked body" if request.chunked else "bad body"
                raise Refused(400, f"{what}: {str(exc)[:200]}") from None
            if event is h11.NEED_DATA:
                data = await asyncio.wait_for(reader.read(CHUNK), idle)
                if not data:
                    raise asyncio.IncompleteReadError(b"", None)
                request.wire.receive_data(data)
            elif isinstance(event, h11.Data):
                writer.write(self._wire.send(h11.Data(data=event.data)))
                await writer.drain()
            elif isinstance(event, h11.EndOfMessage):  # the guest's trailers are dropped
                writer.write(self._wire.send(h11.EndOfMessage()))
                return
            else:  # pragma: no cover - h11 yields nothing else inside a body
                raise Refused(400, "bad body")

    def feed_response(self, data: bytes) -> None:
        """Look at relayed response bytes until the final status is known."""
        if self.status or not data:
            return
        self._seen = True
        self._wire.receive_data(data)
        self._read_status()

    def response_ended(self) -> None:
        """The upstream stopped sending: a started but unfinished or unreadable head is reported as 502."""
        if not self.status and self._seen:
            self._wire.receive_data(b"")
            self._read_status()

    def _read_status(self) -> None:
        while not self.status:
            try:
                event = self._wire.next_event()
            except h11.RemoteProtocolError:
                self.status = 502  # not HTTP: report it as such
                return
            if event is h11.NEED_DATA:
                return
            if isinstance(event, h11.Response):
                self.status = event.status_code
            elif not isinstance(event, h11.InformationalResponse):  # pragma: no cover
                self.status = 502


async def send_error(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = f"{status} {REASONS.get(status, 'Error')}: {reason}\n".encode("utf-8", "replace")
    extra = 'Proxy-Authenticate: Basic realm="playground"\r\n' if status == 407 else ""
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
        f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
    )
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        writer.write(head.encode("latin-1") + body)
        await asyncio.wait_for(writer.drain(), 5.0)


async def close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.wait_closed(), 1.0)
