"""A small reader/writer of core wasm binaries: just what the snapshotter needs (``snapshot``).

Sections are kept as opaque payloads except the few the snapshotter reads or
rewrites: types and functions (to check a pinned function's signature),
imports (to count imported functions), memory, globals, exports, code and
data. Nothing here runs or validates a module; wasmtime does that when the
result is compiled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

MAGIC: Final = b"\0asm\1\0\0\0"

TYPE: Final = 1
IMPORT: Final = 2
FUNCTION: Final = 3
MEMORY: Final = 5
GLOBAL: Final = 6
EXPORT: Final = 7
START: Final = 8
CODE: Final = 10
DATA: Final = 11
DATA_COUNT: Final = 12

KIND_FUNC: Final = 0
KIND_MEMORY: Final = 2
KIND_GLOBAL: Final = 3

I32: Final = 0x7F
I64: Final = 0x7E


class WasmFormatError(ValueError):
    """The bytes are not a module this reader understands."""


def _leb(buf: bytes, pos: int) -> tuple[int, int, int, int]:
    """(bits, bit count, last byte, position after it) of the LEB128 at ``pos``."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise WasmFormatError("truncated LEB128")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, shift, byte, pos


def uleb(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the unsigned LEB128 at ``pos``."""
    result, _, _, pos = _leb(buf, pos)
    return result, pos


def sleb(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the signed LEB128 at ``pos``."""
    result, shift, last, pos = _leb(buf, pos)
    return (result - (1 << shift) if last & 0x40 else result), pos


def enc_uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def enc_sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def padded_sleb32(value: int) -> bytes:
    """``value`` as a 5-byte signed LEB128 (the padded form a linker writes where it patched a relocation)."""
    out = bytearray()
    for _ in range(4):
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value & 0x7F)
    return bytes(out)


def _name(text: str) -> bytes:
    raw = text.encode()
    return enc_uleb(len(raw)) + raw


def sections(wasm: bytes) -> list[tuple[int, bytes]]:
    """(id, payload) of every section, in order."""
    if wasm[:8] != MAGIC:
        raise WasmFormatError("not a core wasm module (version 1)")
    pos = 8
    out: list[tuple[int, bytes]] = []
    while pos < len(wasm):
        sid = wasm[pos]
        size, pos = uleb(wasm, pos + 1)
        if pos + size > len(wasm):
            raise WasmFormatError(f"section {sid} runs past the end")
        out.append((sid, wasm[pos : pos + size]))
        pos += size
    return out


def build(parts: list[tuple[int, bytes]]) -> bytes:
    out = bytearray(MAGIC)
    for sid, payload in parts:
        out.append(sid)
        out += enc_uleb(len(payload))
        out += payload
    return bytes(out)


def custom_name(payload: bytes) -> str:
    size, pos = uleb(payload, 0)
    return payload[pos : pos + size].decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Export:
    name: str
    kind: int
    index: int


def read_exports(payload: bytes) -> list[Export]:
    count, pos = uleb(payload, 0)
    out: list[Export] = []
    for _ in range(count):
        size, pos = uleb(payload, pos)
        name = payload[pos : pos + size].decode()
        pos += size
        kind = payload[pos]
        index, pos = uleb(payload, pos + 1)
        out.append(Export(name, kind, index))
    return out


def write_exports(exports: list[Export]) -> bytes:
    out = bytearray(enc_uleb(len(exports)))
    for export in exports:
        out += _name(export.name) + bytes([export.kind]) + enc_uleb(export.index)
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Global:
    valtype: int
    mutable: bool
    #: The constant initializer expression, ``end`` included.
    init: bytes


def read_globals(payload: bytes) -> list[Global]:
    """Globals whose initializer is one constant instruction (what toolchains emit)."""
    count, pos = uleb(payload, 0)
    out: list[Global] = []
    for _ in range(count):
        valtype, mutable = payload[pos], payload[pos + 1]
        pos += 2
        start = pos
        opcode = payload[pos]
        pos += 1
        if opcode in (0x41, 0x42):
            _, pos = sleb(payload, pos)
        elif opcode == 0x23:
            _, pos = uleb(payload, pos)
        elif opcode == 0x43:
            pos += 4
        elif opcode == 0x44:
            pos += 8
        else:
            raise WasmFormatError(f"unsupported global initializer opcode {opcode:#x}")
        if payload[pos] != 0x0B:
            raise WasmFormatError("global initializer longer than one instruction")
        pos += 1
        out.append(Global(valtype, bool(mutable), payload[start:pos]))
    return out


def const_value(glob: Global) -> int:
    """The value of an ``i32.const``/``i64.const`` initializer."""
    if glob.init[0] not in (0x41, 0x42):
        raise WasmFormatError("global is not initialized by an integer constant")
    value, _ = sleb(glob.init, 1)
    return value


def import_counts(payload: bytes) -> dict[int, int]:
    """Number of imported functions, tables, memories, globals and tags, by kind."""
    count, pos = uleb(payload, 0)
    kinds = dict.fromkeys(range(5), 0)
    for _ in range(count):
        for _ in range(2):
            size, pos = uleb(payload, pos)
            pos += size
        kind = payload[pos]
        pos += 1
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == 0:
            _, pos = uleb(payload, pos)
        elif kind == 1:
            pos += 1
            flags = payload[pos]
            _, pos = uleb(payload, pos + 1)
            if flags & 1:
                _, pos = uleb(payload, pos)
        elif kind == 2:
            flags = payload[pos]
            _, pos = uleb(payload, pos + 1)
            if flags & 1:
                _, pos = uleb(payload, pos)
        elif kind == 3:
            pos += 2
        elif kind == 4:
            pos += 1
            _, pos = uleb(payload, pos)
        else:
            raise WasmFormatError(f"unknown import kind {kind}")
    return kinds


