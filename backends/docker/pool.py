"""Warm containers for one-shot runs: prepared ahead (created, started, attached, parked), used once, removed.

Why: creating and starting a hardened container is most of a short run's
time (issue #18). A ``WarmPool`` keeps, per language that has completed a
run, up to ``size`` containers created with exactly that run's create
arguments (``oneshot_profile``: limits, hardening, no network) and parked on
their stdin (``parked``). A later run whose create arguments and image are
the same takes one and sends its payload; any other run (other limits that
the container enforces, a ``NetPolicy``, ``Spec.packages``) gets a fresh
container as before. Every container serves one run and is then removed by
that run, so no state carries from one run to the next.

Where the host records a network-less run's attempts (``sinkhole``), a
prepared container's sinkhole is set up while it is prepared, recording
into an ``EvalLog`` that the run taking it points at its own log (the parked
shell sends nothing, so there is nothing before that to record).

Refills happen on short-lived threads started when a run completes, not
when it takes its container: on a small machine a refill's create and start
beside the run slowed the run by half (measured on 2 cores: a bash hello
158 ms p50 with the refill beside it, 92 ms after it). Nothing polls, so an
idle pool costs no CPU (the parked shells block in ``read``). A run that
finds its slot empty while a refill is under way waits for that refill (it
is ahead of a fresh create) unless other runs already wait for it. ``close`` removes every prepared container, in
parallel, within ``CLOSE_BUDGET`` seconds, and containers still being
prepared are removed by their own thread as soon as they exist.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import secrets
import threading
import time
import weakref
from collections.abc import Callable
from typing import Final

from backends.docker.control import RunControl
from backends.docker.engine import Attachment, Engine, EngineError
from backends.docker.evallog import EvalLog
from backends.docker.guestnet import NetnsError
from backends.docker.parked import PARKED_ARGV
from backends.docker.sinkhole import Sinkhole
from backends.docker.wrapper import MARK_ENV
from playground.core import BackendUnavailable

log = logging.getLogger(__name__)

#: The label that marks a prepared container (besides ``profile.LABEL``).
POOL_LABEL: Final = "io.github.sandbox-playground.pool"
#: How long ``close`` may take with prepared containers present.
CLOSE_BUDGET: Final = 0.9
#: How long a run waits for a refill under way before it creates a fresh container.
REFILL_WAIT: Final = 10.0
#: A prepared container that exited this long ago lost its owner (``sweep_stale``).
STALE_AFTER: Final = 60.0
#: The pool size when none is given: one prepared container per language that has been used.
DEFAULT_SIZE: Final = 1
#: Why Podman gets no pool (runs there always take a fresh container).
PODMAN_POOL_REASON: Final = (
    "declined on Podman: a prepared container is attached after it started, and Podman's Docker-compatible "
    "attach does not promise that stdin written then reaches the parked process (not verified there)"
)


@dataclasses.dataclass(slots=True)
class Prepared:
    """One parked container: its id, its marker (``MARK_ENV``), the open attach stream and, where the host
    records network attempts, its ``Sinkhole`` already set up, recording into ``recorder`` (nothing until a
    run ``begin``s its log there: the parked shell sends no packet)."""

    container: str
    mark: str
    attachment: Attachment
    hole: Sinkhole | None = None
    recorder: EvalLog | None = None

    def release(self) -> None:
        """Close what the host holds open for it (the attach stream, the sinkhole)."""
        self.attachment.close()
        if self.hole is not None:
            self.hole.close()


@dataclasses.dataclass(slots=True)
class _Slot:
    """One language's prepared containers, all made from ``image`` with the create arguments ``key``."""

    image: str
    key: str
    kwargs: dict[str, object]
    parked: list[Prepared] = dataclasses.field(default_factory=list)
    preparing: int = 0
    waiting: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class PoolStatus:
    """What ``playground doctor`` reports: the size, and per language how many are prepared now."""

    size: int
    prepared: dict[str, int]
    declined: str | None = None


def create_key(image: str, kwargs: dict[str, object]) -> str:
    """Two runs may share a prepared container only when this is equal: the image and every create argument."""
    return json.dumps([image, kwargs], sort_keys=True, default=repr)


#: Every pool not closed yet (``parked_everywhere``).
_LIVE: weakref.WeakSet[WarmPool] = weakref.WeakSet()
#: Every pool thread still running, of any pool (``settle``).
_BUSY: set[threading.Thread] = set()
_BUSY_LOCK = threading.Lock()


