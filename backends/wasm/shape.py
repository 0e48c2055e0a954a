"""What a module declares that the host must hold for it: its tables and how many memories.

Why parse the binary: wasmtime's API lists only *exported* tables, but a
table the module keeps to itself costs the host just as much (8 bytes a
slot, allocated at instantiation). To charge a run for its tables before
they exist, and to report a refusal as the memory limit it is, we read the
table section ourselves, plus the count of the memory section. Imports
need no reading: the linker defines only functions, so a module that
imports a table or a memory cannot be instantiated at all.

The module has already been validated by wasmtime when we read it, so
this walker only needs the encodings a valid module can contain; anything
it does not recognise (or a section it does not consume exactly) raises
``ShapeError`` and the caller falls back to conservative limits.

Shapes are remembered per compiled module (``remember`` / ``of``), so the
runner, which only holds a ``wasmtime.Module``, finds them. Thread-safe.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

import wasmtime

_MAGIC: Final = b"\0asm\x01\0\0\0"
_TABLE_SECTION: Final = 4
_MEMORY_SECTION: Final = 5
#: Sections that may come before the table and memory sections (custom, type, import, function).
_EARLY_SECTIONS: Final = frozenset({0, 1, 2, 3, _TABLE_SECTION, _MEMORY_SECTION})
_REF_TYPE_PREFIXES: Final = frozenset({0x63, 0x64})  # (ref null ht), (ref ht)
_TABLE_WITH_INIT: Final = 0x40
_END: Final = 0x0B


class ShapeError(ValueError):
    """The bytes are not a module this walker understands (never expected after validation)."""


@dataclass(frozen=True, slots=True)
class TableDecl:
    """One defined table's declared limits, in elements."""

    minimum: int
    maximum: int | None


@dataclass(frozen=True, slots=True)
class ModuleShape:
    """The defined tables of a module and the number of its defined linear memories."""

    tables: tuple[TableDecl, ...] = ()
    memories: int = 0


def parse(data: bytes | memoryview) -> ModuleShape:
    """The shape of a WebAssembly binary.

    Raises:
        ShapeError: not a core module, or an encoding this walker does not know.
    """
    view = memoryview(data)
    if bytes(view[:8]) != _MAGIC:
        raise ShapeError("not a WebAssembly core module")
    reader = _Reader(view, 8)

    def sections() -> Iterator[tuple[int, memoryview]]:
        while reader.pos < len(view):
            section = reader.byte()
            size = reader.uleb()
            if reader.pos + size > len(view):
                raise ShapeError("truncated section")
            yield section, view[reader.pos : reader.pos + size]
            reader.pos += size

    return _shape(sections())


def read(path: Path) -> ModuleShape:
    """The shape of the module in ``path``, reading only its early sections (never the code).

    Raises:
        ShapeError, OSError.
    """
    with path.open("rb") as handle:
        if handle.read(8) != _MAGIC:
            raise ShapeError("not a WebAssembly core module")

        def sections() -> Iterator[tuple[int, memoryview]]:
            while first := handle.read(1):
                length = _file_uleb(handle)
                if first[0] in (_TABLE_SECTION, _MEMORY_SECTION):
                    body = handle.read(length)
                    if len(body) != length:
                        raise ShapeError("truncated section")
                else:
                    body = b""
                    handle.seek(length, 1)
                yield first[0], memoryview(body)

        return _shape(sections())


def _file_uleb(handle: BinaryIO) -> int:
    result = shift = 0
    while byte := handle.read(1):
        result |= (byte[0] & 0x7F) << shift
        shift += 7
        if not byte[0] & 0x80:
            return result
        if shift > 28:
            break
    raise ShapeError("bad section header")


