"""``playground doctor``'s Docker lines: the daemon, host isolation, and each pack's image, with fix hints.

Why its own module: the doctor's wording and hints change independently of
how runs work; every line is ``required=False`` because the Docker tier is
optional.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from backends.docker.detect import DaemonProbe
from backends.docker.images import images_hint
from backends.docker.imagestore import ImageStore
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

