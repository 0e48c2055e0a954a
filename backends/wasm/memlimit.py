"""Exact memory limits: one budget per store, charged by every linear memory and every table.

The budget (``MemoryBudget``) is the whole store's: the sum of the current
sizes of all its linear memories (a module may declare several; wasmtime's
GC heap, which holds exception objects and GC structs, is one more) plus
what its tables are charged (``tablelimit``) must stay within the limit.
Checking each memory against the whole limit on its own, as before, let 8
memories of 60 MiB through a 64 MiB limit.

wasmtime's store limiter makes ``memory.grow`` return -1 past a limit but
keeps no record of it, and it limits each memory on its own. With a host
memory creator (``wasmtime_config_host_memory_creator_set``) every linear
memory of the engine is reserved by us (``mmap`` of the whole reservation
plus guard region, ``PROT_NONE``) and made accessible page by page on
growth (``mprotect``). Creation and every growth ask the budget for the
memory's new size given everything else in the store: past the limit it
records the refusal and we return an error, which wasmtime turns into
``memory.grow`` = -1 (or a failed instantiation, or a GC allocation
failure) for the guest. The run is then reported as
``MemoryLimitExceeded`` by fact, not by guesswork.

The budget of a run is bound to the thread that instantiates and runs the
guest (``budget_scope``); a memory remembers the budget it was created
under, so growth later in the run (on the same thread) is charged to it,
and its size is given back when wasmtime frees it. Memories never move:
the reservation wasmtime asks for is reserved up front, which is what
``memory_may_move=False`` promises the host views.

A memory can start from an image (``MemoryImage``: a snapshot of a started
interpreter, see ``snapshot``): the next memory created on a thread inside
``image_scope`` gets the image mapped copy-on-write (``MAP_PRIVATE`` from a
sealed memfd) over its first pages. Only the declared minimum is
accessible and charged at creation; the runner grows the memory to the
image's size before the guest runs, and that growth is charged like any
other, so the limit covers every page of the image.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from wasmtime import _bindings as bindings

from backends.wasm import capi
from backends.wasm.warmpages import WarmPages

log = logging.getLogger(__name__)

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_mprotect = _libc.mprotect
_mprotect.restype = ctypes.c_int
_mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_memfd_create = _libc.memfd_create
_memfd_create.restype = ctypes.c_int
_memfd_create.argtypes = (ctypes.c_char_p, ctypes.c_uint)
_munmap = _libc.munmap
_munmap.restype = ctypes.c_int
_munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)

PROT_NONE: Final = 0
PROT_RW: Final = 0x1 | 0x2
MAP_FLAGS: Final = 0x02 | 0x20 | 0x4000  # MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
MAP_FAILED: Final = ctypes.c_void_p(-1).value
_MAP_PRIVATE_FIXED: Final = 0x02 | 0x10
_MFD_CLOEXEC_SEALING: Final = 0x1 | 0x2  # MFD_CLOEXEC | MFD_ALLOW_SEALING
_F_ADD_SEALS: Final = 1033
_SEALS: Final = 0x1 | 0x2 | 0x4 | 0x8  # F_SEAL_SEAL | SHRINK | GROW | WRITE
PAGE: Final = os.sysconf("SC_PAGE_SIZE")
#: Reserved when wasmtime does not ask for a reservation (a dynamic memory): memories never move.
DEFAULT_RESERVATION: Final = 4 << 30


class MemoryBudget:
    """The bytes one store may hold, and whether the guest ever asked for more. Thread-safe.

    ``limit`` None means unlimited (nothing is refused). ``requested`` is
    the store total a refused request would have made; ``peak`` the
    largest total granted (memories plus the tables' declared minimums,
    not their growth headroom, which is a reservation).
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.refused = False
        self.requested = 0
        self.peak = 0
        #: Why the store was refused, when it is not a byte count (too many tables, say).
        self.reason: str | None = None
        self._memories: dict[int, int] = {}
        self._tables = 0
        self._headroom = 0
        self._lock = threading.Lock()

    def _total(self) -> int:
        return sum(self._memories.values()) + self._tables + self._headroom

    def _admit(self, total: int) -> bool:
        if self.limit is not None and total > self.limit:
            self.refused = True
            self.requested = max(self.requested, total)
            return False
        return True

    def charge_memory(self, key: int, size: int) -> bool:
        """Whether memory ``key`` may be ``size`` bytes (new or grown) beside the rest; a refusal is recorded."""
        with self._lock:
            total = self._total() - self._memories.get(key, 0) + size
            if not self._admit(total):
                return False
            self._memories[key] = size
            self.peak = max(self.peak, total - self._headroom)
            return True

    def release_memory(self, key: int) -> None:
        """Memory ``key`` was freed: its bytes no longer count."""
        with self._lock:
            self._memories.pop(key, None)

    def charge_tables(self, initial: int, headroom: int) -> bool:
        """Charge the tables' declared minimums and their growth headroom; a refusal is recorded."""
        with self._lock:
            if not self._admit(self._total() + initial + headroom):
                return False
            self._tables += initial
            self._headroom += headroom
            self.peak = max(self.peak, self._total() - self._headroom)
            return True

    def refuse(self, reason: str) -> None:
        """Record a refusal that is not about a byte count."""
        with self._lock:
            self.refused = True
            self.reason = reason


