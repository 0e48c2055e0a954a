"""The commands a run's program spawns, as the host's kernel reports them (``core.attempts``).

Method: the kernel's process events connector (``NETLINK_CONNECTOR``,
``CN_IDX_PROC``): one netlink socket per backend, listening from the host,
gets a message for every ``fork``, ``exec`` and ``exit`` on the machine.
Nothing is added to the container (no ptrace, no capability, no seccomp
change, no audit rule): the guest cannot see or disturb it, so these are
``Observer.HOST`` records.

Which execs are the program's: a run registers its container and the
program's command line (``track``). The first exec in the container's cgroup
with exactly that command line is the program (the wrapper, ``tar``, the
compile step and the trailer's tools come before or beside it and are not
the guest's choice); from then on, every process forked from it (and from
its descendants) is followed, and each ``exec`` of one of them is recorded
as ``process_spawn`` with the command line read from ``/proc/<pid>/cmdline``
(the verdict: it ran, inside the container).

Blind spots (stated in every report of this method):

* a process that is gone before its command line is read (the event
  arrives microseconds after the exec, later when the machine is busy) is
  not recorded: it can no longer be shown to be the container's. One that
  ended but is not yet reaped is recorded by its name (``comm``);
* the command line is what ``/proc`` shows when it is read: a program can
  rewrite its own ``argv`` (``setproctitle``) right after the exec;
* the program replacing itself (an ``exec`` without a fork: ``os.execv``,
  a shell's ``exec``) is not told apart from the wrapper's own chain of
  execs that started it, so it is not recorded here (Python's hook reports
  ``os.exec*``); a child that execs twice in a row (``sh -c`` then its
  command) may be read twice as its last command line;
* forks without an exec (a fork bomb of shell functions, ``os.fork``) are
  not spawned commands; the process limit they run into is recorded from
  the pids cgroup (``limits_reached``);
* under a flood of events the socket's buffer can overflow (``ENOBUFS``):
  those events are lost (logged), the run goes on;
* it needs what the sinkhole needs: root (``CAP_NET_ADMIN``) and a daemon
  whose containers are in this process's PID namespace; otherwise there
  are no host records of spawned commands (the in-guest hooks still report).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import socket
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from playground.core.attempts import AttemptKind, AttemptLog, Observer

log = logging.getLogger(__name__)

NETLINK_CONNECTOR: Final = 11
CN_IDX_PROC: Final = 1
CN_VAL_PROC: Final = 1
PROC_CN_MCAST_LISTEN: Final = 1
NLMSG_DONE: Final = 3
PROC_EVENT_FORK: Final = 0x1
PROC_EVENT_EXEC: Final = 0x2
PROC_EVENT_EXIT: Final = 0x80000000
#: Where the event's own data starts: ``nlmsghdr`` (16), ``cn_msg`` (20), ``what``, ``cpu``, ``timestamp_ns``.
_DATA: Final = 16 + 20 + 16
#: The verdict of every record made here.
VERDICT: Final = "allowed: inside the container"
#: ``SO_RCVBUFFORCE`` (root may exceed ``rmem_max``) and the receive buffer asked for.
SO_RCVBUFFORCE: Final = 33
RECEIVE_BUFFER: Final = 8 << 20
#: How long ``track`` waits at the end for events already sent.
DRAIN: Final = 1.0


@dataclass(slots=True)
class _Run:
    container: str
    program: bytes
    attempts: AttemptLog
    followed: set[int] = field(default_factory=set)
    started: bool = False
    #: The program's own pid (0 until it is found).
    pid: int = 0


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read(1 << 16)
    except OSError:
        return b""


def command_line(pid: int) -> str:
    """The process's command line as ``/proc`` shows it now (its name, or a note, when it is gone)."""
    raw = _read(f"/proc/{pid}/cmdline").rstrip(b"\0")
    if raw:
        return os.fsdecode(raw.replace(b"\0", b" "))
    comm = _read(f"/proc/{pid}/comm").strip()
    return os.fsdecode(comm) if comm else "a command that ended before it could be read"


def listen_socket() -> socket.socket:
    """A netlink socket subscribed to the process events (needs ``CAP_NET_ADMIN`` in the initial namespaces).

    Raises:
        OSError: the kernel has no process events connector, or this process may not listen.
    """
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
    try:
        with contextlib.suppress(OSError):  # room for bursts (every process on the machine reports here)
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
        sock.bind((0, CN_IDX_PROC))
        body = struct.pack("=IIIIHH", CN_IDX_PROC, CN_VAL_PROC, 0, 0, 4, 0) + struct.pack("=I", PROC_CN_MCAST_LISTEN)
        sock.send(struct.pack("=IHHII", 16 + len(body), NLMSG_DONE, 0, 0, 0) + body)
    except BaseException:
        sock.close()
        raise
    return sock