def _shape(sections: Iterator[tuple[int, memoryview]]) -> ModuleShape:
    tables: tuple[TableDecl, ...] = ()
    memories = 0
    for section, body in sections:
        if section == _TABLE_SECTION:
            tables = _tables(_Reader(body, 0))
        elif section == _MEMORY_SECTION:
            memories = _Reader(body, 0).uleb()
        elif section not in _EARLY_SECTIONS:
            break  # tables and memories are declared before every later section
    return ModuleShape(tables=tables, memories=memories)


def _tables(reader: _Reader) -> tuple[TableDecl, ...]:
    count = reader.uleb()
    tables = []
    for _ in range(count):
        with_init = reader.peek() == _TABLE_WITH_INIT
        if with_init:
            reader.pos += 1
            if reader.byte() != 0:
                raise ShapeError("unknown table encoding")
        _ref_type(reader)
        tables.append(_limits(reader))
        if with_init:
            _skip_const_expr(reader)
    if reader.pos != len(reader.data):
        raise ShapeError("table section not consumed exactly")
    return tuple(tables)


def _ref_type(reader: _Reader) -> None:
    if reader.byte() in _REF_TYPE_PREFIXES:
        reader.sleb()  # the heap type: an abstract type (negative) or a type index


def _limits(reader: _Reader) -> TableDecl:
    flags = reader.byte()
    if flags & ~0x05:  # 0x01: has a maximum; 0x04: 64-bit indices. Tables are never shared.
        raise ShapeError(f"unknown table limits flags {flags:#x}")
    minimum = reader.uleb()
    maximum = reader.uleb() if flags & 0x01 else None
    return TableDecl(minimum=minimum, maximum=maximum)


#: Constant-expression opcodes and how many unsigned LEB immediates follow (0xFB: the GC prefix).
_CONST_ULEBS: Final = {0x23: 1, 0xD2: 1, 0x6A: 0, 0x6B: 0, 0x6C: 0, 0x7C: 0, 0x7D: 0, 0x7E: 0}
_GC_CONST_ULEBS: Final = {0: 1, 1: 1, 6: 1, 7: 1, 8: 2, 0x1A: 0, 0x1B: 0, 0x1C: 0}


def _skip_const_expr(reader: _Reader) -> None:
    while True:
        op = reader.byte()
        if op == _END:
            return
        if op in (0x41, 0x42):  # i32.const, i64.const
            reader.sleb()
        elif op == 0x43:  # f32.const
            reader.pos += 4
        elif op == 0x44:  # f64.const
            reader.pos += 8
        elif op == 0xD0:  # ref.null ht
            reader.sleb()
        elif op in _CONST_ULEBS:
            for _ in range(_CONST_ULEBS[op]):
                reader.uleb()
        elif op == 0xFB and (sub := reader.uleb()) in _GC_CONST_ULEBS:
            for _ in range(_GC_CONST_ULEBS[sub]):
                reader.uleb()
        elif op == 0xFD and reader.uleb() == 12:  # v128.const
            reader.pos += 16
        else:
            raise ShapeError(f"unknown constant expression opcode {op:#x}")


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: memoryview, pos: int) -> None:
        self.data = data
        self.pos = pos

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise ShapeError("unexpected end of section")
        return int(self.data[self.pos])

    def byte(self) -> int:
        value = self.peek()
        self.pos += 1
        return value

    def uleb(self) -> int:
        result = shift = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result
            if shift > 63:
                raise ShapeError("LEB128 too long")

    def sleb(self) -> int:
        result = shift = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result - (1 << shift) if byte & 0x40 else result
            if shift > 63:
                raise ShapeError("LEB128 too long")


# -- the registry: compiled module -> shape -----------------------------------------------------

_shapes: weakref.WeakKeyDictionary[wasmtime.Module, ModuleShape] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def remember(module: wasmtime.Module, shape: ModuleShape) -> None:
    """Record ``shape`` for ``module`` (for as long as the module lives)."""
    with _lock:
        _shapes[module] = shape


def of(module: wasmtime.Module) -> ModuleShape | None:
    """The shape recorded for ``module``, or None if nobody recorded one."""
    with _lock:
        return _shapes.get(module)
