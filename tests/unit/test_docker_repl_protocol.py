"""The host side of the REPL wire protocol, fed hostile bytes (no daemon)."""

from __future__ import annotations

import pytest

from backends.docker.drivers import driver_for, drivers_dir, no_driver_reason, setup_script
from backends.docker.profile import PIDS_OVERHEAD, SESSION_PROCS, EngineKind, session_profile
from backends.docker.repl_protocol import (
    MAX_CONTROL,
    MAX_DATA,
    FrameReader,
    Kind,
    ProtocolError,
    command,
    frame,
    parse_control,
)
from playground.core import DEFAULT_LIMITS, Limits
from playground.packs import ALL_PACKS, bash, java, node

NONCE = "ab" * 16


def test_frames_split_across_chunks() -> None:
    stream = frame(Kind.STDOUT, b"hello") + frame(Kind.STDERR, b"") + frame(Kind.RESULT, f"{NONCE} 1 0".encode())
    reader = FrameReader()
    got = [f for i in range(len(stream)) for f in reader.feed(stream[i : i + 1])]
    assert [(f.kind, f.payload) for f in got] == [
        (Kind.STDOUT, b"hello"),
        (Kind.STDERR, b""),
        (Kind.RESULT, f"{NONCE} 1 0".encode()),
    ]
    assert reader.pending == 0


def test_data_that_looks_like_control_stays_data() -> None:
    fake = frame(Kind.RESULT, f"{NONCE} 1 0".encode())
    [only] = FrameReader().feed(frame(Kind.STDOUT, fake))
    assert only.kind is Kind.STDOUT and only.payload == fake


@pytest.mark.parametrize(
    "data",
    [b"Z00000000", b"O0000000g", b"O-0000001", b"OFFFFFFFF", b"o00000000", b"\x00" * 9, b"O 0000001x"],
)
def test_malformed_headers_are_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        FrameReader().feed(data)


def test_caps() -> None:
    with pytest.raises(ProtocolError, match="cap"):
        FrameReader().feed(b"O%08x" % (MAX_DATA + 1))
    with pytest.raises(ProtocolError, match="cap"):
        FrameReader().feed(b"R%08x" % (MAX_CONTROL + 1))
    assert FrameReader().feed(b"O%08x" % MAX_DATA) == []  # waits for the payload


def test_control_needs_the_nonce_and_shape() -> None:
    ok = parse_control(FrameReader().feed(frame(Kind.RESULT, f"{NONCE} 7 -2".encode()))[0], NONCE)
    assert (ok.kind, ok.eval_id, ok.status) == (Kind.RESULT, 7, -2)
    ready = parse_control(FrameReader().feed(frame(Kind.READY, f"{NONCE} 17".encode()))[0], NONCE)
    assert (ready.kind, ready.pid) == (Kind.READY, 17)
    for payload in [f"{'cd' * 16} 1 0", f"{NONCE} 1", f"{NONCE} x 0", f"{NONCE}1 0", "", f"{NONCE} 1 0 9",
                    f"{NONCE} +1 0", f"{NONCE} 1 0x1", f"{NONCE} 1 1_0"]:  # fmt: skip
        with pytest.raises(ProtocolError):
            parse_control(FrameReader().feed(frame(Kind.RESULT, payload.encode()))[0], NONCE)
    # READY names the interpreter's process (group) for Ctrl-C: never 0, 1 (init) or a negative number.
    for payload in [NONCE, f"{NONCE} 1 0", f"{NONCE} 0", f"{NONCE} 1", f"{NONCE} -5", f"{NONCE} 99999999"]:
        with pytest.raises(ProtocolError):
            parse_control(FrameReader().feed(frame(Kind.READY, payload.encode()))[0], NONCE)
    with pytest.raises(ProtocolError):
        parse_control(FrameReader().feed(frame(Kind.STDOUT, NONCE.encode()))[0], NONCE)


def test_command_is_length_prefixed() -> None:
    assert command(3, b"echo 'a\nb'") == b"C 3 10\necho 'a\nb'"


def test_drivers_exist_and_others_are_refused() -> None:
    drivers = [d for d in map(driver_for, ALL_PACKS) if d is not None]
    assert len(drivers) >= 2
    for driver in drivers:
        assert (drivers_dir() / driver.resource).is_file()
    assert no_driver_reason(bash.PACK) is None and no_driver_reason(node.PACK) is None
    assert no_driver_reason(java.PACK) == "no REPL driver for java"


def test_setup_script_reads_exactly_the_archive() -> None:
    driver = driver_for(node.PACK)
    assert driver is not None
    script = setup_script(driver, 10240)
    assert "head -c 10240 | tar -x -o -f - -C /" in script
    assert script.splitlines()[-1] == "exec node /tmp/.pg/driver.js"


def test_session_profile_drops_cpu_rlimit_and_adds_driver_pids() -> None:
    assert bash.PACK.docker is not None
    limits = DEFAULT_LIMITS.merged(Limits(cpu_time=2.0, max_procs=10)).validate()
    profile = session_profile(limits, bash.PACK.docker, EngineKind.DOCKER)
    host = profile["host_config"]
    assert isinstance(host, dict)
    assert "cpu" not in {u["name"] for u in host["ulimits"]}
    assert host["pids_limit"] == 10 + PIDS_OVERHEAD + SESSION_PROCS
    assert host["network_mode"] == "none" and host["read_only"] is True and host["cap_drop"] == ["ALL"]
