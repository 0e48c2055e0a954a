"""HTTP/1.1 wire helpers of the egress proxy: parse a request head, frame bodies, answer errors.

Deliberately small and strict: obsolete line folding, conflicting framing,
odd chunk sizes and credentials in URLs are refused rather than interpreted.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from dataclasses import dataclass

MAX_HEAD = 64 << 10
CHUNK = 64 << 10
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)
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


class Refused(Exception):
    """A request ends here with an error response (and a log entry)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(slots=True)
class Request:
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name]


class StatusSniffer:
    """Finds the final (non-1xx) status code at the start of a relayed response."""

    __slots__ = ("_buf", "status")

    def __init__(self) -> None:
        self._buf = b""
        self.status = 0

    def feed(self, data: bytes) -> None:
        if self.status or len(self._buf) > MAX_HEAD:
            return
        self._buf += data
        while not self.status:
            end = self._buf.find(b"\r\n\r\n")
            line = self._buf.split(b"\r\n", 1)[0]
            parts = line.split(b" ", 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
                if b"\r\n" in self._buf:
                    self.status = 502  # not HTTP: report it as such
                return
            code = int(parts[1])
            if code >= 200:
                self.status = code
                return
            if end < 0:
                return
            self._buf = self._buf[end + 4 :]


def parse_head(head: bytes) -> Request:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError as exc:  # pragma: no cover - latin-1 decodes everything
        raise Refused(400, "undecodable request head") from exc
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
        raise Refused(400, f"bad request line {lines[0][:100]!r}")
    method, target, version = parts
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line:
            continue
        if line[0] in " \t":
            raise Refused(400, "obsolete header folding is refused")
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or any(c in name for c in " \t"):
            raise Refused(400, f"bad header line {line[:100]!r}")
        headers.append((name, value.strip()))
    return Request(method=method.upper(), target=target, version=version, headers=headers)


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


def body_framing(request: Request) -> tuple[int, bool]:
    lengths = request.header("content-length")
    encodings = request.header("transfer-encoding")
    if lengths and encodings:
        raise Refused(400, "both Content-Length and Transfer-Encoding")
    if encodings:
        if [e.strip().lower() for e in ",".join(encodings).split(",")] != ["chunked"]:
            raise Refused(400, "only Transfer-Encoding: chunked is supported")
        return 0, True
    if lengths:
        if len(set(lengths)) != 1 or not lengths[0].isdigit():
            raise Refused(400, "bad Content-Length")
        return int(lengths[0]), False
    return 0, False


def upstream_head(request: Request, parts: urllib.parse.SplitResult, raw_host: str, port: int, chunked: bool) -> bytes:
    named = {t.strip().lower() for v in request.header("connection") for t in v.split(",")}
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    host = raw_host if port == 80 else f"{raw_host}:{port}"
    lines = [f"{request.method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in request.headers if k.lower() not in HOP_BY_HOP and k.lower() not in named]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def copy_exact(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int, idle: float) -> None:
    while n > 0:
        data = await asyncio.wait_for(reader.read(min(n, CHUNK)), idle)
        if not data:
            raise asyncio.IncompleteReadError(b"", n)
        n -= len(data)
        writer.write(data)
        await writer.drain()


async def copy_chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, idle: float) -> None:
    while True:
        line = await asyncio.wait_for(reader.readuntil(b"\r\n"), idle)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise Refused(400, "bad chunk size") from None
        if size_text.startswith((b"-", b"+", b"0x", b"0X")) or size < 0:
            raise Refused(400, "bad chunk size")
        if size == 0:
            while (await asyncio.wait_for(reader.readuntil(b"\r\n"), idle)) != b"\r\n":
                pass  # trailers are dropped
            writer.write(b"0\r\n\r\n")
            return
        writer.write(b"%x\r\n" % size)
        await copy_exact(reader, writer, size, idle)
        if await asyncio.wait_for(reader.readexactly(2), idle) != b"\r\n":
            raise Refused(400, "bad chunk framing")
        writer.write(b"\r\n")


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
