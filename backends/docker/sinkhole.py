"""Recording the network attempts of a run without a network (``Spec.net=None``) from the host.

Design: a sinkhole *inside the guest's own network namespace*. The run's
container keeps ``network_mode=none``: its namespace holds one device,
loopback, and no route to anywhere. Before the guest exists (the wrapper
is still waiting for its input archive), this process enters that namespace
(as ``guestnet`` does for serving) and adds:

* a default route through loopback (``default dev lo src 127.0.0.1``), so a
  connection to a foreign address makes a packet at all, instead of failing
  in the route lookup where nothing can see its destination;
* filter rules: every packet to a non-loopback address, and every DNS query
  (UDP port 53, to any address), is copied to an ``NFLOG`` group of that
  namespace and then rejected (TCP with a reset, the rest with "port
  unreachable"). The guest gets a refusal at once (``ECONNREFUSED``, a name
  lookup that fails), never a route;
* the recorder: a thread reading that ``NFLOG`` group on a netlink socket made
  inside the namespace; each TCP connection attempt (a SYN) is recorded as
  ``network_connect`` ``ip:port``, each DNS query as ``dns_lookup`` of its
  name, any other UDP datagram as ``network_connect`` ``ip:port/udp``.

A REPL session's sinkhole is set up the same way when its container
starts and lives as long as the container; it records into the log of the
eval in flight (``evallog``), and ``flush`` at each eval's end records what
the rules logged before it (the rules log each packet at once: the NFLOG
threshold is 1 in the rule itself).

These are ``Observer.HOST`` records: the rules and the sockets are out of the
guest's reach (it has no capability to change its namespace's routes or
rules; the sockets are ours, made by a thread of this process).

Why nothing can pass (the argument the tests check):

1. the namespace has no device but loopback: every packet, whatever its
   destination, stays inside the namespace. Our route adds no device;
2. the rules drop every such packet after logging it (``REJECT`` answers
   from inside the namespace); the recorder only reads copies, it has no
   socket that could send anywhere;
3. a packet the rules miss would be looped back to an address that is not
   the namespace's and dropped (forwarding is off in a new namespace);
4. if setting the rules up fails, the route is taken away again (and even
   with it, it leads only to loopback, 1); the run goes on without host
   network records.

Needs what serving needs (``guestnet.netns_unavailable_reason``: Linux,
root, a local rootful daemon) plus ``ip`` and ``iptables-restore`` on the
host; without them a run has no host network records (the in-guest hooks
still report). ``ip`` and ``iptables-restore`` run as children of the
thread that entered the namespace, so they act on it alone.

Blind spots: IPv6 (the container has it off: a v6 connect fails in the
route lookup, unseen); ICMP (unprivileged ping sockets) and other
protocols are refused unrecorded; a DNS query over TCP is a
``network_connect`` to the resolver's address and port 53; a resolver's
retries (and its A and AAAA queries) count as repeats; a flood faster than
the recorder reads loses records (the netlink buffer overflows), never
refusals; ``first_at`` is when the recorder read it.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import shutil
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from backends.docker.engine import Engine
from backends.docker.evallog import Recorder
from backends.docker.guestnet import NetnsError, _enter, open_netns
from playground.core.attempts import AttemptKind, Observer

log = logging.getLogger(__name__)

#: The verdict of every record made here.
VERDICT: Final = "refused: no network in this sandbox"
#: How long each setup command may take.
SETUP_TIMEOUT: Final = 10.0
#: The NFLOG group the rules copy to (groups are per namespace: the guest's has only ours).
GROUP: Final = 1
#: Bytes of each packet copied: the IP and TCP/UDP headers, and a DNS question.
COPY: Final = 512

# netlink / nfnetlink_log constants (linux/netlink.h, linux/netfilter/nfnetlink_log.h)
NETLINK_NETFILTER: Final = 12
NLMSG_ERROR: Final = 2
NLM_F_REQUEST: Final = 1
NLM_F_ACK: Final = 4
NFULNL_MSG_PACKET: Final = 4 << 8 | 0  # NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET
NFULNL_MSG_CONFIG: Final = 4 << 8 | 1
NFULA_CFG_CMD: Final = 1
NFULA_CFG_MODE: Final = 2
NFULA_CFG_QTHRESH: Final = 4
NFULNL_CFG_CMD_BIND: Final = 1
NFULNL_COPY_PACKET: Final = 2
NFULA_PAYLOAD: Final = 9


def tools_missing() -> str | None:
    """None when ``ip`` and ``iptables-restore`` are on PATH; else which is missing."""
    for tool in ("ip", "iptables-restore"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def filter_rules() -> str:
    """The ``iptables-restore --noflush`` input for the guest's namespace (its OUTPUT chain is empty before)."""
    # The threshold in the rule too: iptables-nft's rule otherwise batches (measured: a record 5-15 ms after
    # its packet, whatever the group's own threshold), and a session's eval ends sooner than that.
    log_it = f"-j NFLOG --nflog-group {GROUP} --nflog-size {COPY} --nflog-threshold 1"
    return "\n".join((
        "*filter",
        f"-A OUTPUT -p udp --dport 53 {log_it}",
        "-A OUTPUT -p udp --dport 53 ! -d 127.0.0.0/8 -j REJECT",
        "-A OUTPUT -d 127.0.0.0/8 -j ACCEPT",
        f"-A OUTPUT ! -p udp {log_it}",
        f"-A OUTPUT -p udp ! --dport 53 {log_it}",
        "-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset",
        "-A OUTPUT -j REJECT",
        "COMMIT",
        "",
    ))  # fmt: skip


