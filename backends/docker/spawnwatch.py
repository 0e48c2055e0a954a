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

A REPL session's interpreter is followed the same way for the session's
life (``follow``): it is the first exec in the container's cgroup whose
command line, after its first word, is the driver's ``interp`` line (node
starts it by its own path); its execs are the driver's chain, not records,
and every exec of a process forked from it or its descendants is. The
session points the records at the eval in flight (``evallog``). Processes
are told by their thread-group id: a new thread is no new process, and a
thread that ends (node's workers) does not end its process.

Blind spots (stated in every report of this method):

* a process that is gone before its command line is read (the event
  arrives microseconds after the exec, later when the machine is busy;
  ``ls`` or ``date`` in a bash session often are) is recorded without it:
  one that ended but is not yet reaped by its name (``comm``); in a
  session (``follow``), one already reaped as ``ENDED`` (it was a followed
  process and no process holds its pid now; one-shot runs leave it out:
  once, in a full test run under load, a benign one-shot Python run got
  such a record whose cause was not found); a pid whose ``/proc`` entry
  shows another cgroup is not recorded (an exit event lost in a flood, the
  pid reused);
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

from backends.docker.evallog import Recorder
from playground.core.attempts import AttemptKind, Observer

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
#: The target of a spawned command that was gone before its command line (or its name) could be read.
ENDED: Final = "a command that ended before it could be read"
#: ``SO_RCVBUFFORCE`` (root may exceed ``rmem_max``) and the receive buffer asked for.
SO_RCVBUFFORCE: Final = 33
RECEIVE_BUFFER: Final = 8 << 20
#: How long ``track`` waits at the end for events already sent.
DRAIN: Final = 1.0


@dataclass(slots=True)
class _Run:
    container: str
    program: bytes
    attempts: Recorder
    #: Match ``program`` against the command line without its first word (a session's interpreter is
    #: started by its own path, which the host does not know).
    any_argv0: bool = False
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
    return os.fsdecode(comm) if comm else ENDED


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
    def track(self, container: str, program: Sequence[str], attempts: Recorder) -> Iterator[None]:
        """Record in ``attempts`` what the program run by ``container`` execs, until the block ends.

        On exit, events the kernel sent before are handled first (up to ``DRAIN`` seconds).
        """
        run = self._register(container, program, attempts, any_argv0=False)
        try:
            yield
        finally:
            self.flush()
            self._unregister(run)

    def follow(self, container: str, args: Sequence[str], attempts: Recorder) -> Following:
        """Record in ``attempts`` what a session's interpreter execs, until ``Following.close``.

        The interpreter is the first exec in ``container``'s cgroup whose command line is, after its
        first word, ``args`` (a session's driver starts it as ``<runtime> <driver> interp``). The
        session points ``attempts`` (an ``evallog.EvalLog``) at each eval's log in turn and calls
        ``Following.flush`` before an eval's log is closed.
        """
        return Following(self, self._register(container, args, attempts, any_argv0=True))

    def flush(self, timeout: float = DRAIN) -> None:
        """Wait (up to ``timeout`` seconds) until the events the kernel sent before this call are handled."""
        done = threading.Event()
        with self._lock:
            if self._closed:
                return
            self._flushes.append(done)
        self._wake()
        done.wait(timeout)

    def _register(self, container: str, program: Sequence[str], attempts: Recorder, *, any_argv0: bool) -> _Run:
        words = b"\0".join(os.fsencode(word) for word in program)
        run = _Run(container=container, program=words, attempts=attempts, any_argv0=any_argv0)
        with self._lock:
            self._runs[container] = run
        return run

    def _unregister(self, run: _Run) -> None:
        with self._lock:
            if self._runs.get(run.container) is run:
                del self._runs[run.container]
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
            _, parent, child_pid, child = struct.unpack_from("=IIII", data, at + _DATA)
            if child_pid != child:  # a new thread of a process (followed or not already)
                return
            with self._lock:
                run = self._by_pid.get(parent)
                if run is not None and child != parent:
                    run.followed.add(child)
                    self._by_pid[child] = run
        elif what == PROC_EVENT_EXEC:
            _, pid = struct.unpack_from("=II", data, at + _DATA)
            self._exec(pid)
        elif what == PROC_EVENT_EXIT:
            thread, pid = struct.unpack_from("=II", data, at + _DATA)
            if thread != pid:  # one thread of a process ended (node's workers do), not the process
                return
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
            elif run.any_argv0 and not os.path.exists(f"/proc/{pid}"):
                # A session's: gone and reaped already (``ls`` takes a millisecond): a process we followed did
                # exec, and no other process holds its pid now; what it ran can no longer be read.
                run.attempts.record(AttemptKind.PROCESS_SPAWN, ENDED, VERDICT, observer=Observer.HOST)
            return
        if not waiting:
            return
        cgroup = _read(f"/proc/{pid}/cgroup")
        for candidate in waiting:
            if candidate.container.encode() in cgroup:
                raw = _read(f"/proc/{pid}/cmdline").rstrip(b"\0")
                if candidate.any_argv0:
                    raw = raw.partition(b"\0")[2]
                if raw == candidate.program:
                    with self._lock:
                        candidate.started, candidate.pid = True, pid
                        self._by_pid[pid] = candidate
                return


class Following:
    """A session's interpreter followed by a ``SpawnWatch`` (see ``SpawnWatch.follow``). ``close`` is idempotent."""

    def __init__(self, watch: SpawnWatch, run: _Run) -> None:
        self._watch, self._run = watch, run
        self._closed = False

    @property
    def found(self) -> bool:
        """Whether the interpreter's exec was seen (until then nothing can be recorded)."""
        return self._run.started

    def flush(self, timeout: float = DRAIN) -> None:
        """Wait until the events the kernel sent before this call are recorded (see ``SpawnWatch.flush``)."""
        if not self._closed:
            self._watch.flush(timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._watch.flush()
        self._watch._unregister(self._run)
