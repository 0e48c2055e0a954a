"""Private ctypes prototypes into the libwasmtime that wasmtime-py loads.

wasmtime-py wraps these functions with argument types that cost a Python
object per call (or not at all, like the epoch-deadline callback). We bind
our own prototypes to the same library, with plain ``c_void_p`` handles, so
that a host call costs a few microseconds instead of ~20 and no exception
ever passes through wasmtime-py's process-wide ``LAST_EXCEPTION`` slot.

Thread: every function here is safe to call from any thread on the objects
the caller owns; nothing in this module holds state besides the prototypes.
"""

from __future__ import annotations

import ctypes
from typing import Any, Final, cast

import wasmtime
from wasmtime import _ffi as ffi
from wasmtime._exportable import AsExtern
from wasmtime._extern import wrap_extern

_dll = ffi.dll

#: The unchecked host-function signature: (env, caller, args_and_results, count) -> wasm_trap_t*.
#: Arguments arrive as a pointer to 16-byte ``wasmtime_val_raw_t`` slots, read as int32 words.
HOST_CALLBACK: Final = ctypes.CFUNCTYPE(
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t
)

#: The epoch-deadline callback: (context, data, *delta, *update_kind) -> wasmtime_error_t*.
EPOCH_CALLBACK: Final = ctypes.CFUNCTYPE(
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_uint64),
    ctypes.POINTER(ctypes.c_uint8),
)

_FINALIZER: Final = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
NO_FINALIZER: Final = _FINALIZER()  # a NULL function pointer

#: Slot stride of ``wasmtime_val_raw_t`` in int32 words.
RAW_SLOT_WORDS: Final = 4


def _proto(name: str, restype: Any, *argtypes: Any) -> Any:
    func = _dll[name]  # a fresh function pointer: wasmtime-py's prototype is untouched
    func.restype = restype
    func.argtypes = argtypes
    return func


caller_context: Final = _proto("wasmtime_caller_context", ctypes.c_void_p, ctypes.c_void_p)
caller_export_get: Final = _proto(
    "wasmtime_caller_export_get",
    ctypes.c_bool,
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.c_size_t,
    ctypes.POINTER(ffi.wasmtime_extern_t),
)
memory_data: Final = _proto(
    "wasmtime_memory_data", ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ffi.wasmtime_memory_t)
)
memory_data_size: Final = _proto(
    "wasmtime_memory_data_size", ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ffi.wasmtime_memory_t)
)
trap_new: Final = _proto("wasmtime_trap_new", ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)
error_new: Final = _proto("wasmtime_error_new", ctypes.c_void_p, ctypes.c_char_p)
_define_func_unchecked: Final = _proto(
    "wasmtime_linker_define_func_unchecked",
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.c_size_t,
    ctypes.c_char_p,
    ctypes.c_size_t,
    ctypes.c_void_p,
    HOST_CALLBACK,
    ctypes.c_void_p,
    _FINALIZER,
)
_epoch_deadline_callback: Final = _proto(
    "wasmtime_store_epoch_deadline_callback",
    None,
    ctypes.c_void_p,
    EPOCH_CALLBACK,
    ctypes.c_void_p,
    _FINALIZER,
)
_func_call: Final = _proto(
    "wasmtime_func_call",
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.POINTER(ffi.wasmtime_func_t),
    ctypes.POINTER(ffi.wasmtime_val_t),
    ctypes.c_size_t,
    ctypes.POINTER(ffi.wasmtime_val_t),
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_void_p),
)
_global_set: Final = _proto(
    "wasmtime_global_set",
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.POINTER(ffi.wasmtime_global_t),
    ctypes.POINTER(ffi.wasmtime_val_t),
)
_memory_view: Final = ctypes.pythonapi.PyMemoryView_FromMemory
_memory_view.restype = ctypes.py_object
_memory_view.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int)
_PYBUF_WRITE: Final = 0x200

MEMORY_KIND: Final = ffi.WASMTIME_EXTERN_MEMORY.value
_I32: Final = ffi.WASMTIME_I32.value


def new_trap(message: bytes) -> int:
    """A fresh ``wasm_trap_t*`` whose ownership passes to whoever returns it to wasmtime."""
    ptr: int = trap_new(message, len(message))
    return ptr


def new_error(message: bytes) -> int:
    """A fresh ``wasmtime_error_t*`` whose ownership passes to whoever returns it to wasmtime."""
    ptr: int = error_new(message)
    return ptr


