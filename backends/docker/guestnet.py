"""The served guest's private network namespace, and how only this process gets into it.

Why (issue #12, item 4): a served guest used to sit on an ``internal`` bridge
whose gateway is the host, so any host process - or a DNS-rebinding page in
the user's browser - could connect straight to the container's address and
bypass the reverse proxy's token, ``Host`` check and rate limit. A firewall
rule could catch that; we remove the path instead:

* the guest runs with ``network_mode=none``: its network namespace holds
  only a loopback device. The host has no interface, no address and no
  route into it, no other container can be attached to it, and the guest
  has no route out (so it cannot reach host services either);
* this process enters that namespace itself: ``GuestNetns`` opens
  ``/proc/<pid>/ns/net`` of the container's init (checked to belong to the
  container, and to differ from ours) and keeps one thread that ``setns``'d
  into it; sockets made on that thread live in the guest's namespace, and
  ``connect(127.0.0.1:port)`` on them reaches the guest's server, wherever
  the socket is used afterwards. Nobody else holds such a socket;
* the reverse proxy still speaks TCP to a host address (``relay``), but the
  relay admits a connection only when its client socket is held by this
  very process (``client_owner``: the peer's port is found in the
  kernel's socket table and its inode among our own file descriptors).
  Other processes of the same user - a browser included - are refused.

Entering another namespace needs ``CAP_SYS_ADMIN`` (root), a local rootful
daemon whose containers are in our PID namespace: ``netns_unavailable_reason``
says when that is missing, and serving is then refused. Root on the host can
always enter the namespace too: that is out of scope.
"""

from __future__ import annotations

import ctypes
import logging
import os
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final, Literal

from backends.docker.engine import Engine, EngineError

log = logging.getLogger(__name__)

#: ``CLONE_NEWNET``: the namespace type ``setns`` is asked to join.
CLONE_NEWNET: Final = 0x40000000
#: The Linux capability number of CAP_SYS_ADMIN (needed by ``setns`` into a network namespace).
CAP_SYS_ADMIN: Final = 21


class NetnsError(Exception):
    """The guest's network namespace could not be entered (the message says why)."""


def has_capability(bit: int, status: Path = Path("/proc/self/status")) -> bool:
    """Whether this process holds capability ``bit`` in its effective set."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> bit & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def netns_unavailable_reason(*, socket_path: str | None, rootless: bool) -> str | None:
    """None when this process can enter its containers' network namespaces; else why not."""
    if not sys.platform.startswith("linux"):
        return "serving needs Linux: the proxy enters the guest's network namespace"
    if socket_path is None:
        return "the daemon is not local: the proxy cannot enter the guest's network namespace"
    if rootless:
        return "the daemon is rootless: its containers' network namespaces belong to another user namespace"
    if not has_capability(CAP_SYS_ADMIN):
        return (
            "this process is not root (no CAP_SYS_ADMIN), so the proxy cannot enter the guest's private "
            "network namespace (the only way to reach it)"
        )
    return None


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


def _enter(fd: int, expected: int) -> None:
    """Thread initializer: join the guest's namespace, and check we are really in it."""
    _setns(fd)
    inode = os.stat("/proc/thread-self/ns/net").st_ino
    if inode != expected:
        raise OSError(f"setns left the thread in namespace {inode}, not {expected}")


def _new_socket() -> socket.socket:
    return socket.socket(socket.AF_INET, socket.SOCK_STREAM)


def open_netns(engine: Engine, container: str) -> tuple[int, int]:
    """A descriptor on running ``container``'s network namespace, and the namespace's inode; the caller closes it.

    The container's pid counts only if its cgroup names the container and it
    still runs as that pid once the descriptor is open, and the namespace is
    never the host's.

    Raises:
        NetnsError: the container is not running, its process is not in our
            PID namespace, or it shares the host's namespace.
    """
    try:
        pid = engine.state(container).pid
    except EngineError as exc:
        raise NetnsError(f"cannot inspect the guest's container: {exc}") from exc
    if pid <= 0:
        raise NetnsError("the guest's container is not running")
    try:
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise NetnsError(f"cannot open the guest's network namespace: {exc}") from exc
    try:
        inode = os.fstat(fd).st_ino
        cgroups = Path(f"/proc/{pid}/cgroup").read_text()
        if container not in cgroups:
            raise NetnsError(f"process {pid} is not the container's (is the daemon in another PID namespace?)")
        if engine.state(container).pid != pid:
            raise NetnsError("the guest's container stopped while its namespace was opened")
        if inode == os.stat("/proc/self/ns/net").st_ino:
            raise NetnsError("the guest shares the host's network namespace")
    except (OSError, EngineError) as exc:
        os.close(fd)
        raise NetnsError(f"cannot check the guest's network namespace: {exc}") from exc
    except BaseException:
        os.close(fd)
        raise
    return fd, inode