def read_memory(payload: bytes) -> tuple[int, int | None]:
    """(minimum, maximum) pages of the one 32-bit, unshared memory."""
    count, pos = uleb(payload, 0)
    if count != 1:
        raise WasmFormatError(f"expected one memory, found {count}")
    flags = payload[pos]
    if flags & ~1:
        raise WasmFormatError("shared or 64-bit memories are not supported")
    minimum, pos = uleb(payload, pos + 1)
    maximum = None
    if flags & 1:
        maximum, pos = uleb(payload, pos)
    return minimum, maximum


def data_segments(payload: bytes) -> list[tuple[int | None, bytes]]:
    """(offset, bytes) of every data segment in order, offset None for a passive one (what ``memory.init``
    copies at run time, left empty by Wizer); an active one must be for memory 0 at an ``i32.const`` offset."""
    count, pos = uleb(payload, 0)
    out: list[tuple[int | None, bytes]] = []
    for _ in range(count):
        offset: int | None = None
        if payload[pos] == 1:
            pos += 1
        elif payload[pos] != 0:
            raise WasmFormatError("explicit-memory data segments are not supported")
        else:
            if payload[pos + 1] != 0x41:
                raise WasmFormatError("data segment offset is not an i32.const")
            offset, pos = sleb(payload, pos + 2)
            if payload[pos] != 0x0B:
                raise WasmFormatError("data segment offset longer than one instruction")
            offset &= 0xFFFF_FFFF
            pos += 1
        size, pos = uleb(payload, pos)
        out.append((offset, payload[pos : pos + size]))
        pos += size
    return out


def read_data(payload: bytes, *, passive: bool = False) -> list[tuple[int, bytes]]:
    """(offset, bytes) of every active data segment (``data_segments``).

    ``passive``: passive segments are allowed and skipped; otherwise refused.
    """
    out: list[tuple[int, bytes]] = []
    for offset, blob in data_segments(payload):
        if offset is None:
            if not passive:
                raise WasmFormatError("passive or explicit-memory data segments are not supported")
            continue
        out.append((offset, blob))
    return out


def data_count(payload: bytes) -> tuple[int, int]:
    """(all, passive): how many data segments the data section has, and how many of them are passive."""
    segments = data_segments(payload)
    return len(segments), sum(1 for offset, _ in segments if offset is None)


def empty_passive_data(count: int) -> bytes:
    """A data section of ``count`` empty passive segments: every segment index of the original stays valid."""
    return enc_uleb(count) + b"\x01\x00" * count


def function_type(wasm_sections: list[tuple[int, bytes]], index: int) -> tuple[bytes, bytes]:
    """(parameter types, result types) of function ``index`` (imports count first)."""
    by_id = dict(wasm_sections)
    imported = import_counts(by_id[IMPORT])[0] if IMPORT in by_id else 0
    if index < imported:
        raise WasmFormatError(f"function {index} is imported")
    types: list[tuple[bytes, bytes]] = []
    payload = by_id[TYPE]
    count, pos = uleb(payload, 0)
    for _ in range(count):
        if payload[pos] != 0x60:
            raise WasmFormatError("unsupported type form")
        size, pos = uleb(payload, pos + 1)
        params = payload[pos : pos + size]
        pos += size
        size, pos = uleb(payload, pos)
        results = payload[pos : pos + size]
        pos += size
        types.append((params, results))
    payload = by_id[FUNCTION]
    count, pos = uleb(payload, 0)
    local = index - imported
    if local >= count:
        raise WasmFormatError(f"no function {index}")
    type_index = 0
    for _ in range(local + 1):
        type_index, pos = uleb(payload, pos)
    return types[type_index]


def function_body(wasm_sections: list[tuple[int, bytes]], index: int) -> bytes:
    """The code section body of (defined) function ``index``."""
    by_id = dict(wasm_sections)
    imported = import_counts(by_id[IMPORT])[0] if IMPORT in by_id else 0
    payload = by_id[CODE]
    count, pos = uleb(payload, 0)
    local = index - imported
    if not 0 <= local < count:
        raise WasmFormatError(f"no defined function {index}")
    for i in range(count):
        size, pos = uleb(payload, pos)
        if i == local:
            return payload[pos : pos + size]
        pos += size
    raise WasmFormatError(f"no defined function {index}")  # pragma: no cover


def references_string(wasm_sections: list[tuple[int, bytes]], index: int, text: bytes) -> bool:
    """Whether function ``index`` loads the address of the NUL-terminated ``text`` from a data segment
    as an ``i32.const`` (how a C function refers to a string literal in a non-PIC module): its immediate
    in the shortest LEB128 form or in the padded 5-byte form linkers leave (wasm-ld without
    ``--compress-relocations``)."""
    body = function_body(wasm_sections, index)
    by_id = dict(wasm_sections)
    pattern = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(text) + rb"\x00")
    for offset, blob in read_data(by_id.get(DATA, b"\0")):
        for match in pattern.finditer(blob):
            address = offset + match.start()
            if b"\x41" + enc_sleb(address) in body or b"\x41" + padded_sleb32(address) in body:
                return True
    return False