def query_name(message: bytes) -> str | None:
    """The first question's name of a DNS query (``None``: not a query we can read)."""
    if len(message) < 17 or message[2] & 0x80:  # too short, or a response
        return None
    labels: list[str] = []
    at = 12
    while at < len(message):
        size = message[at]
        if size == 0:
            return ".".join(labels) if labels else "."
        if size & 0xC0 or at + 1 + size > len(message):
            return None
        labels.append(message[at + 1 : at + 1 + size].decode("ascii", "backslashreplace"))
        at += 1 + size
    return None


def packet_attempt(packet: bytes) -> tuple[AttemptKind, str] | None:
    """What an IPv4 packet the rules logged was trying: a TCP SYN, a DNS query or another UDP datagram."""
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return None
    header = (packet[0] & 0x0F) * 4
    protocol, address = packet[9], socket.inet_ntoa(packet[16:20])
    if len(packet) < header + 8:
        return None
    port = int.from_bytes(packet[header + 2 : header + 4], "big")
    if protocol == socket.IPPROTO_TCP:
        if len(packet) < header + 14 or packet[header + 13] & 0x12 != 0x02:  # a SYN without ACK
            return None
        return AttemptKind.NETWORK_CONNECT, f"{address}:{port}"
    if protocol == socket.IPPROTO_UDP:
        if port == 53 and (name := query_name(packet[header + 8 :])) is not None:
            return AttemptKind.DNS_LOOKUP, name
        return AttemptKind.NETWORK_CONNECT, f"{address}:{port}/udp"
    return None


def _attribute(kind: int, data: bytes) -> bytes:
    size = 4 + len(data)
    return struct.pack("=HH", size, kind) + data + b"\0" * (-size % 4)


def _config_message(sequence: int, attribute: bytes) -> bytes:
    body = struct.pack("=BB", socket.AF_UNSPEC, 0) + struct.pack("!H", GROUP) + attribute
    return struct.pack("=IHHII", 16 + len(body), NFULNL_MSG_CONFIG, NLM_F_REQUEST | NLM_F_ACK, sequence, 0) + body


def payloads(data: bytes) -> Iterator[bytes]:
    """The logged packets in one netlink read (``NFULA_PAYLOAD`` of each ``NFULNL_MSG_PACKET``)."""
    at = 0
    while at + 16 <= len(data):
        size, kind = struct.unpack_from("=IH", data, at)
        if size < 16 or at + size > len(data):
            return
        if kind == NFULNL_MSG_PACKET:
            attr = at + 20  # the netlink header, then struct nfgenmsg
            while attr + 4 <= at + size:
                length, attr_kind = struct.unpack_from("=HH", data, attr)
                if length < 4:
                    break
                if attr_kind & 0x7FFF == NFULA_PAYLOAD:
                    yield data[attr + 4 : attr + length]
                attr += (length + 3) & ~3
        at += (size + 3) & ~3


