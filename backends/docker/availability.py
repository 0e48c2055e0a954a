"""What ``DockerBackend.unavailable_reason`` answers from: a snapshot of the daemon and images, learned off-thread.

Why its own module: the answer must never block a front end (``SlowAvailability``
in the core), so the last snapshot is kept here and a stale one is learned again
on a thread of its own, one at a time. What a pack's reason is comes from the
backend (``learn``); this module only keeps, ages and refreshes the answers.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable

from playground.core import Pack

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class Snapshot:
    """What ``refresh`` learned: per pack, None or why it cannot run; and why serving cannot (or None)."""

    learned_at: float
    reasons: dict[str, str | None]
    serve: str | None


class AvailabilityCache:
    """The last ``Snapshot`` and the packs it covers; ``ttl`` is how long a snapshot is fresh."""

    def __init__(
        self,
        packs: Iterable[Pack],
        *,
        ttl: Callable[[], float],
        invalidate: Callable[[], None],
        learn_reason: Callable[[Pack], str | None],
        learn_serve: Callable[[], str | None],
    ) -> None:
        self._ttl = ttl
        self._invalidate = invalidate
        self._learn_reason = learn_reason
        self._learn_serve = learn_serve
        self._lock = threading.Lock()
        self._known: dict[str, Pack] = {p.name: p for p in packs}
        self._learning: threading.Thread | None = None
        self._closed = False
        self.snapshot: Snapshot | None = None

    def refresh(self) -> None:
        """Learn now (blocking, after ``invalidate``) every known pack's reason and the serving reason."""
        self._invalidate()
        with self._lock:
            packs = dict(self._known)
        reasons = {name: self._learn_reason(pack) for name, pack in packs.items()}
        serve = self._learn_serve()
        with self._lock:
            self.snapshot = Snapshot(learned_at=time.monotonic(), reasons=reasons, serve=serve)

    def for_pack(self, pack: Pack) -> Snapshot | None:
        """The last snapshot; learns again in the background when it is stale or lacks ``pack``."""
        with self._lock:
            snapshot = self.snapshot
            known = pack.name in self._known
            self._known.setdefault(pack.name, pack)
            stale = snapshot is None or not known or time.monotonic() - snapshot.learned_at >= self._ttl()
            start = stale and not self._closed and (self._learning is None or not self._learning.is_alive())
            if start:
                self._learning = threading.Thread(target=self._learn_quietly, name="docker-availability", daemon=True)
                self._learning.start()
        return snapshot

    def close(self) -> None:
        """No more background learning."""
        with self._lock:
            self._closed = True

    def _learn_quietly(self) -> None:
        try:
            self.refresh()
        except Exception:  # a bug of ours: say so, and answer from what was known
            log.exception("learning the Docker tier's availability failed")
