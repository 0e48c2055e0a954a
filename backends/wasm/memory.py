"""Bounds-checked access to one guest's linear memory from host functions.

Guest pointers are u32 offsets. Every access is checked against the
memory's current size (never wrapped, never clamped); a bad range raises
``Fault``, which the host-call layer turns into ``EFAULT``.

The engine is configured with ``memory_may_move=False``: a linear memory
keeps its base address for the store's lifetime and only ever grows. So a
cached view is valid until the store closes, and an access beyond the
cached size only needs one size refresh (memory.grow may have happened).

Thread: owned by one run, used only on its guest thread. Ownership: the
views point into memory wasmtime owns; ``release()`` drops them before the
Store closes, and nothing outside a host call may keep a slice.
"""

from __future__ import annotations

import ctypes
import struct
from typing import Final, cast

from wasmtime import _ffi as ffi

from backends.wasm import capi

_U32_MAX: Final = 0xFFFF_FFFF
_EMPTY: Final = memoryview(bytearray())


class Fault(Exception):
    """A guest pointer or length does not fit in its memory (reported as EFAULT)."""


class GuestMemory:
    """The exported ``memory`` of one instance, resolved on first use."""

    __slots__ = ("_base", "_ctx", "_handle", "peak", "resolved", "size", "view")

    def __init__(self) -> None:
        #: True once ``bind`` ran (whether or not the module exports a memory).
        self.resolved = False
        self._ctx = 0
        self._handle: ffi.wasmtime_memory_t | None = None
        self._base = 0
        self.size = 0
        self.view: memoryview = _EMPTY
        self.peak = 0

    def bind(self, ctx: int, caller: int) -> None:
        """Resolve the caller's ``memory`` export.

        Raises:
            Fault: the module exports no memory.
        """
        self.resolved = True
        item = ffi.wasmtime_extern_t()
        found = capi.caller_export_get(caller, b"memory", 6, ctypes.byref(item))
        if not found or cast(int, item.kind) != capi.MEMORY_KIND:
            raise Fault("module exports no memory")
        self._ctx = ctx
        self._handle = item.of.memory
        self._base = 0
        self.refresh()

    def refresh(self) -> None:
        """Re-read base and size (after the guest may have grown its memory)."""
        if self._handle is None:
            return
        size = int(capi.memory_data_size(self._ctx, ctypes.byref(self._handle)))
        base = int(capi.memory_data(self._ctx, ctypes.byref(self._handle)) or 0)
        if size != self.size or base != self._base:
            self._base, self.size = base, size
            self.view = capi.memory_view(base, size) if size else _EMPTY
        self.peak = max(self.peak, size)

    def release(self) -> None:
        """Drop every reference into guest memory; call before the Store closes. Idempotent."""
        if self._handle is not None:
            self.refresh()
        self.view = _EMPTY
        self._handle = None
        self.size = 0

    # -- checked access ---------------------------------------------------------

    def check(self, ptr: int, length: int) -> None:
        """Raise ``Fault`` unless ``[ptr, ptr + length)`` lies inside the memory."""
        if ptr < 0 or length < 0 or ptr > _U32_MAX or length > _U32_MAX:
            raise Fault("pointer out of range")
        if ptr + length > self.size:
            self.refresh()
            if ptr + length > self.size:
                raise Fault("pointer out of range")

    def slice(self, ptr: int, length: int) -> memoryview:
        """A view of guest bytes, valid only until the host call returns."""
        self.check(ptr, length)
        return self.view[ptr : ptr + length]

    def read(self, ptr: int, length: int) -> bytes:
        self.check(ptr, length)
        return bytes(self.view[ptr : ptr + length])

    def write(self, ptr: int, data: bytes | bytearray | memoryview) -> None:
        self.check(ptr, len(data))
        self.view[ptr : ptr + len(data)] = data

    def unpack(self, layout: struct.Struct, ptr: int) -> tuple[int, ...]:
        self.check(ptr, layout.size)
        values: tuple[int, ...] = layout.unpack_from(self.view, ptr)
        return values

    def pack(self, layout: struct.Struct, ptr: int, *values: int) -> None:
        self.check(ptr, layout.size)
        layout.pack_into(self.view, ptr, *values)

    def read_str(self, ptr: int, length: int) -> str:
        """Decode a guest path or name; invalid UTF-8 is kept as surrogate escapes."""
        return self.read(ptr, length).decode("utf-8", "surrogateescape")