def settle(timeout: float) -> bool:
    """Wait until no pool thread of this process runs (a prepare, a removal), up to ``timeout`` seconds.

    ``close`` returns within ``CLOSE_BUDGET``; a container still being created then is removed by its own
    thread once it exists. This is how a caller that must see none left (a test's leak check) waits for that.
    """
    deadline = time.monotonic() + timeout
    while True:
        with _BUSY_LOCK:
            busy = list(_BUSY)
        if not busy:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        busy[0].join(timeout=left)


def parked_everywhere() -> set[str]:
    """The containers parked now in any open pool of this process: not leaks, they belong to a live backend
    (the Docker tests' leak check subtracts them; a used or closed pool's container is never in here)."""
    return {container for pool in list(_LIVE) for container in pool.parked_ids()}


def sweep_stale(engine: Engine, *, older_than: float = STALE_AFTER) -> int:
    """Remove prepared containers that exited more than ``older_than`` seconds ago; return how many.

    A parked container exits only when its owner's attach stream closes, so
    one that exited and is still here was left by a process that died (a
    crash, ``kill -9``) before its ``close``; a container a run took is
    removed by that run within moments of exiting, which the age spares.
    Running ones (another process's pool) are never touched.
    """
    removed = 0
    now = time.time()
    for container in engine.containers(label=POOL_LABEL):
        try:
            state = engine.state(container)
            if state.running or not state.finished_at or now - state.finished_at < older_than:
                continue
            engine.remove(container)
            removed += 1
        except EngineError as exc:  # gone meanwhile, or the daemon refused: the next sweep tries again
            log.info("could not sweep prepared container %s: %s", container[:12], exc)
    if removed:
        log.info("removed %d prepared container(s) left by a process that ended without closing", removed)
    return removed


