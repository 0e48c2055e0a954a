# ruff: noqa: PLR0917 - host functions take the WASI ABI's positional parameters as they are
"""WASI preview1 outside the filesystem: args, environ, clocks, random, poll, process, sockets.

Every function here is a host function (see ``hostcall``): it returns a
WASI errno and raises only to stop the guest. The guest sees exactly the
run's argv and environment; nothing comes from the host process. There
is no network and so no socket: every ``sock_*`` call on an open
descriptor is ENOTSOCK, on a closed one EBADF (what preview1 asks of a
descriptor that is not a socket).

``poll_oneoff`` never blocks past the run's wall deadline or a
cancellation: it sleeps on the run's wakeup event, and a read on stdin is
always ready (stdin is a finite byte string; at its end a read returns 0)
unless the run has a keyboard (``Request.input``) with nothing typed yet:
then it sleeps on the keyboard in ``keyboard.SLICE`` slices that check the
deadline and cancellation.
In a REPL session stdin reports ready with 0 bytes; a read then waits
for the next eval (see ``channel``).
"""

from __future__ import annotations

import os
import time
from typing import Final

from backends.wasm import abi, devices, keyboard
from backends.wasm.attempt_watch import socket_call
from backends.wasm.fds import DeviceDesc, FileDesc, StdioDesc, StdStream
from backends.wasm.hostcall import GuestStop, HostFunction, WasiError, host_function
from backends.wasm.state import GuestStrings, RunState, StopReason

FUNCTIONS: list[HostFunction] = []
_wasi = host_function

#: Reported clock resolution in nanoseconds.
CLOCK_RESOLUTION_NS: Final = 1_000
_U64_MAX: Final = (1 << 64) - 1
#: random_get refuses single requests above this (the guest can loop).
_MAX_RANDOM: Final = 1 << 20
#: Longest single Event.wait (larger values overflow); poll_oneoff loops.
_MAX_WAIT: Final = 3600.0
#: ``_fd_ready``'s answer for stdin that waits for the keyboard.
_NOT_READY: Final = (-1, -1)


def _strings_sizes(run: RunState, strings: GuestStrings, count_ptr: int, size_ptr: int) -> int:
    run.memory.pack(abi.U32, count_ptr, strings.count)
    run.memory.pack(abi.U32, size_ptr, len(strings.blob))
    return abi.SUCCESS


def _strings_get(run: RunState, strings: GuestStrings, array_ptr: int, buf_ptr: int) -> int:
    memory = run.memory
    memory.check(array_ptr, 4 * strings.count)
    memory.write(buf_ptr, strings.blob)
    memory.pack(strings.pointers, array_ptr, *[buf_ptr + offset for offset in strings.offsets])
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def args_sizes_get(run: RunState, argc_ptr: int, size_ptr: int) -> int:
    return _strings_sizes(run, run.args, argc_ptr, size_ptr)


@_wasi(FUNCTIONS, "ii")
def args_get(run: RunState, argv_ptr: int, buf_ptr: int) -> int:
    return _strings_get(run, run.args, argv_ptr, buf_ptr)


@_wasi(FUNCTIONS, "ii")
def environ_sizes_get(run: RunState, count_ptr: int, size_ptr: int) -> int:
    return _strings_sizes(run, run.env, count_ptr, size_ptr)


@_wasi(FUNCTIONS, "ii")
def environ_get(run: RunState, environ_ptr: int, buf_ptr: int) -> int:
    return _strings_get(run, run.env, environ_ptr, buf_ptr)


def _now(run: RunState, clock_id: int) -> int:
    if clock_id == abi.CLOCK_REALTIME:
        return time.time_ns()
    if clock_id == abi.CLOCK_MONOTONIC:
        # Its epoch is arbitrary; a snapshot run's continues from the capture's (``RunState.monotonic_offset``).
        return time.monotonic_ns() - run.monotonic_offset
    if clock_id in (abi.CLOCK_PROCESS_CPUTIME, abi.CLOCK_THREAD_CPUTIME):
        # The guest's process is its thread, from the run's start: never reveal the host process's CPU use,
        # nor an earlier run's on a reused worker thread.
        return time.thread_time_ns() - run.cpu_base
    raise WasiError(abi.EINVAL)


