"""The wire between the Wasm backend and its worker processes (``procpool``, ``procworker``): framed pickles.

Both ends are this project's own code in processes of the same user; the
guest never reaches the pipes (it is inside WebAssembly in the worker).
A frame is a 4-byte little-endian length and a pickle: ``receive`` reads
one from a blocking stream, ``FrameReader`` takes them from a non-blocking
one as bytes come. Messages are tuples whose first item names them:

parent -> worker
    ``("pack", key, pack)``: a pack the next runs refer to by ``key``;
    ``("load", key, start)``: load a start (runtime and snapshot) before its runs come;
    ``("run", job, key, spec, limits, stdin, vfs)``;
    a cancel goes on a pipe of its own (``procworker``).
worker -> parent
    ``("ready",)`` once it has started; ``("loaded", key, start)``;
    ``("output", job, stream, bytes)``, ``("progress", job, text, fraction)``;
    ``("done", job, outcome, tree, attempts, dropped, output)``;
    ``("failed", job, error_name, message, outcome, tree, attempts, dropped, output)`` (``tree``: the
    worker's ``VFS.report``; None: the worker could not send it, and the parent keeps its own tree;
    ``output``: the ``(stream, bytes)`` chunks not sent yet, which come before the answer).

A run whose tree is the empty standard layout for its limits
(``VFS.is_empty_for``: no files given, no packages) sends ``EMPTY_TREE``
in its place, and the worker makes that tree itself. Most runs get no
files; the tree's rows cost the parent a pickle and the worker an
unpickle per run. The answer carries the tree's report only (``VFS.report``:
``/out`` and the charge), which is all the parent reads of it.

The core's data holds read-only mappings (``MappingProxyType``), which
pickle cannot take by itself; the pickler here sends them as dicts and
makes them read-only again on the other side. The frozen dataclasses of
every run (its spec, limits and outcome) go as their field values
(``_by_fields``), the field names worked out once per process.
"""

from __future__ import annotations

import copyreg
import dataclasses
import io
import operator
import os
import pickle
import struct
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import IO, Any, Final

from playground.core.limits import ResolvedLimits
from playground.core.result import Outcome
from playground.core.spec import Spec

_LENGTH: Final = struct.Struct("<I")
#: A cancel, on the worker's cancel pipe (``procworker``): the job's id.
CANCEL: Final = struct.Struct("<Q")
#: In a run's message, in place of a tree that ``VFS.is_empty_for`` the run's limits (module docstring).
EMPTY_TREE: Final = "empty"
#: A frame larger than this is refused (a program's tree is bounded by its quota, far below).
MAX_FRAME: Final = 1 << 31


def read_only(items: dict[Any, Any]) -> Mapping[Any, Any]:
    """A dict made read-only again on the receiving side."""
    return MappingProxyType(items)


#: The frozen dataclasses sent as their field values (``_by_fields``), with their fields' names in order.
_FIELDS: Final[dict[type[Any], tuple[str, ...]]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in (Spec, ResolvedLimits, Outcome)
}


def rebuild(cls: type[Any], values: tuple[Any, ...]) -> Any:
    """An instance of ``cls`` (one of ``_FIELDS``) with ``values`` for its fields, as sent."""
    made = object.__new__(cls)
    for name, value in zip(_FIELDS[cls], values, strict=True):
        object.__setattr__(made, name, value)
    return made


def _by_fields(cls: type[Any]) -> Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]:
    """A reducer that sends an instance of ``cls`` as its field values.

    Pickle's own way for a dataclass asks ``dataclasses.fields`` for every
    instance, on both sides: the spec and limits of every run and the
    outcome of its answer cost the main process about 14 µs of the 36 its
    two pickles took (hot, a Lua hello world), and the worker about 9.
    """
    names = _FIELDS[cls]
    if len(names) == 1:  # attrgetter of one name gives the value itself
        return lambda obj: (rebuild, (cls, (getattr(obj, names[0]),)))
    getter = operator.attrgetter(*names)
    return lambda obj: (rebuild, (cls, getter(obj)))


_DISPATCH: Final[dict[type, Any]] = {
    **copyreg.dispatch_table,
    MappingProxyType: lambda m: (read_only, (dict(m),)),
    **{cls: _by_fields(cls) for cls in _FIELDS},
}


def dumps(message: tuple[Any, ...]) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(message)
    return buffer.getvalue()


class Writer:
    """Frames written whole by any thread, straight to a pipe's descriptor.

    ``os.write`` on the descriptor, not a buffered file's ``write`` and
    ``flush``: one call less, and no copy into a buffer, for each of the
    parent's hand-overs. A blocking pipe takes a write whole unless a
    signal cuts it short; the rest is written after it.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        """Write one message (raises OSError when the other end is gone)."""
        data = dumps(message)
        frames = _LENGTH.pack(len(data)) + data
        with self._lock:
            written = os.write(self._fd, frames)
            if written < len(frames):
                view = memoryview(frames)
                while written < len(frames):
                    written += os.write(self._fd, view[written:])


def receive(stream: IO[bytes]) -> tuple[Any, ...] | None:
    """The next message, or None at the end of the stream.

    Raises:
        OSError: a frame is cut short or too large.
    """
    head = _read_exactly(stream, _LENGTH.size)
    if head is None:
        return None
    (size,) = _LENGTH.unpack(head)
    if size > MAX_FRAME:
        raise OSError(f"a frame of {size} bytes")
    body = _read_exactly(stream, size)
    if body is None:
        raise OSError("the stream ended inside a frame")
    return _message(body)


def _message(body: bytes | memoryview) -> tuple[Any, ...]:
    message = pickle.loads(body)
    if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
        raise OSError("not a message")
    return message


class FrameReader:
    """The messages in a stream read piecemeal (a non-blocking pipe read when the event loop says it is ready).

    ``feed`` takes whatever bytes came and returns the messages they
    complete; a frame cut across reads waits for the rest.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[Any, ...]]:
        """The messages completed by ``data``, in order.

        Raises:
            OSError: a frame too large, or one that is not a message.
        """
        buffer = self._buffer
        if not buffer and len(data) >= _LENGTH.size:  # most reads: whole frames, nothing left over
            (size,) = _LENGTH.unpack_from(data)
            if len(data) == _LENGTH.size + size and size <= MAX_FRAME:
                return [_message(memoryview(data)[_LENGTH.size :])]
        buffer += data
        messages: list[tuple[Any, ...]] = []
        at = 0
        while len(buffer) - at >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(buffer, at)
            if size > MAX_FRAME:
                raise OSError(f"a frame of {size} bytes")
            end = at + _LENGTH.size + size
            if end > len(buffer):
                break
            messages.append(_message(bytes(buffer[at + _LENGTH.size : end])))
            at = end
        del buffer[:at]
        return messages


def receive_cancel(stream: IO[bytes]) -> int | None:
    """The job id of the next cancel on a cancel pipe (``CANCEL``), or None at its end.

    Raises:
        OSError: the pipe broke, or ended inside a cancel.
    """
    data = _read_exactly(stream, CANCEL.size)
    return None if data is None else int(CANCEL.unpack(data)[0])


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            if chunks:
                raise OSError("the stream ended inside a frame")
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
