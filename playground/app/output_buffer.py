"""``OutputBuffer``: hands guest output from worker threads to the GUI thread in batches.

The core calls a run's ``on_output`` listener on the guest's worker thread,
once per write. Touching a widget there is forbidden and painting once per
write would stall the window during a flood, so the listener only appends
to this buffer under a lock; the GUI thread drains it on a timer (see
``OutputView``) and inserts whole batches.
"""

from __future__ import annotations

import codecs
import threading
from collections import deque
from dataclasses import dataclass

from playground.core import Stream


@dataclass(frozen=True, slots=True)
class Piece:
    """Decoded text of one stream, or a note from the GUI (``stream`` None), in arrival order."""

    stream: Stream | None
    text: str


class OutputBuffer:
    """Thread-safe queue of output chunks for one run.

    ``write`` may be called from any thread (it is the run's ``on_output``
    listener); ``drain``, ``note`` and ``finish`` belong to the GUI thread.
    Bytes are decoded as UTF-8 incrementally per stream, so a character
    split across two writes is not mangled; invalid bytes become U+FFFD.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: deque[tuple[Stream | None, bytes | str]] = deque()
        self._pending = 0
        self._finished = False
        self._decoders = {s: codecs.getincrementaldecoder("utf-8")(errors="replace") for s in Stream}

    def write(self, stream: Stream, data: bytes) -> None:
        """Queue a chunk. Cheap and non-blocking: safe as an ``OutputListener``."""
        with self._lock:
            self._chunks.append((stream, data))
            self._pending += len(data)

    def prepend(self, stream: Stream, data: bytes) -> None:
        """Queue ``data`` before everything not yet drained (output from before a late subscription)."""
        with self._lock:
            self._chunks.appendleft((stream, data))
            self._pending += len(data)

    def note(self, text: str) -> None:
        """Queue a note (e.g. "output truncated") after everything written so far."""
        with self._lock:
            self._chunks.append((None, text))
            self._pending += len(text)

    def finish(self) -> None:
        """No more writes will come; ``done`` turns True once drained."""
        with self._lock:
            self._finished = True

    @property
    def pending(self) -> int:
        """Bytes (and note characters) queued but not yet drained."""
        with self._lock:
            return self._pending

    @property
    def done(self) -> bool:
        """Finished and fully drained."""
        with self._lock:
            return self._finished and not self._chunks

    def drain(self, budget: int) -> list[Piece]:
        """Take up to ``budget`` bytes of queued output, decoded, adjacent pieces of a stream merged.

        A chunk larger than what is left of the budget is split, so one
        drain never hands the GUI more than it can paint in one tick.
        """
        taken: list[tuple[Stream | None, bytes | str]] = []
        with self._lock:
            left = budget
            while self._chunks and left > 0:
                stream, data = self._chunks[0]
                if len(data) <= left or stream is None:
                    self._chunks.popleft()
                else:
                    self._chunks[0] = (stream, data[left:])
                    data = data[:left]
                taken.append((stream, data))
                left -= len(data)
            self._pending = max(0, self._pending - (budget - left))
            final = self._finished and not self._chunks
        # Runs of one stream are joined once: adding each chunk to the last piece copied the run again for
        # every chunk (a 128 KiB drain of 64-byte lines copied ~128 MB and stalled the window).
        runs: list[tuple[Stream | None, list[str]]] = []
        for stream, data in taken:
            text = str(data) if isinstance(data, str) or stream is None else self._decoders[stream].decode(data)
            self._extend(runs, stream, text)
        if final:
            for stream, decoder in self._decoders.items():
                self._extend(runs, stream, decoder.decode(b"", final=True))
        return [Piece(stream, "".join(texts)) for stream, texts in runs]

    @staticmethod
    def _extend(runs: list[tuple[Stream | None, list[str]]], stream: Stream | None, text: str) -> None:
        if not text:
            return
        if runs and stream is not None and runs[-1][0] is stream:
            runs[-1][1].append(text)
        else:
            runs.append((stream, [text]))
