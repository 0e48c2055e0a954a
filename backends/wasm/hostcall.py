"""Host functions as raw, unchecked wasmtime callbacks, and their error model.

A host function is a plain Python function ``impl(run, *params) -> int``
that receives the run's ``RunState`` and its wasm parameters as Python
ints (i32 as unsigned u32, i64 as signed), and returns a WASI errno.
``host_function`` declares one; ``define_all`` puts a list of them on a
Linker through ``wasmtime_linker_define_func_unchecked``.

Error model (what the trampoline guarantees):

* Expected failures return an errno: an impl returns it, or raises
  ``WasiError``, ``Fault`` (EFAULT), ``BadFd`` or ``VFSError`` (mapped).
* Stopping the guest is the only reason to trap: ``GuestStop`` (the reason
  is already on ``run.control``), ``OutputLimitExceeded`` (recorded as
  ``OUTPUT_LIMIT``), or any other exception (recorded as ``HOST_ERROR``
  with the exception, so a bug in the host is never mistaken for a guest
  fault). No exception ever propagates into wasmtime or wasmtime-py.
* A run that was already stopped (cancelled, timed out) traps at its next
  host call, so a guest that calls the host in a tight loop still stops.

Thread: a trampoline runs on the guest's thread, inside its Store; it
finds the run through the engine's registry keyed by the Store's context.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import wasmtime

from backends.wasm import abi, capi
from backends.wasm.fds import BadFd
from backends.wasm.memory import Fault
from backends.wasm.state import RunState, StopReason
from playground.core.errors import OutputLimitExceeded
from playground.core.vfs import VFSError

log = logging.getLogger(__name__)

_U32: Final = 0xFFFF_FFFF
_I32: Final = wasmtime.ValType.i32()
_I64: Final = wasmtime.ValType.i64()

HostImpl = Callable[..., int]


class WasiError(Exception):
    """An expected failure: the host call returns ``errno`` to the guest."""

    def __init__(self, errno: int) -> None:
        super().__init__(errno)
        self.errno = errno


class GuestStop(Exception):
    """Stop the guest now; the reason is already recorded on ``run.control``."""


@dataclass(frozen=True, slots=True)
class HostFunction:
    """One import: its name, parameter kinds (``i`` = i32, ``I`` = i64) and implementation."""

    name: str
    params: str
    impl: HostImpl
    returns_errno: bool = True

    def functype(self) -> wasmtime.FuncType:
        params = [_I64 if kind == "I" else _I32 for kind in self.params]
        return wasmtime.FuncType(params, [_I32] if self.returns_errno else [])


def host_function(
    table: list[HostFunction], params: str, *, returns_errno: bool = True
) -> Callable[[HostImpl], HostImpl]:
    """Decorator: append the decorated ``impl`` to ``table`` under its own name."""

    def register(impl: HostImpl) -> HostImpl:
        table.append(HostFunction(impl.__name__, params, impl, returns_errno))
        return impl

    return register


def _trap(run: RunState | None, what: str) -> int:
    return capi.new_trap(f"sandbox: {what}".encode())


def make_trampoline(fn: HostFunction, runs: Mapping[int, RunState]) -> Any:
    """Build the ctypes callback for ``fn``; the caller must keep it alive."""
    impl = fn.impl
    slots = tuple((capi.RAW_SLOT_WORDS * k, kind == "I") for k, kind in enumerate(fn.params))
    returns = fn.returns_errno
    caller_context = capi.caller_context

    def trampoline(env: int, caller: int, raw: Any, count: int) -> int | None:
        run = runs.get(caller_context(caller))
        if run is None:
            return _trap(None, "host call from a store without a run")
        control = run.control
        if control.reason is not None:
            return _trap(run, "guest stopped")
        run.caller = caller
        memory = run.memory
        try:
            if not memory.resolved:
                try:
                    memory.bind(run.ctx, caller)
                except Fault:
                    pass
            args = [((raw[off] & _U32) | (raw[off + 1] << 32)) if wide else (raw[off] & _U32) for off, wide in slots]
            result = impl(run, *args)
        except Fault:
            result = abi.EFAULT
        except WasiError as exc:
            result = exc.errno
        except BadFd as exc:
            result = exc.errno
        except VFSError as exc:
            result = abi.wasi_errno(exc.errno)
        except GuestStop:
            return _trap(run, "guest stopped")
        except OutputLimitExceeded:
            control.stop(StopReason.OUTPUT_LIMIT)
            return _trap(run, "output limit exceeded")
        except BaseException as exc:
            log.exception("host function %s failed", fn.name)
            control.stop(StopReason.HOST_ERROR, error=exc)
            return _trap(run, f"host function {fn.name} failed")
        finally:
            run.caller = 0
        if returns:
            raw[0] = result
        return None

    return capi.HOST_CALLBACK(trampoline)


def define_all(
    linker: wasmtime.Linker, module: str, functions: list[HostFunction], runs: Mapping[int, RunState]
) -> list[object]:
    """Define ``functions`` under ``module`` on ``linker``; return the callbacks to keep alive.

    Raises:
        wasmtime.WasmtimeError: a definition was refused (duplicate name, bad type).
    """
    keep: list[object] = []
    for fn in functions:
        callback = make_trampoline(fn, runs)
        capi.define_host_function(linker, module, fn.name, fn.functype(), callback)
        keep.append(callback)
    return keep