class GuestNetns:
    """A handle on one container's network namespace; ``socket()`` makes sockets inside it.

    Thread-safe. ``close()`` is idempotent; sockets already made keep working
    until closed (the kernel keeps the namespace alive while they exist).
    """

    def __init__(self, fd: int, inode: int) -> None:
        self._fd = fd
        self.inode = inode
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="guest-netns", initializer=_enter, initargs=(fd, inode))
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(cls, engine: Engine, container: str) -> GuestNetns:
        """Open the network namespace of ``container`` (running) and check a socket can be made in it.

        Raises:
            NetnsError: the container is not running, its process is not in our
                PID namespace, or this process may not enter the namespace.
        """
        fd, inode = open_netns(engine, container)
        handle = cls(fd, inode)
        try:
            handle.socket().close()
        except Exception as exc:
            handle.close()
            raise NetnsError(f"cannot enter the guest's network namespace: {exc}") from exc
        return handle

    def socket(self) -> socket.socket:
        """A new TCP socket inside the guest's namespace (blocking; a few microseconds).

        Raises:
            NetnsError: closed, or the namespace thread could not start.
        """
        with self._lock:
            if self._closed:
                raise NetnsError("the guest's network namespace handle is closed")
            future = self._pool.submit(_new_socket)
        try:
            return future.result()
        except Exception as exc:
            raise NetnsError(f"cannot make a socket in the guest's network namespace: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        try:
            os.close(self._fd)
        except OSError:
            pass


# -- who is connecting --------------------------------------------------------


def _hex_endpoint(address: str, port: int) -> str:
    """An IPv4 endpoint as ``/proc/net/tcp`` prints it (address in host byte order)."""
    packed = socket.inet_aton(address)
    return f"{int.from_bytes(packed, sys.byteorder):08X}:{port:04X}"


def socket_inode(local: tuple[str, int], remote: tuple[str, int], table: Path) -> int:
    """The inode of the IPv4 TCP socket bound to ``local`` and connected to ``remote`` (0: none)."""
    want_local, want_remote = _hex_endpoint(*local), _hex_endpoint(*remote)
    try:
        with table.open() as lines:
            next(lines, None)
            for line in lines:
                fields = line.split()
                if len(fields) > 9 and fields[1] == want_local and fields[2] == want_remote:
                    return int(fields[9])
    except (OSError, ValueError):
        pass
    return 0


def own_socket_inodes(fd_dir: Path = Path("/proc/self/fd")) -> set[int]:
    """Inodes of every socket this process holds a descriptor of."""
    found: set[int] = set()
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(fd_dir / name)
        except OSError:
            continue
        if target.startswith("socket:[") and target.endswith("]"):
            found.add(int(target[8:-1]))
    return found


def client_owner(conn: socket.socket) -> Literal["ours", "foreign", "gone"]:
    """Who holds the client end of the accepted loopback connection ``conn``.

    ``"ours"``: a socket of this process; ``"foreign"``: a socket of any
    other process; ``"gone"``: its owner already closed it (a connect-only
    probe), so there is nobody to serve. The kernel keeps one socket per
    4-tuple, and ours (the accepted end) is still open, so no other socket can
    take the same client port meanwhile.
    """
    try:
        peer_host, peer_port = conn.getpeername()[:2]
        local_host, local_port = conn.getsockname()[:2]
    except OSError:
        return "gone"
    if conn.family != socket.AF_INET:
        return "foreign"
    inode = socket_inode((peer_host, peer_port), (local_host, local_port), Path("/proc/thread-self/net/tcp"))
    if inode == 0:
        return "gone"
    return "ours" if inode in own_socket_inodes() else "foreign"
