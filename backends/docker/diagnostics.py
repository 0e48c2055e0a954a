"""``playground doctor``'s Docker lines: the daemon, host isolation, and each pack's image, with fix hints.

Why its own module: the doctor's wording and hints change independently of
how runs work; every line is ``required=False`` because the Docker tier is
optional.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from backends.docker.detect import DaemonProbe
from backends.docker.engine import EngineError
from backends.docker.images import images_hint
from backends.docker.imagestore import ImageStore
from backends.docker.pool import WarmPool
from playground.core import Diagnostic, Pack


def docker_diagnostics(
    probe: DaemonProbe, images: ImageStore, packs: Iterable[Pack], isolation: Callable[[], Diagnostic]
) -> list[Diagnostic]:
    """The daemon line (or why there is none), then ``isolation()`` and one line per pack's image."""
    found = probe.get()
    if found.reason is not None or found.info is None or found.endpoint is None:
        return [Diagnostic(name="docker daemon", ok=False, detail=found.reason or "?", hint=found.hint, required=False)]
    info = found.info
    lines = [
        Diagnostic(
            name="docker daemon",
            ok=True,
            detail=(
                f"{info.kind.value} {info.server_version} at {found.endpoint.url} ({found.endpoint.source}), "
                f"API {info.api_version}"
            ),
            required=False,
        ),
        isolation(),
    ]
    for pack in packs:
        image, source = images.resolver.resolve(pack, images.present)
        present = images.present(image)
        lines.append(
            Diagnostic(
                name=f"docker image for {pack.name}",
                ok=present,
                detail=f"{image} ({'present' if present else 'missing'}; from {source})",
                hint="" if present else f"{images_hint(pack.name)} (from Debian packages), or pull {image}",
                required=False,
            )
        )
    return lines


def pool_diagnostic(pool: WarmPool) -> Diagnostic:
    """The warm pool: its size, what is prepared now per language, and a parked container's memory."""
    status = pool.status()
    name = "docker warm pool"
    if status.size == 0:
        return Diagnostic(name=name, ok=True, detail="off (size 0): every run creates its container", required=False)
    if status.declined is not None:
        return Diagnostic(name=name, ok=True, detail=f"size {status.size}, {status.declined}", required=False)
    prepared = ", ".join(f"{lang} {n}" for lang, n in sorted(status.prepared.items())) or "none yet"
    detail = f"size {status.size} per language used; prepared now: {prepared}"
    try:
        memory = pool.idle_memory()
    except EngineError:
        memory = None
    if memory is not None:
        detail += f"; idle memory per prepared container {memory / (1 << 20):.1f} MiB (cgroup)"
    return Diagnostic(name=name, ok=True, detail=detail, required=False)
