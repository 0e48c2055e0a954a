"""The host side of the REPL drivers' wire protocol (``resources/drivers/docker_*_repl.*``).

Container stdout carries only frames written by the driver process: one
ASCII type letter, eight lowercase hex digits of payload length, the payload.

* ``O``/``E``: guest stdout/stderr bytes. Whatever the guest prints - even
  bytes that look exactly like a control frame, nonce included - travels
  inside one of these, so it is never parsed as anything but data.
* ``Y`` (ready), ``R`` (an eval finished) and ``X`` (the interpreter exited):
  the session's 128-bit nonce, then the interpreter's process id for Y
  (it leads its own process group: Ctrl-C signals that group) and the eval
  id and status for R and X.

Everything read here is treated as hostile: an unknown type, a length that
is not eight hex digits, a frame above its cap, or a control frame without
the session's nonce is a ``ProtocolError`` (the session is then killed).

Commands to the driver: ``C <id> <length>\\n`` followed by the code's bytes.
A driver with a keyboard (``drivers.Driver.keyboard``) also takes ``L``
(the same, and the eval's stdin is the keyboard), then, while that eval
runs, ``I <length>\\n`` plus typed bytes and ``D\\n`` (end of input); after
that eval's result the host sends ``E\\n`` and only then the next command.
"""

from __future__ import annotations

import enum
import hmac
import re
from dataclasses import dataclass
from typing import Final

#: Header: type letter + 8 hex digits.
HEADER: Final = 9
#: Largest data frame accepted (drivers send at most 64 KiB).
MAX_DATA: Final = 1 << 20
#: Largest control frame accepted.
MAX_CONTROL: Final = 4096
_HEX: Final = frozenset(b"0123456789abcdef")
_DECIMAL: Final = re.compile(rb"-?[0-9]{1,12}")


class ProtocolError(Exception):
    """The container's stdout is not a well-formed frame stream from our driver."""


class Kind(enum.Enum):
    STDOUT = "O"
    STDERR = "E"
    READY = "Y"
    RESULT = "R"
    EXITED = "X"


@dataclass(frozen=True, slots=True)
class Frame:
    kind: Kind
    payload: bytes


@dataclass(frozen=True, slots=True)
class Control:
    """A control frame whose nonce matched: ``eval_id`` and ``status`` (0 for READY), READY's ``pid``."""

    kind: Kind
    eval_id: int
    status: int
    pid: int = 0


class FrameReader:
    """Incremental, strict parser of the driver's frames. One reader per session."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        """Add bytes; return every complete frame.

        Raises:
            ProtocolError: a malformed header or an oversized frame.
        """
        self._buf += data
        frames: list[Frame] = []
        while len(self._buf) >= HEADER:
            letter = chr(self._buf[0])
            try:
                kind = Kind(letter)
            except ValueError:
                raise ProtocolError(f"unknown frame type {letter!r}") from None
            digits = bytes(self._buf[1:HEADER])
            if not _HEX.issuperset(digits):
                raise ProtocolError(f"bad frame length {digits!r}")
            size = int(digits, 16)
            cap = MAX_DATA if kind in (Kind.STDOUT, Kind.STDERR) else MAX_CONTROL
            if size > cap:
                raise ProtocolError(f"{kind.name} frame of {size} bytes is above the cap of {cap}")
            if len(self._buf) < HEADER + size:
                break
            frames.append(Frame(kind, bytes(self._buf[HEADER : HEADER + size])))
            del self._buf[: HEADER + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back."""
        return len(self._buf)


def parse_control(frame: Frame, nonce: str) -> Control:
    """Check the nonce of a READY/RESULT/EXITED frame and read its numbers.

    Raises:
        ProtocolError: wrong nonce, wrong shape, or not a control frame.
    """
    if frame.kind in (Kind.STDOUT, Kind.STDERR):
        raise ProtocolError("not a control frame")
    parts = frame.payload.split(b" ")
    if not parts or not hmac.compare_digest(parts[0], nonce.encode()):
        raise ProtocolError(f"{frame.kind.name} frame without the session nonce")
    expected = 2 if frame.kind is Kind.READY else 3
    if len(parts) != expected or not all(_DECIMAL.fullmatch(part) for part in parts[1:]):
        raise ProtocolError(f"malformed {frame.kind.name} frame")
    if frame.kind is Kind.READY:
        pid = int(parts[1])
        if not 1 < pid < 1 << 22:
            raise ProtocolError("READY frame with an impossible interpreter pid")
        return Control(frame.kind, 0, 0, pid=pid)
    return Control(frame.kind, int(parts[1]), int(parts[2]))


def command(eval_id: int, code: bytes, *, keyboard: bool = False) -> bytes:
    """The bytes that ask the driver to run ``code`` as eval ``eval_id`` (``keyboard``: its stdin is typed)."""
    return b"%s %d %d\n" % (b"L" if keyboard else b"C", eval_id, len(code)) + code


def typed(data: bytes) -> bytes:
    """Keyboard bytes for the running ``L`` eval."""
    return b"I %d\n" % len(data) + data


#: End of the running ``L`` eval's input (Ctrl-D), and end of its keyboard (sent after its result).
TYPED_EOF: Final = b"D\n"
KEYBOARD_END: Final = b"E\n"


def frame(kind: Kind, payload: bytes) -> bytes:
    """Encode one frame (what the drivers write; used by tests)."""
    return kind.value.encode() + b"%08x" % len(payload) + payload
