"""``PortRelay``: the reverse proxy's only way to one guest port (see ``guestnet`` for why).

The proxy is handed ``address``, a 127.0.0.1 port of this process. Each
connection to it is admitted only when its client socket is held by this
process (``guestnet.client_owner``): any other local process, of any
user, gets a reset and never a byte of the guest. An admitted connection is
joined to a fresh socket made in the guest's network namespace and connected
to ``127.0.0.1:<guest port>`` there; bytes are copied both ways unchanged
(the proxy above does all HTTP work, guards included), half-closes passed on.

Readiness stays truthful: the relay's port is bound at once (so its number
is known and nobody else can take it) but only starts listening once the
guest's port accepts a connection; until then a connection to it is refused,
exactly as connecting to a guest that is not listening yet was.

Runs on the event loop that created it; ``close`` may be called from any
thread and is idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import threading
from typing import Final

from backends.docker.guestnet import GuestNetns, NetnsError, client_owner
from playground.core import TCPAddress

log = logging.getLogger(__name__)

#: First and longest pause between probes of a guest port that does not listen yet.
POLL_FIRST: Final = 0.02
POLL_MAX: Final = 0.25
#: Bytes read at once in each direction.
CHUNK: Final = 1 << 16
#: Pending connections the listener queues (the proxy caps its own connections).
BACKLOG: Final = 128


def _reset(sock: socket.socket) -> None:
    """Close with a TCP reset (SO_LINGER 0): the refused client learns nothing, not even a clean EOF."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class PortRelay:
    """Relays this process's loopback connections on ``address`` to ``guest_port`` inside ``netns``."""

    def __init__(self, netns: GuestNetns, guest_port: int, loop: asyncio.AbstractEventLoop) -> None:
        self._netns = netns
        self._guest_port = guest_port
        self._loop = loop
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.address = TCPAddress("127.0.0.1", int(self._listener.getsockname()[1]))
        #: Connections refused because another process made them.
        self.refused = 0
        self._sockets: set[socket.socket] = {self._listener}
        self._tasks: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._finisher: asyncio.Task[None] | None = None
        self._spawn(self._serve())

    def _spawn(self, coro: object) -> None:
        task: asyncio.Task[None] = self._loop.create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                sock.close()
                return False
            self._sockets.add(sock)
            return True

    def _forget(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)
        sock.close()

    async def _serve(self) -> None:
        try:
            await self._wait_for_guest()
            self._listener.listen(BACKLOG)
            while True:
                conn, _ = await self._loop.sock_accept(self._listener)
                owner = client_owner(conn)
                if owner != "ours":
                    if owner == "foreign":
                        self.refused += 1
                        log.warning("refused a connection to guest port %d from another process", self._guest_port)
                    _reset(conn)
                    continue
                conn.setblocking(False)
                if self._track(conn):
                    self._spawn(self._pipe(conn))
        except OSError as exc:
            if not self._closed:
                log.warning("relay for guest port %d stopped: %s", self._guest_port, exc)

    async def _connect_guest(self) -> socket.socket | None:
        """A socket connected to the guest port inside its namespace, or None (not listening, or gone)."""
        try:
            sock = self._netns.socket()
        except NetnsError:
            return None
        if not self._track(sock):
            return None
        try:
            sock.setblocking(False)
            await self._loop.sock_connect(sock, ("127.0.0.1", self._guest_port))
        except OSError:
            self._forget(sock)
            return None
        return sock

    async def _wait_for_guest(self) -> None:
        delay = POLL_FIRST
        while True:
            sock = await self._connect_guest()
            if sock is not None:
                self._forget(sock)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX)

    async def _pipe(self, client: socket.socket) -> None:
        upstream = await self._connect_guest()
        if upstream is None:
            self._forget(client)
            return
        try:
            await asyncio.gather(self._copy(client, upstream), self._copy(upstream, client))
        finally:
            self._forget(client)
            self._forget(upstream)

    async def _copy(self, source: socket.socket, sink: socket.socket) -> None:
        """Copy until EOF (then half-close ``sink``) or an error (then shut both down, so the other way ends)."""
        try:
            while data := await self._loop.sock_recv(source, CHUNK):
                await self._loop.sock_sendall(sink, data)
        except OSError:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            return
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """Stop listening and cut every relayed connection. Idempotent; any thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._loop.call_soon_threadsafe(self._close_on_loop)
        except RuntimeError:  # the loop is closed: its tasks are gone, only the sockets are left
            self._close_sockets()

    def _close_on_loop(self) -> None:
        # Cancel first and close once the tasks have let go of their sockets: closing a socket the
        # loop still watches could hand its descriptor number to someone else under the loop's nose.
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        self._finisher = self._loop.create_task(self._close_after(tasks))

    async def _close_after(self, tasks: list[asyncio.Task[None]]) -> None:
        await asyncio.gather(*tasks, return_exceptions=True)
        self._close_sockets()

    def _close_sockets(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()
