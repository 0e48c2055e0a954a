"""Rust in a container (Docker tier only): ``rustc`` into /work, then run the binary.

Unoptimised builds keep compile time low; temporary files go to the /tmp
tmpfs. Compile errors come back as stderr with rustc's non-zero exit code.
rustc and the linker need more than the default memory: see ``LIMITS``.

Image: the official ``rust:1-slim`` (Debian based, has the C linker); no
digest pinned (none known offline). Without it, ``playground-rust:local``
is used when present (Debian's rustc, ``playground images build rust``); see
``backends/docker/images.py``.
"""

from playground.core import DockerSpec, Editing, Limits, Pack

MiB = 1 << 20

#: Measured with bench/compiler_limits.py (hello world, playground-rust:local = Debian rustc 1.63, 2 cores):
#: the cgroup's peak is 432 MiB with a cold page cache (rustc's own libraries are read into the run's memory)
#: and 71 MiB with a warm one; the binary is 11.1 MiB in /work. Cold, under smaller limits: 64 MiB is
#: OOM-killed, 48 MiB and less thrash past 120 s, 80 MiB takes 30 s, 128 MiB 6 s, 192 MiB 2.7 s, 512 MiB
#: 1.4 s. So: 512 MiB (room above the cold peak), 64 MiB of tmpfs (the binary alone is 70% of the 16 MiB
#: default), and 20 s, since the compile is part of the run.
LIMITS = Limits(memory=512 * MiB, fs_quota=64 * MiB, wall_time=20.0, cpu_time=20.0)

PACK = Pack(
    name="rust",
    aliases=("rs",),
    version="1",
    extensions=(".rs",),
    docker=DockerSpec(
        image="rust:1-slim",
        # --crate-name: the crate is 'main' whatever the user's file is called (rustc refuses 'my-prog').
        compile=("env", "TMPDIR=/tmp", "rustc", "--crate-name", "main", "-C", "opt-level=0", "-o", "/work/main",
                 "{main}"),
        cmd=("/work/main", "{args}"),
        main_file="main.rs",
        image_packages=("rustc",),
        typical_start=0.44,  # rustc included
    ),
    limits=LIMITS,
    example='fn main() {\n    println!("hello from Rust");\n}\n',
    description="Rust (rustc) in a hardened container",
    # Compile errors '  --> /work/main.rs:2:5', panics "thread 'main' panicked at /work/main.rs:3:5:".
    error_locations=(r"(?<![^\s():'\"])(?P<file>[^\s():'\"]+\.rs):(?P<line>\d+):(?P<col>\d+)",),
    editing=Editing(lexer="rust", indent=4, server_signs=((r"\bTcpListener::bind\s*\(", "listens on a port"),)),
)

__all__ = ["PACK"]