class WarmPool:
    """Prepared containers per language; ``engine()`` gives the client to use (the backend's)."""

    def __init__(
        self, size: int, engine: Callable[[], Engine], *, record_network: Callable[[], bool] = lambda: False
    ) -> None:
        """``record_network()``: whether runs here have the host's network recorder (``sinkhole``); then a
        prepared container gets its sinkhole set up while it is prepared, not during the run."""
        if size < 0:
            raise ValueError(f"the pool size must be 0 or more, not {size}")
        self.size = size
        self._engine = engine
        self._record_network = record_network
        self._cond = threading.Condition()
        self._slots: dict[str, _Slot] = {}
        self._threads: set[threading.Thread] = set()
        self._closed = False
        self._swept = False
        self.declined: str | None = None
        _LIVE.add(self)

    # -- the run's side -------------------------------------------------------------------------

    def take(self, language: str, image: str, kwargs: dict[str, object], ctl: RunControl) -> Prepared | None:
        """A parked container made exactly like ``image``/``kwargs`` would be, or None (create a fresh one)."""
        if self.size == 0 or self.declined is not None:
            return None
        key = create_key(image, kwargs)
        deadline = time.monotonic() + REFILL_WAIT
        with self._cond:
            slot = self._slots.get(language)
            if slot is None or slot.key != key:
                return None
            slot.waiting += 1
            try:
                while not slot.parked and slot.preparing >= slot.waiting and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0 or ctl.cancelled.is_set():
                        return None
                    self._cond.wait(min(left, 0.1))
                if not slot.parked or self._closed or self._slots.get(language) is not slot:
                    return None
                taken = slot.parked.pop(0)
            finally:
                slot.waiting -= 1
        return taken

    def warm(self, language: str, image: str, kwargs: dict[str, object]) -> None:
        """A run of ``language`` with these create arguments completed: keep ``size`` prepared like it.

        Prepared containers made with other arguments are removed (the language's runs changed limits).
        """
        if self.size == 0 or self.declined is not None:
            return
        key = create_key(image, kwargs)
        with self._cond:
            if self._closed:
                return
            slot = self._slots.get(language)
            if slot is None or slot.key != key:
                stale = slot.parked if slot is not None else []
                slot = _Slot(image=image, key=key, kwargs=kwargs)
                self._slots[language] = slot
                for old in stale:
                    self._spawn(functools.partial(self._discard, old), "docker-pool-discard")
                self._cond.notify_all()
            self._fill_locked(language, slot)

    def resize(self, size: int) -> None:
        """Keep ``size`` prepared per language from now on: extra ones are removed, missing ones prepared
        after the language's next completed run (0 removes them all)."""
        if size < 0:
            raise ValueError(f"the pool size must be 0 or more, not {size}")
        with self._cond:
            if self._closed:
                return
            self.size = size
            extra = [p for slot in self._slots.values() for p in slot.parked[size:]]
            for slot in self._slots.values():
                del slot.parked[size:]
            if size == 0:
                self._slots.clear()
            self._cond.notify_all()
        for prepared in extra:
            self._spawn(functools.partial(self._discard, prepared), "docker-pool-discard")

    # -- status ---------------------------------------------------------------------------------

    def status(self) -> PoolStatus:
        with self._cond:
            prepared = {name: len(slot.parked) for name, slot in self._slots.items()}
        return PoolStatus(size=self.size, prepared=prepared, declined=self.declined)

    def parked_ids(self) -> set[str]:
        """The containers parked now (not in a run)."""
        with self._cond:
            return {p.container for slot in self._slots.values() for p in slot.parked}

    def idle_memory(self) -> int | None:
        """The memory one parked container uses now, as its cgroup counts it (bytes), or None if none is parked."""
        ids = sorted(self.parked_ids())
        if not ids:
            return None
        return self._engine().memory_usage(ids[0])

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        """Remove every prepared container (in parallel) and refuse to prepare more; within ``CLOSE_BUDGET``."""
        deadline = time.monotonic() + CLOSE_BUDGET
        with self._cond:
            if self._closed:
                return
            self._closed = True
            parked = [p for slot in self._slots.values() for p in slot.parked]
            self._slots.clear()
            self._cond.notify_all()
        for prepared in parked:
            self._spawn(functools.partial(self._discard, prepared), "docker-pool-close")
        while True:
            with self._cond:
                threads = list(self._threads)
            left = deadline - time.monotonic()
            if not threads or left <= 0:
                break
            threads[0].join(timeout=left)
            if not threads[0].is_alive():
                with self._cond:
                    self._threads.discard(threads[0])

    # -- internals ------------------------------------------------------------------------------

    def _fill_locked(self, language: str, slot: _Slot) -> None:
        missing = self.size - len(slot.parked) - slot.preparing
        for _ in range(max(0, missing)):
            slot.preparing += 1
            self._spawn(lambda: self._prepare(language, slot), "docker-pool-fill")

    def _spawn(self, job: Callable[[], None], name: str) -> None:
        def run() -> None:
            try:
                job()
            finally:
                with self._cond:
                    self._threads.discard(thread)
                    self._cond.notify_all()
                with _BUSY_LOCK:
                    _BUSY.discard(thread)

        # Not a daemon: a removal under way finishes even when the interpreter exits.
        thread = threading.Thread(target=run, name=name)
        with self._cond:
            self._threads.add(thread)
        with _BUSY_LOCK:
            _BUSY.add(thread)
        thread.start()

    def _prepare(self, language: str, slot: _Slot) -> None:
        prepared: Prepared | None = None
        try:
            prepared = self._make(slot)
        except Exception as exc:  # the daemon refused or went away: runs take the fresh path
            log.info("could not prepare a %s container: %s", language, exc)
        with self._cond:
            slot.preparing -= 1
            keep = prepared is not None and not self._closed and self._slots.get(language) is slot
            if keep and prepared is not None:
                slot.parked.append(prepared)
            self._cond.notify_all()
        if prepared is not None and not keep:
            self._discard(prepared)

    def _make(self, slot: _Slot) -> Prepared:
        engine = self._engine()
        with self._cond:
            sweep, self._swept = not self._swept, True
        if sweep:  # once per pool, on a refill thread: no run waits for it
            sweep_stale(engine)
        mark = secrets.token_hex(16)
        labels = dict(slot.kwargs.get("labels") or {})  # type: ignore[call-overload]
        kwargs = {**slot.kwargs, "labels": {**labels, POOL_LABEL: "prepared"}}
        container = engine.create(slot.image, list(PARKED_ARGV), kwargs, {MARK_ENV: mark})
        try:
            attachment = engine.attach(container)
            try:
                engine.start(container)
            except BaseException:
                attachment.close()
                raise
        except BaseException:
            engine.remove(container)
            raise
        prepared = Prepared(container=container, mark=mark, attachment=attachment)
        if self._record_network():
            recorder = EvalLog()
            try:
                prepared.hole, prepared.recorder = Sinkhole.open(engine, container, recorder), recorder
            except NetnsError as exc:  # the run sets one up itself, as a fresh run does
                log.info("no sinkhole for a prepared container: %s", exc)
        return prepared

    def _discard(self, prepared: Prepared) -> None:
        prepared.release()
        self._remove(prepared.container)

    def _remove(self, container: str) -> None:
        try:
            self._engine().remove(container)
        except (EngineError, BackendUnavailable):
            log.warning("could not remove pool container %s", container[:12], exc_info=True)
