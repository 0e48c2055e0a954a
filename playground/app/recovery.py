"""Crash recovery for the editor: an unsaved buffer is kept on disk so a crash does not lose it.

Each window owns one slot in the recovery folder (the app's data dir):
``<id>.json`` holds the buffer, ``<id>.lock`` (a ``QLockFile``) says the
window is alive. A slot whose lock can be taken belongs to a window that
died without a clean quit: ``RecoveryStore.open`` hands back the newest such
buffer once, and the window shows it (never runs it). A clean quit, a save
and a discard remove the window's slot, so what is found on disk is always
newer than the last clean save; one whose file was saved after the buffer
was kept is dropped as stale.

Writes are queued on one writer thread (in order, atomically: temp file
plus ``os.replace``), so the GUI thread only snapshots the text. Files are
private to the user (0600 in a 0700 folder): they hold the user's code.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from PySide6.QtCore import QLockFile

log = logging.getLogger(__name__)

FORMAT = 1


@dataclass(frozen=True, slots=True)
class Unsaved:
    """An editor buffer with edits that were not saved; ``path`` is "" when it never had a file."""

    text: str
    language: str
    path: str
    saved_at: float


def _read(file: Path) -> Unsaved | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("unknown format")
        return Unsaved(text=str(data["text"]), language=str(data["language"]), path=str(data["path"]),
                       saved_at=float(data["saved_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        log.warning("ignoring the unreadable recovery file %s", file, exc_info=True)
        return None


def _superseded(unsaved: Unsaved) -> bool:
    """True when the buffer's file was written after the buffer was kept (a later clean save)."""
    if not unsaved.path:
        return False
    try:
        return Path(unsaved.path).stat().st_mtime > unsaved.saved_at
    except OSError:
        return False


class RecoveryStore:
    """One window's recovery slot. GUI thread only (the writer thread is internal).

    ``close`` (a clean quit) removes the slot; a crash leaves it for the
    next window. Every method is a no-op once the folder turned out to be
    unusable (logged once) or the store is closed.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._id = uuid.uuid4().hex
        self._lock: QLockFile | None = None
        self._writer: ThreadPoolExecutor | None = None
        self._last: Future[None] | None = None

    @property
    def slot(self) -> Path:
        return self.folder / f"{self._id}.json"

    def open(self) -> Unsaved | None:
        """Take this window's slot; return the newest buffer a crashed window left, removing its slot.

        Other crashed windows' buffers stay on disk for the next start, so
        none is dropped without being shown. Reads a few small files on the
        calling thread (once, at start-up).
        """
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("crash recovery is off: cannot create %s: %s", self.folder, exc)
            return None
        lock = QLockFile(str(self.folder / f"{self._id}.lock"))
        lock.setStaleLockTime(0)  # stale only when its process is gone, never by age
        if not lock.tryLock(0):
            log.warning("crash recovery is off: cannot lock %s (%s)", self.folder, lock.error())
            return None
        self._lock = lock
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recovery")
        found: list[tuple[Unsaved, Path, QLockFile]] = []
        for file in sorted(self.folder.glob("*.json")):
            if file.stem == self._id:
                continue
            other = QLockFile(str(file.with_suffix(".lock")))
            other.setStaleLockTime(0)
            if not other.tryLock(0):
                continue  # a live window's slot
            unsaved = _read(file)
            if unsaved is None or _superseded(unsaved):
                file.unlink(missing_ok=True)
                other.unlock()
                continue
            found.append((unsaved, file, other))
        found.sort(key=lambda item: item[0].saved_at)
        newest = found.pop() if found else None
        for _, _, other in found:
            other.unlock()  # stays on disk: offered at the next start
        if newest is None:
            return None
        unsaved, file, other = newest
        file.unlink(missing_ok=True)
        other.unlock()
        return unsaved

    def keep(self, unsaved: Unsaved) -> None:
        """Queue writing ``unsaved`` to this window's slot (replacing what was there)."""
        if self._writer is not None:
            self._last = self._writer.submit(self._write, unsaved)

    def discard(self) -> None:
        """Queue removing this window's slot: the buffer is clean (saved, opened, discarded)."""
        if self._writer is not None:
            self._last = self._writer.submit(self.slot.unlink, missing_ok=True)

    def wait(self, timeout: float | None = None) -> None:
        """Wait until queued writes are on disk (tests; the shutdown)."""
        last = self._last
        if last is not None:
            last.result(timeout)

    def close(self) -> None:
        """A clean quit: remove the slot and its lock, stop the writer. Idempotent."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.submit(self.slot.unlink, missing_ok=True)
            writer.shutdown(wait=True)
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.unlock()

    def _write(self, unsaved: Unsaved) -> None:
        """Writer thread: the slot is replaced atomically, so a crash mid-write keeps the previous copy."""
        data = json.dumps({"format": FORMAT, **asdict(unsaved)})  # ASCII: any text survives
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(data)
            os.replace(tmp, self.slot)
        except OSError:
            log.warning("could not keep the unsaved buffer in %s", self.folder, exc_info=True)
            Path(tmp).unlink(missing_ok=True)
