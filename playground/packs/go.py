"""Go in a container (Docker tier only): ``go build`` into /work, then run the binary.

The build cache and GOPATH live in the /tmp tmpfs, cgo is off (no C
toolchain needed). Compile errors come back as stderr with a non-zero exit
code. A first build compiles parts of the standard library, so give it more
than the default memory and wall time (e.g. 512 MiB, 60 s).

Image: the official ``golang:1.23-alpine``; no digest pinned (none known
offline). Offline: ``PLAYGROUND_IMAGE_GO=playground-go:local`` (Debian's
golang-go, ``packaging/images/build.sh go``).
"""

from playground.core import Capabilities, DockerSpec, Pack

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
        typical_start=0.52,  # go build included
    ),
    caps=Capabilities(compiles=True),
    example='package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello from Go")\n}\n',
    description="Go (go build) in a hardened container",
)

__all__ = ["PACK"]
