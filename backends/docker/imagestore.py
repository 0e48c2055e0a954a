"""Which images the daemon has, and pulling a missing one once, with progress, remembering a failure.

Why its own module: every run, session and service needs its pack's image,
and asking the daemon each time is slow, so presence is cached for the probe's
TTL; concurrent first uses of one image share a single pull (a lock per
image); a failed pull is remembered for ``PULL_FAILURE_TTL`` so
``unavailable_reason`` can say why without pulling again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from backends.docker.control import RunControl
from backends.docker.engine import Engine, EngineError, ImagePullFailed
from backends.docker.images import ImageResolver, images_hint, missing_image_reason
from playground.core import BackendUnavailable, Pack, ProgressCallback

#: How long a failed pull is remembered (and reported by ``unavailable_reason``).
PULL_FAILURE_TTL: Final = 60.0


class ImageStore:
    """Image presence (cached ``ttl()`` seconds) and pulls, for the engine ``connected()`` returns."""

    def __init__(
        self,
        resolver: ImageResolver,
        *,
        connected: Callable[[], Engine],
        ttl: Callable[[], float],
        pull_timeout: float,
    ) -> None:
        self.resolver = resolver
        self._connected = connected
        self._ttl = ttl
        self._pull_timeout = pull_timeout
        self._present: dict[str, tuple[float, bool]] = {}
        self._failures: dict[str, tuple[float, str]] = {}
        self._pulls: dict[str, threading.Lock] = {}

    def present(self, image: str) -> bool:
        """Whether the daemon has ``image`` (False when it cannot be asked)."""
        cached = self._present.get(image)
        now = time.monotonic()
        if cached is not None and now - cached[0] < self._ttl():
            return cached[1]
        try:
            present = self._connected().image_present(image)
        except (BackendUnavailable, EngineError):
            return False
        self._present[image] = (now, present)
        return present

    def reason(self, pack: Pack) -> str | None:
        """None when ``pack``'s image is here; else why not (a recent failed pull, or how to get it)."""
        image, _ = self.resolver.resolve(pack, self.present)
        if self.present(image):
            return None
        failure = self._failures.get(image)
        if failure is not None and time.monotonic() - failure[0] < PULL_FAILURE_TTL:
            return failure[1]
        return missing_image_reason(pack, [i for i, _ in self.resolver.candidates(pack)])

    def ensure(self, engine: Engine, pack: Pack, progress: ProgressCallback | None, ctl: RunControl) -> str:
        """``pack``'s image, pulled first if missing (``ctl`` cancels the pull between progress reports).

        Raises:
            BackendUnavailable: not present and the pull failed (with how to build it offline).
        """
        image, source = self.resolver.resolve(pack, self.present)
        if self.present(image):
            return image
        lock = self._pulls.setdefault(image, threading.Lock())
        with lock:
            self._present.pop(image, None)
            if self.present(image):
                return image

            def report(message: str, fraction: float) -> None:
                ctl.check()
                if progress is not None:
                    progress(message, fraction)

            report(f"pulling {image} (first use)", -1.0)
            puller = Engine(engine.base_url, timeout=self._pull_timeout, version="1.32", tls=engine.tls)
            try:
                puller.pull(image, report)
            except ImagePullFailed as exc:
                message = (
                    f"image {image} (from {source}) is not present and could not be pulled: "
                    f"{exc.detail or exc}. Offline? Build a local image from Debian packages: {images_hint(pack.name)}"
                )
                self._failures[image] = (time.monotonic(), message)
                raise BackendUnavailable(f"docker: {message}") from exc
            finally:
                puller.close()
            self._failures.pop(image, None)
            self._present[image] = (time.monotonic(), True)
            report(f"pulled {image}", 1.0)
        return image
