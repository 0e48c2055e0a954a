"""The Docker/Podman tier: hardened, throw-away containers driven through the docker SDK.

``DockerBackend`` is the backend; ``hardening_profile`` is the pure mapping
from limits to container-create arguments; ``read_out_archive`` is the
strict reader of a guest's ``/out`` tar stream.
"""

from backends.docker.backend import DockerBackend
from backends.docker.images import ImageResolver
from backends.docker.outtar import OutArchive, OutQuotaExceeded, read_out_archive
from backends.docker.profile import EngineKind, hardening_profile

__all__ = [
    "DockerBackend",
    "EngineKind",
    "ImageResolver",
    "OutArchive",
    "OutQuotaExceeded",
    "hardening_profile",
    "read_out_archive",
]
