"""The handler bridge's framing (``serve_channel``): pure functions and the control-write hook, no wasmtime."""

from __future__ import annotations

import json

import pytest

from backends.wasm.channel import EvalTicket, SessionChannel
from backends.wasm.serve_channel import GuestResponse, ServeChannel, ServeTicket, parse_response, request_payload
from backends.wasm.state import RunControl
from playground.core.output import OutputCapture


def frame(head: object, body: bytes = b"") -> bytes:
    payload = json.dumps(head).encode() + b"\n" + body
    return b"response %d\n" % len(payload) + payload


class _Ticker:
    def hold_ticker(self) -> None:
        pass

    def release_ticker(self) -> None:
        pass


def channel() -> ServeChannel:
    control = RunControl(wall_limit=None, cpu_limit=None)
    return ServeChannel(control, memory_limit=None, ticker=_Ticker(), on_ready=lambda _: None)


def ticket(kind: type[EvalTicket] = ServeTicket) -> EvalTicket:
    return kind(code=b"", output=OutputCapture(None), wall_limit=None, cpu_limit=None, on_done=lambda _: None)


def test_request_payload_is_a_json_line_then_the_raw_body() -> None:
    payload = request_payload("POST", "/a?b=1", [("Host", "x"), ("X-Two", "1"), ("X-Two", "2")], b"\x00\nraw")
    head, body = payload.split(b"\n", 1)
    assert json.loads(head) == {
        "method": "POST",
        "path": "/a?b=1",
        "headers": [["Host", "x"], ["X-Two", "1"], ["X-Two", "2"]],
    }
    assert body == b"\x00\nraw"


def test_request_payload_head_never_holds_a_raw_newline() -> None:
    payload = request_payload("GET", "/", [("X", "line\nbreak é")], b"")
    assert payload.count(b"\n") == 1


def test_parse_response() -> None:
    data = frame({"status": 201, "headers": [["content-type", "text/plain"]]}, b"body\nwith newline")
    assert parse_response(data) == GuestResponse(
        status=201, headers=(("content-type", "text/plain"),), body=b"body\nwith newline"
    )


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"ok\n",
        b"response \n{}\n",
        b"response 5\n{}\n",  # length does not match
        b"response 99999999999999\n{}\n",
        b"response x\n{}\n",
        frame({"status": 99}),
        frame({"status": 600}),
        frame({"status": True}),
        frame({"status": "200"}),
        frame({"status": 200, "headers": {"a": "b"}}),
        frame({"status": 200, "headers": [["a"]]}),
        frame({"status": 200, "headers": [["a", 1]]}),
        frame([200]),
        b"response 4\nnope",
        b"response 6\n{bad\n",
        b"junk" + frame({"status": 200}),
        frame({"status": 200}) + b"trailing",
    ],
)  # fmt: skip
def test_malformed_responses_are_refused(data: bytes) -> None:
    assert parse_response(data) is None


def test_a_response_write_sets_the_ticket_and_status_lines_still_count() -> None:
    ch = channel()
    t = ticket()
    assert isinstance(t, ServeTicket)
    ch.take_control(t, frame({"status": 204, "headers": []}))
    assert t.response is not None and t.response.status == 204
    assert t.status == b"ok"
    ch.take_control(t, b"oom\n")
    assert t.status == b"oom"
    ch.take_control(t, b"response 3\nabc")  # malformed: ignored, the earlier response stays
    assert t.response.status == 204


def test_a_plain_session_ticket_ignores_responses() -> None:
    ch = channel()
    t = ticket(EvalTicket)
    ch.take_control(t, frame({"status": 200}))
    assert t.status is None


def test_writes_with_no_request_running_are_dropped() -> None:
    ch = channel()
    assert ch.write_control(frame({"status": 200})) == len(frame({"status": 200}))
    assert isinstance(ch, SessionChannel)