class SpawnWatch:
    """One listener for a backend's runs; ``track`` one run at a time per container. Thread-safe.

    ``close()`` is idempotent and stops the thread.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._by_pid: dict[int, _Run] = {}
        self._flushes: list[threading.Event] = []
        self._wake_r, self._wake_w = os.pipe()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="docker-spawnwatch", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls) -> SpawnWatch:
        """Raises: OSError (see ``listen_socket``)."""
        return cls(listen_socket())

    @contextlib.contextmanager
    def track(self, container: str, program: Sequence[str], attempts: AttemptLog) -> Iterator[None]:
        """Record in ``attempts`` what the program run by ``container`` execs, until the block ends.

        On exit, events the kernel sent before are handled first (up to ``DRAIN`` seconds).
        """
        run = _Run(container=container, program=b"\0".join(os.fsencode(word) for word in program), attempts=attempts)
        with self._lock:
            self._runs[container] = run
        try:
            yield
        finally:
            done = threading.Event()
            with self._lock:
                self._flushes.append(done)
            self._wake()
            done.wait(DRAIN)
            with self._lock:
                self._runs.pop(container, None)
                for pid in (*run.followed, run.pid):
                    if self._by_pid.get(pid) is run:
                        del self._by_pid[pid]

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._wake()
        self._thread.join(timeout=10.0)
        self._sock.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _serve(self) -> None:
        fd = self._sock.fileno()
        while True:
            ready, _, _ = select.select([fd, self._wake_r], [], [])
            if self._wake_r in ready:
                os.read(self._wake_r, 512)
            while self._receive():
                pass
            with self._lock:
                if self._closed:
                    return
                flushes, self._flushes = self._flushes, []
            for done in flushes:
                done.set()

    def _receive(self) -> bool:
        try:
            data = self._sock.recv(1 << 16, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno == errno.ENOBUFS:
                log.info("spawn watch: the event buffer overflowed; some spawned commands were not recorded")
                return True
            return False
        at = 0
        while at + _DATA <= len(data):
            size = struct.unpack_from("=I", data, at)[0]
            if size < _DATA or at + size > len(data):
                break
            self._event(data, at)
            at += (size + 3) & ~3
        return bool(data)

    def _event(self, data: bytes, at: int) -> None:
        (what,) = struct.unpack_from("=I", data, at + 36)
        if what == PROC_EVENT_FORK:
            _, parent, _, child = struct.unpack_from("=IIII", data, at + _DATA)
            with self._lock:
                run = self._by_pid.get(parent)
                if run is not None and child != parent:
                    run.followed.add(child)
                    self._by_pid[child] = run
        elif what == PROC_EVENT_EXEC:
            _, pid = struct.unpack_from("=II", data, at + _DATA)
            self._exec(pid)
        elif what == PROC_EVENT_EXIT:
            _, pid = struct.unpack_from("=II", data, at + _DATA)
            with self._lock:
                run = self._by_pid.pop(pid, None)
                if run is not None:
                    run.followed.discard(pid)

    def _exec(self, pid: int) -> None:
        with self._lock:
            run = self._by_pid.get(pid)
            waiting = [r for r in self._runs.values() if not r.started] if run is None else []
        if run is not None:
            # Not the program's own pid: its exec events (setpriv, env, sh, then the program) may be handled
            # after it has become the program, or ended, so they cannot be told from a later exec of its own.
            if pid == run.pid:
                return
            line = command_line(pid)
            # Still the container's: an exit event lost in a flood (a fork bomb) leaves a pid followed that
            # the kernel may give to another process on the machine.
            if run.container.encode() in _read(f"/proc/{pid}/cgroup"):
                run.attempts.record(AttemptKind.PROCESS_SPAWN, line, VERDICT, observer=Observer.HOST)
            return
        if not waiting:
            return
        cgroup = _read(f"/proc/{pid}/cgroup")
        for candidate in waiting:
            if candidate.container.encode() in cgroup:
                if _read(f"/proc/{pid}/cmdline").rstrip(b"\0") == candidate.program:
                    with self._lock:
                        candidate.started, candidate.pid = True, pid
                        self._by_pid[pid] = candidate
                return