@_wasi(FUNCTIONS, "ii")
def clock_res_get(run: RunState, clock_id: int, res_ptr: int) -> int:
    if run.snapshot_point and clock_id == abi.CLOCK_REALTIME:  # a capture's snapshot point (``snapshot``)
        run.control.stop(StopReason.SNAPSHOT)
        raise GuestStop()
    _now(run, clock_id)
    run.memory.pack(abi.U64, res_ptr, CLOCK_RESOLUTION_NS)
    return abi.SUCCESS


@_wasi(FUNCTIONS, "iIi")
def clock_time_get(run: RunState, clock_id: int, precision: int, time_ptr: int) -> int:
    run.memory.pack(abi.U64, time_ptr, _now(run, clock_id))
    return abi.SUCCESS


@_wasi(FUNCTIONS, "ii")
def random_get(run: RunState, buf_ptr: int, length: int) -> int:
    run.memory.check(buf_ptr, length)
    while length > 0:
        chunk = min(length, _MAX_RANDOM)
        run.memory.write(buf_ptr, os.urandom(chunk))
        buf_ptr += chunk
        length -= chunk
    return abi.SUCCESS


@_wasi(FUNCTIONS, "i", returns_errno=False)
def proc_exit(run: RunState, code: int) -> int:
    run.control.stop(StopReason.EXIT, exit_code=code)
    raise GuestStop()


@_wasi(FUNCTIONS, "i")
def proc_raise(run: RunState, signal: int) -> int:
    if signal == 0:
        return abi.SUCCESS
    run.control.stop(StopReason.EXIT, exit_code=128 + (signal & 0x7F))
    raise GuestStop()


@_wasi(FUNCTIONS, "")
def sched_yield(run: RunState) -> int:
    if run.control.check() is not None:
        raise GuestStop()
    return abi.SUCCESS


def _fd_ready(run: RunState, fd: int, event_type: int) -> tuple[int, int]:
    """(errno, nbytes) for an fd subscription, or ``_NOT_READY``: only stdin waiting for the keyboard is not ready.

    Rights: ``POLL_FD_READWRITE``, or ``FD_READ`` for a read and ``FD_WRITE``
    for a write subscription (WASI preview1 ``rights``).
    """
    try:
        desc = run.fds.get(fd)
    except Exception:
        return abi.EBADF, 0
    direct = abi.RIGHT_FD_READ if event_type == abi.EVENTTYPE_FD_READ else abi.RIGHT_FD_WRITE
    if not desc.rights & (abi.RIGHT_POLL_FD_READWRITE | direct):
        return abi.ENOTCAPABLE, 0
    if event_type == abi.EVENTTYPE_FD_READ:
        if isinstance(desc, StdioDesc) and desc.stream is StdStream.STDIN:
            ready = keyboard.stdin_ready(run.keyboard, len(run.stdin) - run.stdin_pos)
            return (abi.SUCCESS, ready) if ready is not None else _NOT_READY
        if isinstance(desc, FileDesc):
            return abi.SUCCESS, max(0, desc.file.size - desc.pos)
        if isinstance(desc, DeviceDesc):
            return abi.SUCCESS, 0 if desc.device.kind == "null" else devices.MAX_READ
        return abi.EBADF, 0
    return abi.SUCCESS, 0


