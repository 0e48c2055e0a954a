"""Finding pack artifacts in the user cache and verifying them before first use.

Layout: ``<cache>/artifacts/<sha256>/<name>``, where ``<cache>`` is
``$PLAYGROUND_CACHE_DIR``, else ``$XDG_CACHE_HOME/sandbox-playground``,
else ``~/.cache/sandbox-playground``. The installer
(``playground setup``, ``backends.wasm.provision``) fills it.

Every artifact's SHA-256 is checked on its first use in the process (and
again if the file's size or mtime changes); a mismatch is an error that
names the file and both hashes, and the file is never used.

Thread-safe: verification results are cached under a lock.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Final

from playground.core.errors import BackendUnavailable
from playground.core.pack import Artifact

#: How to get a missing runtime; appears in every "not installed" message.
INSTALL_HINT: Final = "run: playground setup"
#: Seconds a file ``missing_reason`` found is taken as there without another stat.
PRESENT_FOR: Final = 1.0
_CHUNK: Final = 1 << 20


class ArtifactMismatch(BackendUnavailable):
    """An artifact's content does not match its pinned SHA-256 (corrupt or tampered)."""


def cache_root() -> Path:
    """The sandbox's cache directory (not created here)."""
    explicit = os.environ.get("PLAYGROUND_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "sandbox-playground"


def artifact_path(artifact: Artifact, root: Path) -> Path:
    """Where ``artifact`` lives under the cache directory ``root``."""
    return root / "artifacts" / artifact.sha256 / artifact.name


def not_installed(runtime: str) -> str:
    return f"runtime {runtime} is not installed; {INSTALL_HINT}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class ArtifactStore:
    """Finds artifacts under one cache directory and verifies each once. Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._verified: dict[Path, tuple[int, int]] = {}
        #: (sha256, name) -> the path: building it costs more than the stat (asked several times per run).
        self._paths: dict[tuple[str, str], Path] = {}
        #: (sha256, name) -> until when (``time.monotonic``) ``missing_reason`` takes the file as there.
        self._present_until: dict[tuple[str, str], float] = {}

    def path(self, artifact: Artifact) -> Path:
        """``artifact_path`` under this store's root, remembered."""
        key = (artifact.sha256, artifact.name)
        found = self._paths.get(key)
        if found is None:
            found = self._paths[key] = artifact_path(artifact, self.root)
        return found

    def missing_reason(self, artifact: Artifact, runtime: str) -> str | None:
        """None when the artifact file exists; else the "not installed" message. Cheap: a stat, at most once a
        ``PRESENT_FOR`` while it is there.

        The core's routing asks before every run: a stat per run cost the
        main process about 14 us of a Lua hello world's hand-over at
        concurrency 2 (its caches cold). A file found stays found for
        ``PRESENT_FOR``; one removed meanwhile fails the run that loads it
        with the same message (``verified_path``), and a missing one is
        looked for again at every call, so an install shows at once.
        """
        key = (artifact.sha256, artifact.name)
        now = time.monotonic()
        if self._present_until.get(key, 0.0) > now:
            return None
        if os.path.isfile(self.path(artifact)):
            self._present_until[key] = now + PRESENT_FOR
            return None
        return not_installed(runtime)

    def verified_path(self, artifact: Artifact, runtime: str) -> Path:
        """The artifact's path after its SHA-256 was checked (once per process and file version).

        Raises:
            BackendUnavailable: the artifact is not installed (message has the install hint).
            ArtifactMismatch: its content hash differs; the message names the
                file, the expected and the actual hash.
        """
        path = self.path(artifact)
        try:
            stat = os.stat(path)
        except OSError:
            raise BackendUnavailable(not_installed(runtime)) from None
        stamp = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            if self._verified.get(path) == stamp:
                return path
        actual = sha256_file(path)
        if actual != artifact.sha256:
            raise ArtifactMismatch(
                f"artifact {path} is corrupt or was replaced: expected sha256 {artifact.sha256}, "
                f"got {actual}; delete it and {INSTALL_HINT}"
            )
        with self._lock:
            self._verified[path] = stamp
        return path
