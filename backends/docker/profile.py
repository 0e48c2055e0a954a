"""The hardening profile: one pure function from limits to container-create arguments.

``hardening_profile(limits, spec, kind)`` is deterministic, makes no call to
a daemon and is unit-tested on its own. What it guarantees for every run:

* root filesystem read-only; the only writable places are size-limited
  tmpfs mounts: ``/work`` and ``/tmp`` (exec allowed, for compiled programs),
  ``/dev/shm`` (scratch for POSIX semaphores, noexec),
  ``/out`` and ``/in`` (noexec). ``/in`` is filled by the in-container
  wrapper and then made read-only by permission (see ``wrapper``);
* no capabilities (``cap_drop=ALL``), ``no-new-privileges``, user
  ``65534:65534``, no privileged mode, no devices, no host bind mounts or
  volumes, no Docker socket, ``network_mode="none"``, ``ipc_mode="none"``,
  an init process (``docker-init``/catatonit) as PID 1. One exception,
  ``oneshot_profile``: a run's wrapper starts as root with four
  capabilities so the guest cannot forge its trailer; the guest itself
  still runs as 65534 with none (see ``wrapper``);
* memory = memory+swap (no swap), ``pids_limit``, ``nano_cpus``;
* ulimits: ``nofile``, ``nproc``, ``fsize``, ``cpu`` (from ``cpu_time``) and
  ``core=0``; logging driver ``none`` (guest output never reaches the
  daemon's log files: it is read from the attach stream only).

Precision, per limit:

* ``memory``: the cgroup limit of the whole container (the guest, its tmpfs
  pages and the small wrapper); exceeding it OOM-kills a process.
* ``max_procs``: ``pids_limit = max_procs + PIDS_OVERHEAD`` (init and the
  wrapper shell are not the guest's). ``nproc`` is counted per host uid
  across every container, so it is only a generous backstop
  (``NPROC_CEILING``); the pids cgroup is the per-run limit.
* ``fs_quota``/``max_files``: each tmpfs is capped at ``fs_quota`` bytes and
  ``max_files`` inodes (the guest gets ENOSPC there); the total over
  ``/in``, ``/work`` and ``/out`` (the VFS's three trees) is checked after
  the run by the backend. ``/tmp`` is scratch of its own ``fs_quota`` size
  with at least ``TMP_MIN_INODES`` inodes (compiler caches live there).
  Podman (4.3) rejects ``nr_inodes``: there ``max_files`` is only checked
  when ``/out`` is collected, not while the guest runs.
* ``cpu_time``: RLIMIT_CPU, per process (SIGXCPU, then SIGKILL one second
  later); ``wall_time`` is enforced by the backend, not here.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Final

from playground.core import UNLIMITED, DockerSpec, ResolvedLimits

#: The label every sandbox container carries, so leaks can be found (``docker ps -af label=...``).
LABEL: Final = "io.github.sandbox-playground"
#: The uid:gid every guest runs as (``nobody:nogroup`` on Debian).
GUEST_USER: Final = "65534:65534"
#: Processes in the container that are not the guest: init and the wrapper shell.
PIDS_OVERHEAD: Final = 2
#: CPUs granted to one run (``nano_cpus``); ``Limits`` has no CPU-count field.
CPUS: Final = 1.0
#: RLIMIT_NPROC is per host uid, shared by every concurrent run: a backstop only.
NPROC_CEILING: Final = 4096

#: Open files per process.
NOFILE: Final = 1024
#: Extra room on RLIMIT_FSIZE so a full tmpfs (ENOSPC) trips before SIGXFSZ.
FSIZE_SLACK: Final = 1 << 20
#: Extra processes of a REPL session: its driver, the driver's pumps and helpers.
SESSION_PROCS: Final = 8
#: The tmpfs mounts. ``/dev/shm``: POSIX shared memory and semaphores (``sem_open``), which Python's
#: ``multiprocessing`` needs for every Pool, Queue and Lock; ``ipc_mode="none"`` leaves it out, and a
#: program that used them failed with FileNotFoundError. Scratch like ``/tmp``, never executable.
MOUNTS: Final = ("/in", "/work", "/out", "/tmp", "/dev/shm")
#: The mounts any user of the container may write in (sticky, as on a real machine): scratch space.
SCRATCH: Final = ("/tmp", "/dev/shm")
#: /tmp is scratch outside the VFS count (toolchain caches: Go's has 256 directories).
TMP_MIN_INODES: Final = 4096


class EngineKind(enum.Enum):
    """Which daemon speaks the Docker API; they differ in tmpfs ownership options."""

    DOCKER = "docker"
    PODMAN = "podman"


def base_ulimits() -> list[dict[str, object]]:
    """The limits every container of ours gets, whatever the run's: explicit, so no engine default applies
    (Podman's defaults from containers.conf may exceed what its service may grant)."""
    return [
        {"name": "nofile", "soft": NOFILE, "hard": NOFILE},
        {"name": "nproc", "soft": NPROC_CEILING, "hard": NPROC_CEILING},
        {"name": "core", "soft": 0, "hard": 0},
    ]


def _tmpfs_options(path: str, limits: ResolvedLimits, kind: EngineKind) -> str:
    options = ["rw", "nosuid", "nodev"]
    options.append("exec" if path in ("/work", "/tmp") else "noexec")
    quota = limits.fs_quota_cap
    if quota is not None:
        options.append(f"size={quota}")
    max_files = limits.max_files_cap
    if max_files is not None and kind is EngineKind.DOCKER:  # Podman 4.3 rejects nr_inodes
        inodes = max(max_files, TMP_MIN_INODES) if path == "/tmp" else max_files
        options.append(f"nr_inodes={inodes}")
    if path in SCRATCH:
        options.append("mode=1777")
    else:
        options.append("mode=0755")
        if kind is EngineKind.PODMAN:
            options.append("U")
        else:
            uid, gid = GUEST_USER.split(":")
            options.extend((f"uid={uid}", f"gid={gid}"))
    return ",".join(options)


def hardening_profile(limits: ResolvedLimits, spec: DockerSpec, kind: EngineKind) -> dict[str, object]:
    """Create-kwargs for one hardened run of ``spec`` under ``limits``.

    ``limits`` must be validated (every field set; ``UNLIMITED`` fields are
    left out, never mapped to a huge number). The result has a
    ``host_config`` mapping (arguments of the SDK's ``create_host_config``)
    and the remaining ``create_container`` arguments. Pure: same input, same
    output, no I/O.
    """
    memory = limits.memory_cap
    max_procs = limits.max_procs_cap
    fs_quota = limits.fs_quota_cap
    cpu_time = limits.cpu_time_cap

    ulimits = base_ulimits()
    if fs_quota is not None:
        fsize = fs_quota + FSIZE_SLACK
        ulimits.append({"name": "fsize", "soft": fsize, "hard": fsize})
    if cpu_time is not None:
        seconds = max(1, math.ceil(cpu_time))
        ulimits.append({"name": "cpu", "soft": seconds, "hard": seconds + 1})

    host_config: dict[str, object] = {
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "privileged": False,
        "network_mode": "none",
        "ipc_mode": "none",
        "init": True,
        "nano_cpus": int(CPUS * 1_000_000_000),
        "tmpfs": {path: _tmpfs_options(path, limits, kind) for path in MOUNTS},
        "ulimits": ulimits,
        "log_config": {"type": "none", "config": {}},
        "binds": [],
        "devices": [],
        "auto_remove": False,
    }
    if memory is not None:
        host_config["mem_limit"] = int(memory)
        host_config["memswap_limit"] = int(memory)
    if max_procs is not None:
        host_config["pids_limit"] = int(max_procs) + PIDS_OVERHEAD
    else:
        host_config["pids_limit"] = -1

    return {
        "host_config": host_config,
        "user": GUEST_USER,
        "working_dir": spec.workdir,
        "hostname": "sandbox",
        "network_disabled": True,
        "stdin_open": True,
        "tty": False,
        "labels": {LABEL: "1"},
    }


def session_profile(limits: ResolvedLimits, spec: DockerSpec, kind: EngineKind) -> dict[str, object]:
    """Create-kwargs for a long-lived REPL container: ``hardening_profile`` with two changes.

    RLIMIT_CPU is left out: it counts a process's whole life, so it would
    kill a long session's interpreter; each eval is bounded by ``wall_time``
    on the host instead. ``pids_limit`` grows by ``SESSION_PROCS`` for the
    driver and its helpers. Memory and filesystem limits cover the session.
    """
    profile = hardening_profile(dataclasses.replace(limits, cpu_time=UNLIMITED), spec, kind)
    host = profile["host_config"]
    assert isinstance(host, dict)
    if isinstance(host.get("pids_limit"), int) and host["pids_limit"] > 0:
        host["pids_limit"] += SESSION_PROCS
    return profile


#: The capabilities of a run's wrapper (root in the container): drop to the guest user (SETUID, SETGID,
#: SETPCAP to empty the guest's bounding set) and kill every guest process before the trailer (KILL).
WRAPPER_CAPS: Final = ("SETUID", "SETGID", "SETPCAP", "KILL")
#: On Podman the wrapper also chowns the guest's tmpfs mounts (see ``oneshot_profile``).
PODMAN_WRAPPER_CAPS: Final = (*WRAPPER_CAPS, "CHOWN")
#: The user a run's wrapper starts as (see ``wrapper``); the guest always runs as ``GUEST_USER``.
WRAPPER_USER: Final = "0:0"


def oneshot_profile(limits: ResolvedLimits, spec: DockerSpec, kind: EngineKind) -> dict[str, object]:
    """Create-kwargs for one run: ``hardening_profile`` whose main process is the root wrapper.

    Why root: the wrapper must be a user the guest cannot ptrace, read under
    ``/proc`` or signal, so that the trailer it writes (usage, the marker)
    cannot be forged (issue #12). It gets only ``WRAPPER_CAPS`` (kept under
    ``no-new-privileges``, on a read-only root), runs only our script, and
    hands the guest user 65534 no capability at all (``wrapper._DROP``).
    ``pids_limit`` stays ``max_procs + PIDS_OVERHEAD``: init and the wrapper,
    while the guest's shell ``exec``s the program (during a compile step
    that shell is one of the guest's processes).
    Podman cannot hand the mounts to the guest: it refuses ``uid=``/``gid=``,
    its ``U`` gives them to the container's user (root here), and runc 1.1
    resets a tmpfs's mode to the image directory's (0755, root), whatever
    ``mode=`` says (measured on Podman 4.3). There the wrapper also holds
    ``CAP_CHOWN`` (``PODMAN_WRAPPER_CAPS``) and gives ``/in``, ``/work`` and
    ``/out`` to the guest before anything else runs (``wrapper``).
    """
    profile = hardening_profile(limits, spec, kind)
    host = profile["host_config"]
    assert isinstance(host, dict)
    host = {**host, "cap_add": list(WRAPPER_CAPS)}
    if kind is EngineKind.PODMAN:
        host["cap_add"] = list(PODMAN_WRAPPER_CAPS)
        tmpfs = host["tmpfs"]
        assert isinstance(tmpfs, dict)
        host["tmpfs"] = {path: ",".join(o for o in opts.split(",") if o != "U") for path, opts in tmpfs.items()}
    return {**profile, "host_config": host, "user": WRAPPER_USER}


#: The embedded DNS server's upstream on our networks: container-local loopback, where nothing listens.
NO_DNS: Final = "127.0.0.1"


def long_lived_profile(limits: ResolvedLimits, spec: DockerSpec, kind: EngineKind) -> dict[str, object]:
    """``hardening_profile`` without RLIMIT_CPU, for a server whose life the TTL bounds."""
    return hardening_profile(dataclasses.replace(limits, cpu_time=UNLIMITED), spec, kind)


def on_network(profile: dict[str, object], network: str) -> dict[str, object]:
    """A copy of ``profile`` whose container joins the (internal) ``network`` instead of none.

    Everything else stays. The embedded DNS resolver Docker puts on user-defined
    networks is given ``NO_DNS`` as its upstream, so no name query is forwarded anywhere.
    """
    host = profile["host_config"]
    assert isinstance(host, dict)
    return {
        **profile,
        "network_disabled": False,
        "host_config": {**host, "network_mode": network, "dns": [NO_DNS], "dns_search": ["."]},
    }