@_wasi(FUNCTIONS, "iiii")
def poll_oneoff(run: RunState, in_ptr: int, out_ptr: int, nsubs: int, nevents_ptr: int) -> int:
    memory = run.memory
    if nsubs == 0:
        return abi.EINVAL
    memory.check(in_ptr, abi.SUBSCRIPTION.size * nsubs)
    memory.check(out_ptr, abi.EVENT.size * nsubs)
    ready: list[tuple[int, int, int, int]] = []  # userdata, errno, type, nbytes
    typing: list[int] = []  # userdata of stdin reads that wait for the keyboard
    clocks: list[tuple[int, int]] = []  # (deadline in monotonic ns, userdata)
    now = time.monotonic_ns()
    for i in range(nsubs):
        userdata, tag, ident, timeout, _precision, flags = memory.unpack(abi.SUBSCRIPTION, in_ptr + i * 48)
        if tag == abi.EVENTTYPE_CLOCK:
            if flags & abi.SUBCLOCKFLAGS_ABSTIME:
                try:
                    timeout = max(0, timeout - _now(run, ident))
                except WasiError:
                    ready.append((userdata, abi.EINVAL, tag, 0))
                    continue
            elif ident not in (abi.CLOCK_REALTIME, abi.CLOCK_MONOTONIC, abi.CLOCK_PROCESS_CPUTIME,
                               abi.CLOCK_THREAD_CPUTIME):  # fmt: skip
                ready.append((userdata, abi.EINVAL, tag, 0))
                continue
            clocks.append((now + timeout, userdata))
        elif tag in (abi.EVENTTYPE_FD_READ, abi.EVENTTYPE_FD_WRITE):
            err, nbytes = _fd_ready(run, ident, tag)
            if (err, nbytes) == _NOT_READY:
                typing.append(userdata)
            else:
                ready.append((userdata, err, tag, nbytes))
        else:
            return abi.EINVAL
    if not ready and (clocks or typing):
        first = min(at for at, _ in clocks) if clocks else None
        control = run.control
        while True:
            until = _MAX_WAIT if first is None else (first - time.monotonic_ns()) / 1e9
            wait = min(until, _MAX_WAIT)
            remaining = control.remaining()
            if remaining is not None:
                wait = min(wait, remaining + 0.001)
            if typing:  # stdin waits for the keyboard: sleep on it in slices that see a stop (see keyboard)
                assert run.keyboard is not None
                if run.keyboard.wait(max(0.0, min(wait, keyboard.SLICE))):
                    nbytes = keyboard.stdin_ready(run.keyboard, 0) or 0
                    ready = [(userdata, abi.SUCCESS, abi.EVENTTYPE_FD_READ, nbytes) for userdata in typing]
                    break
            elif wait > 0 and control.wakeup.wait(wait) and control.settle():
                raise GuestStop()
            if control.check() is not None:
                raise GuestStop()
            if first is not None and time.monotonic_ns() >= first:
                break
            if run.session is not None and run.session.deliver_signal(run):
                # Interrupted (Ctrl-C delivered as CPython's signal words): the sleep ends now, as it
                # would with EINTR, and the interpreter raises at its next check. Every clock fires,
                # since wasi-libc turns any poll error into ENOTSUP.
                ready = [(userdata, abi.SUCCESS, abi.EVENTTYPE_CLOCK, 0) for _, userdata in clocks]
                break
    if not ready:
        now = time.monotonic_ns()
        ready = [(userdata, abi.SUCCESS, abi.EVENTTYPE_CLOCK, 0) for at, userdata in clocks if at <= now]
    for i, (userdata, err, event_type, nbytes) in enumerate(ready):
        memory.pack(abi.EVENT, out_ptr + i * abi.EVENT.size, userdata, err, event_type, nbytes, 0)
    memory.pack(abi.U32, nevents_ptr, len(ready))
    return abi.SUCCESS


def _not_a_socket(run: RunState, call: str, fd: int) -> int:
    """EBADF for a closed descriptor (``get`` raises it), else ENOTSOCK: no descriptor here is a socket.

    Either way the guest tried the network: recorded first (``attempt_watch``).
    """
    socket_call(run.attempts, call, fd)
    run.fds.get(fd)
    return abi.ENOTSOCK


@_wasi(FUNCTIONS, "iii")
def sock_accept(run: RunState, fd: int, flags: int, fd_ptr: int) -> int:
    return _not_a_socket(run, "sock_accept", fd)


@_wasi(FUNCTIONS, "iiiiii")
def sock_recv(run: RunState, fd: int, iovs: int, iovs_len: int, flags: int, nread_ptr: int, oflags_ptr: int) -> int:
    return _not_a_socket(run, "sock_recv", fd)


@_wasi(FUNCTIONS, "iiiii")
def sock_send(run: RunState, fd: int, iovs: int, iovs_len: int, flags: int, nwritten_ptr: int) -> int:
    return _not_a_socket(run, "sock_send", fd)


@_wasi(FUNCTIONS, "ii")
def sock_shutdown(run: RunState, fd: int, how: int) -> int:
    return _not_a_socket(run, "sock_shutdown", fd)
