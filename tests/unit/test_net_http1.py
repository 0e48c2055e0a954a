"""The egress proxy's request parser (h11 plus our checks on top), attacked from several directions.

No sockets: bytes go into an ``asyncio.StreamReader`` and come out as a
``Request`` or a ``Refused`` (400, or 431 for an oversized head).
"""

from __future__ import annotations

import asyncio
import urllib.parse

import pytest

from playground.net.hop_by_hop import HOP_BY_HOP, not_forwarded
from playground.net.http1 import MAX_HEAD, Refused, Request, Upstream, read_request


async def parse(data: bytes, *, eof: bool = True) -> Request | None:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return await read_request(reader, 1.0)


async def refused(data: bytes) -> Refused:
    with pytest.raises(Refused) as info:
        request = await parse(data)
        assert request is not None
        request.check_framing()
    return info.value


async def body_of(request: Request, more: bytes = b"") -> bytes:
    """What the upstream receives for ``request``'s body (after the head)."""

    class Sink:
        def __init__(self) -> None:
            self.data = b""

        def write(self, data: bytes) -> None:
            self.data += data

        async def drain(self) -> None:
            return None

    reader = asyncio.StreamReader()
    reader.feed_data(more)
    reader.feed_eof()
    wire = Upstream()
    wire.head(request, urllib.parse.urlsplit(request.target), "public.example.test", 80)
    sink = Sink()
    await wire.send_body(request, reader, sink, 1.0)  # type: ignore[arg-type]
    return sink.data


HEAD = b"POST http://public.example.test/echo HTTP/1.1\r\nHost: public.example.test\r\n"


async def test_a_plain_request_parses() -> None:
    request = await parse(b"get http://public.example.test/a?b=c HTTP/1.1\r\nHost: x\r\nX-A:  1 \r\n\r\n")
    assert request is not None
    assert request.method == "GET" and request.target == "http://public.example.test/a?b=c"
    assert request.header("x-a") == ["1"] and not request.chunked
    assert request.early_data == b""


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        b"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n",
    ],
)
async def test_smuggling_content_length_and_transfer_encoding(framing: bytes) -> None:
    refusal = await refused(HEAD + framing + b"\r\n5\r\nhello\r\n0\r\n\r\n")
    assert refusal.status == 400 and refusal.reason == "both Content-Length and Transfer-Encoding"


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nContent-Length: 6\r\n",
        b"Content-Length: 5, 6\r\n",
        b"Content-Length: 5, 5\r\n",  # h11 would read 5; the list form is refused as before
        b"Content-Length: +5\r\n",
        b"Content-Length: -1\r\n",
        b"Content-Length: 0x5\r\n",
        b"Content-Length: 5 5\r\n",
        b"Content-Length: \r\n",
        b"Content-Length: 123456789012345678901\r\n",
    ],
)
async def test_bad_or_conflicting_content_length(framing: bytes) -> None:
    refusal = await refused(HEAD + framing + b"\r\nhello")
    assert refusal.status == 400


async def test_repeated_equal_content_length_is_one_length() -> None:
    request = await parse(
        HEAD + b"Content-Length: 5\r\ncontent-length: 5\r\n\r\nhelloGET http://evil.test/ HTTP/1.1\r\n"
    )
    assert request is not None
    request.check_framing()
    assert [v for k, v in request.headers if k.lower() == b"content-length"] == [b"5"]
    assert await body_of(request) == b"hello"  # the pipelined rest is never read


@pytest.mark.parametrize(
    "framing",
    [
        b"Transfer-Encoding: chunked, chunked\r\n",
        b"Transfer-Encoding: gzip, chunked\r\n",
        b"Transfer-Encoding: identity\r\n",
        b"Transfer-Encoding: xchunked\r\n",
        b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: \x0bchunked\r\n",
    ],
)
async def test_only_plain_chunked_transfer_encoding(framing: bytes) -> None:
    refusal = await refused(HEAD + framing + b"\r\n0\r\n\r\n")
    assert refusal.status == 400  # h11 hints 501; the proxy answers every bad head 400 as before


@pytest.mark.parametrize(
    "head",
    [
        HEAD + b"X: a\r\n folded\r\n\r\n",
        HEAD + b"X: a\r\n\tfolded\r\n\r\n",
        b"POST http://public.example.test/ HTTP/1.1\r\n Host: public.example.test\r\n\r\n",
    ],
)
async def test_obsolete_line_folding_is_refused(head: bytes) -> None:
    refusal = await refused(head)
    assert refusal.status == 400 and refusal.reason == "obsolete header folding is refused"


@pytest.mark.parametrize(
    "head",
    [
        b"GET http://public.example.test/ HTTP/1.1\nHost: public.example.test\n\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: public.example.test\nX: y\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: public.example.test\r\nX: y\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: public.example.test\r\nX: a\rY: b\r\n\r\n",
    ],
)
async def test_bare_lf_and_cr_are_refused(head: bytes) -> None:
    refusal = await refused(head)
    assert refusal.status == 400


@pytest.mark.parametrize(
    "head",
    [
        b"GET http://public.example.test/ HTTP/1.1\r\nX: " + b"a" * MAX_HEAD + b"\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\n" + b"X-Many: aaaaaaaaaaaaaaaa\r\n" * 4000 + b"\r\n",
        b"GET http://public.example.test/" + b"a" * (MAX_HEAD + 10) + b" HTTP/1.1\r\n\r\n",
    ],
)
async def test_huge_heads_are_431(head: bytes) -> None:
    refusal = await refused(head)
    assert refusal.status == 431 and "too large" in refusal.reason