def _nflog_socket() -> socket.socket:
    """On the namespace's thread: a netlink socket bound to ``GROUP``, copying packets (``COPY`` bytes)."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    try:
        sock.bind((0, 0))
        sock.settimeout(SETUP_TIMEOUT)
        steps = (
            _attribute(NFULA_CFG_CMD, struct.pack("=B", NFULNL_CFG_CMD_BIND)),
            _attribute(NFULA_CFG_MODE, struct.pack("!IBB", COPY, NFULNL_COPY_PACKET, 0)),
            _attribute(NFULA_CFG_QTHRESH, struct.pack("!I", 1)),  # each packet at once (the default batches 100)
        )
        for sequence, attribute in enumerate(steps, 1):
            sock.send(_config_message(sequence, attribute))
            answer = sock.recv(4096)
            if len(answer) >= 20 and struct.unpack_from("=H", answer, 4)[0] == NLMSG_ERROR:
                (code,) = struct.unpack_from("=i", answer, 16)
                if code:
                    raise OSError(-code, f"nflog configuration: {os.strerror(-code)}")
        sock.settimeout(None)
        return sock
    except BaseException:
        sock.close()
        raise


def _run(argv: list[str], stdin: bytes = b"") -> None:
    done = subprocess.run(argv, input=stdin, capture_output=True, timeout=SETUP_TIMEOUT, check=False)
    if done.returncode != 0:
        raise NetnsError(f"{argv[0]}: {done.stderr.decode(errors='replace').strip()}")


def _setup() -> socket.socket:
    """On the namespace's thread: the recorder's socket first (no packet is missed), then the route and rules."""
    sock = _nflog_socket()
    try:
        _run(["ip", "route", "add", "default", "dev", "lo", "src", "127.0.0.1"])
        try:
            _run(["iptables-restore", "--noflush"], filter_rules().encode())
        except BaseException:
            _run(["ip", "route", "del", "default"])
            raise
    except BaseException:
        sock.close()
        raise
    return sock


class Sinkhole:
    """The recorder of one run or one session; see the module docstring.

    ``close()`` is idempotent and waits for the thread; ``flush()`` returns once
    what the rules logged so far is recorded (a session's eval ends with it).
    """

    def __init__(self, sock: socket.socket, attempts: Recorder) -> None:
        self._sock, self._attempts = sock, attempts
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="docker-sinkhole", daemon=True)
        self._lock = threading.Lock()
        self._flushes: list[threading.Event] = []
        self._closed = False
        self._thread.start()

    @classmethod
    def open(cls, engine: Engine, container: str, attempts: Recorder) -> Sinkhole:
        """Enter the started ``container``'s network namespace, set the sinkhole up there and start recording.

        Raises:
            NetnsError: the namespace could not be entered or set up (the run stays without a route).
        """
        fd, inode = open_netns(engine, container)
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="docker-sinkhole-setup", initializer=_enter,
                                    initargs=(fd, inode)) as pool:  # fmt: skip
                sock = pool.submit(_setup).result()
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            raise NetnsError(f"cannot set up the sinkhole: {exc}") from exc
        finally:
            os.close(fd)
        return cls(sock, attempts)

    def flush(self, timeout: float = 1.0) -> None:
        """Wait (up to ``timeout`` seconds) until the packets logged before this call are recorded."""
        done = threading.Event()
        with self._lock:
            if self._closed:
                return
            self._flushes.append(done)
        os.write(self._wake_w, b"f")
        done.wait(timeout)

    def close(self) -> None:
        """Stop recording (what was read so far stays recorded). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=10.0)
        self._sock.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def __enter__(self) -> Sinkhole:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self) -> None:
        fd = self._sock.fileno()
        while True:
            try:
                ready, _, _ = select.select([fd, self._wake_r], [], [])
            except OSError:
                return
            if fd in ready:
                self._read()
            if self._wake_r in ready:
                os.read(self._wake_r, 512)
                while self._read(block=False):  # what the rules logged before the run (or the eval) ended
                    pass
                with self._lock:
                    flushes, self._flushes = self._flushes, []
                    closed = self._closed
                for done in flushes:
                    done.set()
                if closed:
                    return

    def _read(self, *, block: bool = True) -> bool:
        try:
            data = self._sock.recv(1 << 16, 0 if block else socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno == errno.ENOBUFS:  # a flood outran us: those records are lost, not the refusals
                log.info("sinkhole: the netlink buffer overflowed; some network attempts were not recorded")
                return True
            return False
        for packet in payloads(data):
            found = packet_attempt(packet)
            if found is not None:
                self._attempts.record(found[0], found[1], VERDICT, observer=Observer.HOST)
        return bool(data)