_local = threading.local()


@contextmanager
def budget_scope(budget: MemoryBudget) -> Iterator[MemoryBudget]:
    """Charge memories created on this thread inside the block to ``budget``."""
    previous = getattr(_local, "budget", None)
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = previous


class MemoryImage:
    """The initial content of a linear memory, in a sealed memfd: nothing can change it once made.

    ``length`` is a multiple of the wasm page (64 KiB). Pages of zeros are
    left as holes (they cost no memory). The file descriptor lives as long
    as the image (``close``); each memory maps it ``MAP_PRIVATE``, so a run's
    writes stay its own. ``warm``: the pages every run writes, copied before
    the guest starts (``warmpages``; None until learned).
    """

    __slots__ = ("fd", "length", "warm")

    def __init__(self, data: bytes | memoryview, *, name: str = "memory-image") -> None:
        if len(data) % 65536:
            raise ValueError("a memory image is a whole number of wasm pages")
        fd = _memfd_create(name.encode(), _MFD_CLOEXEC_SEALING)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "memfd_create failed")
        try:
            os.ftruncate(fd, len(data))
            view = memoryview(data)
            zero = bytes(65536)
            for offset in range(0, len(data), 65536):
                chunk = view[offset : offset + 65536]
                if chunk != zero:
                    os.pwrite(fd, chunk, offset)
            import fcntl

            fcntl.fcntl(fd, _F_ADD_SEALS, _SEALS)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        self.length = len(data)
        self.warm: WarmPages | None = None

    def close(self) -> None:
        """Close the memfd (memories already mapped keep their pages). Idempotent."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class ImageSlot:
    """An image waiting for its memory (``image_scope``); ``mapped`` once a memory got it."""

    __slots__ = ("image", "mapped", "minimum")

    def __init__(self, image: MemoryImage, minimum: int) -> None:
        self.image = image
        self.minimum = minimum
        self.mapped = False


@contextmanager
def image_scope(image: MemoryImage, minimum: int) -> Iterator[ImageSlot]:
    """Map ``image`` into the first linear memory created on this thread inside the block whose declared
    minimum is ``minimum`` bytes (the module's own memory: never a GC heap); ``mapped`` says it happened."""
    slot = _local.image = ImageSlot(image, minimum)
    try:
        yield slot
    finally:
        _local.image = None


class _LinearMemory:
    __slots__ = ("base", "budget", "mapped", "maximum", "size")

    def __init__(self, base: int, mapped: int, size: int, maximum: int, budget: MemoryBudget | None) -> None:
        self.base = base
        self.mapped = mapped
        self.size = size
        self.maximum = maximum
        self.budget = budget


class MemoryCreator:
    """Installs itself on a ``wasmtime.Config``; keeps every callback alive for the engine's life."""

    def __init__(self) -> None:
        self._memories: dict[int, _LinearMemory] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._new = bindings.wasmtime_new_memory_callback_t(self._new_memory)
        self._get = bindings.wasmtime_memory_get_callback_t(self._get_memory)
        self._grow = bindings.wasmtime_memory_grow_callback_t(self._grow_memory)
        self._free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self._finalize)
        self._creator = bindings.wasmtime_memory_creator_t(None, self._new, capi.NO_FINALIZER)

    def install(self, config: Any) -> None:
        """Make every linear memory of engines built from ``config`` come from here."""
        bindings.wasmtime_config_host_memory_creator_set(config.ptr(), ctypes.byref(self._creator))

    @property
    def live(self) -> int:
        with self._lock:
            return len(self._memories)

    # -- callbacks (guest threads; never raise into C) --------------------------------

    def _new_memory(  # noqa: PLR0917 (the C callback's signature)
        self, env: int, ty: Any, minimum: int, maximum: int, reserved: int, guard: int, out: Any
    ) -> int:
        try:
            budget: MemoryBudget | None = getattr(_local, "budget", None)
            key = next(self._ids)
            if budget is not None and not budget.charge_memory(key, minimum):
                return capi.new_error(b"sandbox: memory limit below the module's initial memory")
            reservation = reserved or max(DEFAULT_RESERVATION, _round_up(minimum))
            mapped = _round_up(reservation + guard)
            base = _mmap(None, mapped, PROT_NONE, MAP_FLAGS, -1, 0)
            if base is None or base == MAP_FAILED:
                _release(budget, key)
                return capi.new_error(b"sandbox: cannot reserve address space for a linear memory")
            if minimum and _mprotect(base, _round_up(minimum), PROT_RW) != 0:
                _munmap(base, mapped)
                _release(budget, key)
                return capi.new_error(b"sandbox: cannot commit linear memory")
            slot: ImageSlot | None = getattr(_local, "image", None)
            if slot is not None and not slot.mapped and minimum == slot.minimum:
                if not _map_image(slot.image, base, minimum, reservation):
                    _munmap(base, mapped)
                    _release(budget, key)
                    return capi.new_error(b"sandbox: cannot map the memory image")
                slot.mapped = True
            with self._lock:
                self._memories[key] = _LinearMemory(base, mapped, minimum, min(maximum, reservation), budget)
            out[0].env = key
            out[0].get_memory = self._get
            out[0].grow_memory = self._grow
            out[0].finalizer = self._free
            return 0
        except BaseException:
            log.exception("linear memory creation failed")
            return capi.new_error(b"sandbox: linear memory creation failed")

    def _get_memory(self, env: int, size: Any, maximum: Any) -> int:
        memory = self._memories[env]
        size[0] = memory.size
        maximum[0] = memory.maximum
        return memory.base

    def _grow_memory(self, env: int, new_size: int) -> int:
        try:
            memory = self._memories[env]
            if new_size <= memory.size:
                return 0
            if new_size > memory.maximum:
                return capi.new_error(b"sandbox: linear memory maximum reached")
            if memory.budget is not None and not memory.budget.charge_memory(env, new_size):
                return capi.new_error(b"sandbox: memory limit reached")
            start = _round_down(memory.size)
            if _mprotect(memory.base + start, _round_up(new_size) - start, PROT_RW) != 0:
                if memory.budget is not None:
                    memory.budget.charge_memory(env, memory.size)  # give the growth back
                return capi.new_error(b"sandbox: cannot commit linear memory")
            memory.size = new_size
            return 0
        except BaseException:
            log.exception("linear memory growth failed")
            return capi.new_error(b"sandbox: linear memory growth failed")

    def _finalize(self, env: int) -> None:
        with self._lock:
            memory = self._memories.pop(env, None)
        if memory is not None:
            _munmap(memory.base, memory.mapped)
            _release(memory.budget, env)


def _map_image(image: MemoryImage, base: int, minimum: int, reservation: int) -> bool:
    """Map ``image`` copy-on-write at ``base``; only the first ``minimum`` bytes stay accessible."""
    if image.fd < 0 or image.length > reservation:
        return False
    if _mmap(base, image.length, PROT_RW, _MAP_PRIVATE_FIXED, image.fd, 0) != base:
        return False
    committed = _round_up(minimum)
    if image.length > committed:
        return bool(_mprotect(base + committed, image.length - committed, PROT_NONE) == 0)
    return True


def _release(budget: MemoryBudget | None, key: int) -> None:
    if budget is not None:
        budget.release_memory(key)


def _round_up(size: int) -> int:
    return (size + PAGE - 1) // PAGE * PAGE


def _round_down(size: int) -> int:
    return size // PAGE * PAGE