async def test_huge_head_without_end_is_431_before_eof() -> None:
    with pytest.raises(Refused) as info:
        await parse(b"GET http://public.example.test/ HTTP/1.1\r\nX: " + b"a" * (2 * MAX_HEAD), eof=False)
    assert info.value.status == 431


@pytest.mark.parametrize(
    "head",
    [
        b"GET http://public.example.test/ HTTP/1.1\r\n\r\n",  # HTTP/1.1 needs Host
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost : a\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\nX Y: z\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\n: z\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\nno colon\r\n\r\n",
        b"M-SEARCH http://public.example.test/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://public.example.test/ HTTP/2.0\r\nHost: a\r\n\r\n",
        b"GET http://public.example.test/ HTTP/1.2\r\nHost: a\r\n\r\n",
        b"GET http://public.example.test/ HTTP/0.9\r\nHost: a\r\n\r\n",
        b"GET http://public.example.test/\r\nHost: a\r\n\r\n",
        b"GET  http://public.example.test/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://public.example.test/\xff HTTP/1.1\r\nHost: a\r\n\r\n",
        b"\r\nGET http://public.example.test/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # TLS sent to the plain proxy port
        b"NOT HTTP\r\n\r\n",
    ],
)
async def test_malformed_heads_are_400(head: bytes) -> None:
    refusal = await refused(head)
    assert refusal.status == 400


async def test_http10_without_host_parses() -> None:
    request = await parse(b"GET http://public.example.test/ HTTP/1.0\r\n\r\n")
    assert request is not None and request.header("host") == []


async def test_incomplete_head_is_no_request() -> None:
    assert await parse(b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\n") is None
    assert await parse(b"") is None


@pytest.mark.parametrize(
    "chunks",
    [
        b"0x5\r\nhello\r\n0\r\n\r\n",
        b"-5\r\nhello\r\n0\r\n\r\n",
        b"+5\r\nhello\r\n0\r\n\r\n",
        b"g\r\nhello\r\n0\r\n\r\n",
        b"5 5\r\nhello\r\n0\r\n\r\n",
        b"\r\nhello\r\n0\r\n\r\n",
        b"1" * 21 + b"\r\nhello\r\n0\r\n\r\n",
        b"5\r\nhelloXX0\r\n\r\n",  # no CRLF after the chunk data
        b"5\nhello\r\n0\r\n\r\n",  # bare LF after the size
    ],
)
async def test_bad_chunks_are_refused(chunks: bytes) -> None:
    request = await parse(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
    assert request is not None and request.chunked
    with pytest.raises(Refused) as info:
        await body_of(request, chunks)
    assert info.value.status == 400 and "bad chunk" in info.value.reason


async def test_chunked_body_is_reframed_and_trailers_dropped() -> None:
    request = await parse(HEAD + b"Transfer-Encoding: Chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-Trailer: y\r\n\r\nJUNK")
    assert request is not None and request.chunked
    assert await body_of(request) == b"5\r\nhello\r\n0\r\n\r\n"


async def test_short_body_is_a_lost_connection() -> None:
    request = await parse(HEAD + b"Content-Length: 10\r\n\r\nhello")
    assert request is not None
    with pytest.raises(asyncio.IncompleteReadError):
        await body_of(request)


async def test_upstream_head_drops_hop_by_hop_and_pins_host() -> None:
    request = await parse(
        b"GET http://public.example.test:8080/p?q=1#frag HTTP/1.1\r\nHost: evil.test\r\n"
        b"Connection: keep-alive, X-Secret\r\nX-Secret: 1\r\nProxy-Authorization: Bearer t\r\n"
        b"Proxy-Connection: x\r\nTE: trailers\r\nUpgrade: h2c\r\nKeep-Alive: 5\r\nX-Kept: yes\r\n\r\n"
    )
    assert request is not None
    head = Upstream().head(request, urllib.parse.urlsplit(request.target), "public.example.test", 8080)
    assert head == (
        b"GET /p?q=1 HTTP/1.1\r\nHost: public.example.test:8080\r\nX-Kept: yes\r\nConnection: close\r\n\r\n"
    )


async def test_upstream_status_skips_informational_and_flags_non_http() -> None:
    request = await parse(b"GET http://public.example.test/ HTTP/1.1\r\nHost: a\r\n\r\n")
    assert request is not None
    wire = Upstream()
    wire.head(request, urllib.parse.urlsplit(request.target), "public.example.test", 80)
    wire.feed_response(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 20")
    assert wire.status == 0
    wire.feed_response(b"4 No Content\r\n\r\n")
    assert wire.status == 204
    other = Upstream()
    other.head(request, urllib.parse.urlsplit(request.target), "public.example.test", 80)
    other.feed_response(b"SSH-2.0-OpenSSH\r\n")
    other.response_ended()
    assert other.status == 502
    silent = Upstream()
    silent.head(request, urllib.parse.urlsplit(request.target), "public.example.test", 80)
    silent.response_ended()
    assert silent.status == 0  # nothing at all: "upstream closed without a response"


def test_one_hop_by_hop_list_for_both_proxies() -> None:
    from playground.net import http1
    from playground.serve import forward

    assert forward.HOP_BY_HOP is HOP_BY_HOP
    assert forward.not_forwarded is not_forwarded is http1.not_forwarded
    assert not hasattr(forward, "_HOP_BY_HOP")
    assert not hasattr(http1, "_HOP_BY_HOP")
    assert {"connection", "transfer-encoding", "proxy-authorization", "upgrade", "te"} <= HOP_BY_HOP


def test_not_forwarded_adds_the_names_connection_lists() -> None:
    assert not_forwarded([]) == HOP_BY_HOP
    assert not_forwarded(["keep-alive, X-Secret", " x-other ,, "]) == HOP_BY_HOP | {"x-secret", "x-other"}
