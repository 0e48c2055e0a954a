"""The backend's one API client, for whichever daemon the probe finds now; replaced when that changes.

Why its own module: the probe may answer a different endpoint later (a
daemon restarted elsewhere, ``DOCKER_HOST`` changed); every run asks here for
the client of the current one, so an old client is closed and a new one made
with the daemon's API version (capped at ``MAX_API_VERSION``) and its TLS files.
"""

from __future__ import annotations

import threading
from typing import Final

from backends.docker.detect import DaemonProbe, ProbeResult
from backends.docker.engine import Engine, EngineError, EngineInfo, version_tuple
from playground.core import BackendUnavailable

#: The highest API version we ask for (the SDK's default).
MAX_API_VERSION: Final = "1.45"


class EngineConnection:
    """``get()``: the client, the daemon's info and the probe's answer; ``close()`` ends it (idempotent)."""

    def __init__(self, probe: DaemonProbe, *, api_timeout: float) -> None:
        self._probe = probe
        self._api_timeout = api_timeout
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._url = ""
        self._closed = False

    def get(self) -> tuple[Engine, EngineInfo, ProbeResult]:
        """Raises: BackendUnavailable: no daemon answers, the client cannot be made, or closed."""
        probe = self._probe.get()
        if probe.reason is not None or probe.endpoint is None or probe.info is None:
            raise BackendUnavailable(f"docker: {probe.reason}; {probe.hint}")
        with self._lock:
            if self._closed:
                raise BackendUnavailable("the Docker backend is closed")
            if self._engine is None or self._url != probe.endpoint.url:
                if self._engine is not None:
                    self._engine.close()
                api = probe.info.api_version
                if version_tuple(api) > version_tuple(MAX_API_VERSION):
                    api = MAX_API_VERSION
                try:
                    self._engine = Engine(
                        probe.endpoint.url, timeout=self._api_timeout, version=api, tls=probe.endpoint.tls
                    )
                except EngineError as exc:
                    raise BackendUnavailable(f"docker: {exc}") from exc
                self._url = probe.endpoint.url
            return self._engine, probe.info, probe

    def close(self) -> None:
        with self._lock:
            self._closed = True
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()
