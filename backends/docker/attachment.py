"""One container's attached stdio: the multiplexed stream read frame by frame, and its stdin.

Why its own module: runs, sessions and the warm pool hold these streams,
often for long (a parked container's stays open until its run), and what
matters about them (half-closing stdin, TLS's limits, unblocking a reader
from another thread) is socket work, not API calls. Only ``Engine.attach``
makes one.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from typing import Any

from backends.docker.engine_types import EngineError, EngineUnreachable


class Attachment:
    """The raw, multiplexed stdio stream of one container (attached before start).

    ``send_and_close_stdin`` writes stdin and half-closes it; ``frames``
    yields ``(stream, bytes)`` with stream 1 = stdout, 2 = stderr, or
    ``(0, b"")`` when ``poll`` seconds passed without data (so the reader
    can check its deadline), and ends at EOF. ``close`` is idempotent and
    may be called from any thread to unblock the reader.
    """

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        sock = getattr(raw, "_sock", raw)
        if not isinstance(sock, socket.socket):
            raise EngineError(f"attach returned an unsupported stream type {type(raw).__name__}")
        self._sock: socket.socket = sock
        self._closed = False

    def send_and_close_stdin(self, data: bytes) -> None:
        """Write ``data`` and half-close stdin, so the container reads EOF after it.

        Over TLS (a ``tcp://`` daemon) stdin stays open: Python's ``ssl``
        cannot send its close_notify and keep reading (``shutdown`` drops
        the TLS layer; ``unwrap`` fails on output still arriving). Nothing we run
        needs that EOF: ``tar`` stops at the archive's end marker, and the
        guest's stdin is a file from the archive (see ``wrapper``).
        """
        try:
            self._sock.settimeout(None)
            self._sock.sendall(data)
            if not isinstance(self._sock, ssl.SSLSocket):
                self._sock.shutdown(socket.SHUT_WR)
        except OSError as exc:
            raise EngineUnreachable(f"writing the container's stdin failed: {exc}", detail=str(exc)) from exc

    def send(self, data: bytes, timeout: float | None = None) -> None:
        """Write ``data`` to the container's stdin and keep it open (the REPL drivers' commands).

        ``timeout`` bounds the whole write; the reader's poll interval is restored after.
        """
        previous = self._sock.gettimeout()
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(data)
        except OSError as exc:
            raise EngineUnreachable(f"writing the container's stdin failed: {exc}", detail=str(exc)) from exc
        finally:
            try:
                self._sock.settimeout(previous)
            except OSError:
                pass

    def write_some(self, data: bytes | memoryview) -> int:
        """Write what the container's stdin takes now, without waiting; 0 when it takes nothing yet.

        For a keyboard forwarded while ``frames`` reads on another thread: it
        never changes the socket's timeout (the reader's poll) and never
        blocks a plain socket (``MSG_DONTWAIT``); over TLS a write may wait
        for room (``close`` from any thread ends it).

        Raises:
            EngineUnreachable: the stream is gone (the container ended).
        """
        try:
            if isinstance(self._sock, ssl.SSLSocket):
                return self._sock.send(data)
            return self._sock.send(data, socket.MSG_DONTWAIT)
        except (BlockingIOError, TimeoutError, ssl.SSLWantWriteError):
            return 0
        except OSError as exc:
            raise EngineUnreachable(f"writing the container's stdin failed: {exc}", detail=str(exc)) from exc

    def close_stdin(self) -> bool:
        """Half-close stdin (the container reads end of file); False over TLS, where it cannot be done.

        See ``send_and_close_stdin`` for why TLS cannot; the stream stays usable for reading.
        """
        if isinstance(self._sock, ssl.SSLSocket):
            return False
        try:
            self._sock.shutdown(socket.SHUT_WR)
        except OSError:
            return False
        return True

    def frames(self, poll: float) -> Iterator[tuple[int, bytes]]:
        buf = bytearray()
        self._sock.settimeout(poll)
        while True:
            while len(buf) >= 8:
                size = int.from_bytes(buf[4:8], "big")
                if len(buf) < 8 + size:
                    break
                stream = buf[0]
                payload = bytes(buf[8 : 8 + size])
                del buf[: 8 + size]
                if payload:
                    yield stream, payload
            try:
                chunk = self._sock.recv(1 << 16)
            except TimeoutError:
                yield 0, b""
                continue
            except OSError:
                if self._closed:
                    return
                raise
            if not chunk:
                return
            buf += chunk

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._raw.close()
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass
