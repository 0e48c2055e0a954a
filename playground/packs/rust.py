"""Rust in a container (Docker tier only): ``rustc`` into /work, then run the binary.

Unoptimised builds keep compile time low; temporary files go to the /tmp
tmpfs. Compile errors come back as stderr with rustc's non-zero exit code.
rustc and the linker need more than the default memory (e.g. 512 MiB).

Image: the official ``rust:1-slim`` (Debian based, has the C linker); no
digest pinned (none known offline). Offline:
``PLAYGROUND_IMAGE_RUST=playground-rust:local`` (Debian's rustc,
``packaging/images/build.sh rust``).
"""

from playground.core import Capabilities, DockerSpec, Pack

PACK = Pack(
    name="rust",
    aliases=("rs",),
    version="1",
    extensions=(".rs",),
    docker=DockerSpec(
        image="rust:1-slim",
        compile=("env", "TMPDIR=/tmp", "rustc", "-C", "opt-level=0", "-o", "/work/main", "{main}"),
        cmd=("/work/main", "{args}"),
        main_file="main.rs",
        typical_start=0.44,  # rustc included
    ),
    caps=Capabilities(compiles=True),
    example='fn main() {\n    println!("hello from Rust");\n}\n',
    description="Rust (rustc) in a hardened container",
)

__all__ = ["PACK"]
