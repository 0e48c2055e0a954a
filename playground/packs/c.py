"""C in a container (Docker tier only): ``cc`` into /work, then run the binary.

Optimised builds (``-O2``) with warnings on; temporary files go to the /tmp
tmpfs. Compile errors come back as stderr with the compiler's non-zero exit
code; a crash (a segmentation fault) is the program's exit by that signal.
Its default limits are in ``LIMITS``.

Image: the official ``gcc:14`` (Debian based); no digest pinned (none known
offline). Without it, ``playground-c:local`` is used when present (Debian's
gcc and libc6-dev, ``playground images build c``); see ``backends/docker/images.py``.
"""

from playground.core import DockerSpec, Editing, Limits, Pack

MiB = 1 << 20

#: Measured with bench/compiler_limits.py (hello world, gcc -O2, playground-c:local = Debian gcc 12.2,
#: 2 cores): the cgroup's peak is 57 MiB with a cold page cache (cc1, as and ld read into the run's memory)
#: and 7 MiB with a warm one, 0.4 s; /work holds a 16 KiB binary. Cold, under smaller limits: 32 MiB and
#: more pass in about 1 s or less, 16 MiB thrashes for 99 s, 8 MiB times out. A 45 KB program (400
#: functions calling libm) peaks at 103 MiB cold and takes 1.5 s. So: 256 MiB, as for go and java, room
#: above both; the built-in wall time and tmpfs fit.
LIMITS = Limits(memory=256 * MiB)

PACK = Pack(
    name="c",
    version="C17 (gcc)",
    extensions=(".c",),
    docker=DockerSpec(
        image="gcc:14",
        compile=("env", "TMPDIR=/tmp", "cc", "-std=gnu17", "-O2", "-Wall", "-o", "/work/main", "{main}", "-lm"),
        cmd=("/work/main", "{args}"),
        main_file="main.c",
        image_packages=("gcc", "libc6-dev"),
        typical_start=0.3,  # gcc included
    ),
    limits=LIMITS,
    example='#include <stdio.h>\n\nint main(void) {\n    printf("hello from C\\n");\n    return 0;\n}\n',
    description="C (gcc) in a hardened container",
    # gcc: '/work/main.c:3:5: error: ...' and warnings likewise; 'main.c:3: undefined reference' from ld.
    error_locations=(r"(?<![^\s():'\"])(?P<file>[^\s():'\"]+\.[ch]):(?P<line>\d+)(?::(?P<col>\d+))?",),
    editing=Editing(lexer="c", indent=4, server_signs=((r"\blisten\s*\(\s*\w+\s*,", "listens on a port"),)),
)

__all__ = ["PACK"]