def _raise_if_error(error: int | None) -> None:
    """Raise the ``wasmtime_error_t*`` a C call returned (its ownership passes to the exception); None: none."""
    if error:
        raise wasmtime.WasmtimeError._from_ptr(ctypes.cast(error, ctypes.POINTER(ffi.wasmtime_error_t)))


def address(pointer: object) -> int:
    """The integer address of a ctypes pointer object (0 for NULL)."""
    value = ctypes.cast(pointer, ctypes.c_void_p).value  # type: ignore[arg-type]
    return int(value or 0)


def define_host_function(
    linker: wasmtime.Linker, module: str, name: str, functype: wasmtime.FuncType, callback: object
) -> None:
    """Define an unchecked host function; the caller keeps ``callback`` alive as long as the linker.

    Raises:
        wasmtime.WasmtimeError: wasmtime refused the definition.
    """
    mod, fn = module.encode(), name.encode()
    err = _define_func_unchecked(
        address(linker.ptr()), mod, len(mod), fn, len(fn), address(functype.ptr()), callback, None, NO_FINALIZER
    )
    _raise_if_error(err)


def set_epoch_callback(store: wasmtime.Store, callback: object) -> None:
    """Install ``callback`` as the store's epoch-deadline callback (kept alive by the caller)."""
    _epoch_deadline_callback(address(store.ptr()), callback, None, NO_FINALIZER)


def store_context(store: wasmtime.Store) -> int:
    """The address of the store's context; a host call's caller context has the same address."""
    return address(store._context())


def memory_view(base: int, size: int) -> memoryview:
    """A writable memoryview over ``size`` bytes at ``base`` (no copy, no ownership)."""
    view: memoryview = _memory_view(base, size, _PYBUF_WRITE)
    return view


def instance_export(store: wasmtime.Store, instance: wasmtime.Instance, name: str) -> AsExtern | None:
    """The instance's export ``name``, or None.

    ``Instance.exports`` wraps every export of the module on first use
    (hundreds in a language runtime: ~0.1 ms per run); a run needs three.
    """
    raw = name.encode()
    item = ffi.wasmtime_extern_t()
    found = ffi.wasmtime_instance_export_get(
        store._context(), ctypes.byref(instance._instance), raw, len(raw), ctypes.byref(item)
    )
    return wrap_extern(item) if found else None


def call_i32(store: wasmtime.Store, func: wasmtime.Func, *args: int, results: int) -> int | None:
    """Call ``func`` with i32 ``args``; its i32 result (``results`` 1) or None (``results`` 0).

    ``Func.__call__`` reads the function's type and converts every value
    through it: 11 µs for ``_start``, 38 µs for a snapshot entry of two
    i32s, against 4 µs here. wasmtime still checks the values and the
    result count against the function's type: a mismatch is an error, not
    a call. Traps and errors raise what ``Func.__call__`` raises.

    Raises:
        wasmtime.Trap: the guest trapped (an epoch stop, ``proc_exit``, a fault...).
        wasmtime.WasmtimeError: the call failed (wrong types, or an error a host function returned).
    """
    params = (ffi.wasmtime_val_t * len(args))()
    for slot, value in zip(params, args, strict=True):
        slot.kind = ffi.WASMTIME_I32
        slot.of.i32 = value
    out = (ffi.wasmtime_val_t * results)()
    trap = ctypes.c_void_p()
    error = _func_call(
        address(store._context()), ctypes.byref(func._func), params, len(args), out, results, ctypes.byref(trap)
    )
    _raise_if_error(error)
    if trap.value:
        raise wasmtime.Trap._from_ptr(ctypes.cast(trap, ctypes.POINTER(ffi.wasm_trap_t)))
    if not results:
        return None
    if cast(int, out[0].kind) != _I32:
        raise wasmtime.WasmtimeError("the function's result is not an i32")
    return int(out[0].of.i32)


def set_i32_global(store: wasmtime.Store, global_: wasmtime.Global, value: int) -> None:
    """``Global.set_value`` for an i32 global, without reading its type first (wasmtime checks it).

    Raises:
        wasmtime.WasmtimeError: not a mutable i32 global.
    """
    val = ffi.wasmtime_val_t()
    val.kind = ffi.WASMTIME_I32
    val.of.i32 = value
    error = _global_set(address(store._context()), ctypes.byref(global_._global), ctypes.byref(val))
    _raise_if_error(error)
