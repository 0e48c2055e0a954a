"""Go in a container (Docker tier only): ``go build`` into /work, then run the binary.

The build cache and GOPATH live in the /tmp tmpfs, cgo is off (no C
toolchain needed). Compile errors come back as stderr with a non-zero exit
code. Its default limits are in ``LIMITS``. With the official image (Go
1.20 and later ship no compiled standard library) a first build in the
fresh /tmp cache compiles the standard library too: give such a run more
wall time (e.g. 60 s); that image was not measured here (no registry).

Image: the official ``golang:1.23-alpine``; no digest pinned (none known
offline). Without it, ``playground-go:local`` is used when present (Debian's
golang-go, built by ``playground images build go``); see ``backends/docker/images.py``.
"""

from playground.core import DockerSpec, Editing, Limits, Pack

MiB = 1 << 20

#: Measured with bench/compiler_limits.py (hello world, go build, playground-go:local = Debian Go 1.19
#: with its compiled standard library, 2 cores): the cgroup's peak is 115 MiB with a cold page cache and
#: 39 MiB with a warm one; /work holds a 1.7 MiB binary, the /tmp build cache 0.5 MiB. Cold, under smaller
#: limits: 96 MiB and more pass in under 1 s, 64 MiB takes 1.6 s, 48 MiB 7 s. So: 256 MiB, room above
#: the cold peak, and 64 MiB of tmpfs for the build cache of programs with more imports.
LIMITS = Limits(memory=256 * MiB, fs_quota=64 * MiB)

_ENV = ("env", "HOME=/tmp", "GOCACHE=/tmp/go-cache", "GOPATH=/tmp/go", "CGO_ENABLED=0")

PACK = Pack(
    name="go",
    aliases=("golang",),
    version="1.23",
    extensions=(".go",),
    docker=DockerSpec(
        image="golang:1.23-alpine",
        compile=(*_ENV, "go", "build", "-o", "/work/main", "{main}"),
        cmd=("/work/main", "{args}"),
        main_file="main.go",
        image_packages=("golang-go",),
        typical_start=0.52,  # go build included
    ),
    limits=LIMITS,
    example='package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello from Go")\n}\n',
    description="Go (go build) in a hardened container",
    # Compile errors './main.go:5:2: undefined: x', panics '\t/work/main.go:5 +0x1d'.
    error_locations=(r"(?<![^\s():])(?P<file>[^\s():]+\.go):(?P<line>\d+)(?::(?P<col>\d+))?",),
    editing=Editing(lexer="go", indent=4, server_signs=(
        (r"\bhttp\.ListenAndServe(?:TLS)?\s*\(|\bnet\.Listen\s*\(", "listens on a port"),
    )),
)

__all__ = ["PACK"]
