"""Java in a container (Docker tier only): ``javac`` into /work, then ``java``.

The program is saved under the user's file name (``Spec.main_file``;
``/work/Main.java`` by default) and its class of that name is run (``{stem}``),
as javac wants of a public class: ``Hello.java`` holds ``class Hello``.
Compile errors come back as stderr with javac's non-zero
exit code. Both JVMs run with the serial GC, C1 only and no perf-data file,
which keeps them inside 64 processes and little memory (see ``LIMITS``).

Image: the official ``eclipse-temurin:21``; no digest pinned (none known
offline). Without it, ``playground-java:local`` is used when present
(Debian's default-jdk-headless, ``playground images build java``); see
``backends/docker/images.py``.
"""

from playground.core import DockerSpec, Editing, Limits, Pack

MiB = 1 << 20

#: Measured with bench/compiler_limits.py (hello world, javac + java, playground-java:local = Debian
#: OpenJDK 17, 2 cores): the cgroup's peak is 141 MiB with a cold page cache (the JDK's modules file is
#: read into the run's memory) and 37 MiB with a warm one. Cold, under smaller limits: 96 MiB and more
#: pass in about 1 s, 64 MiB takes 12 s (past the 10 s default), 48 MiB thrashes past 120 s. So: 256 MiB,
#: room above the cold peak, and the JVM sizes its heap from it (a quarter: 64 MiB for the program).
LIMITS = Limits(memory=256 * MiB)

_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xss512k")

PACK = Pack(
    name="java",
    version="21",
    extensions=(".java",),
    docker=DockerSpec(
        image="eclipse-temurin:21",
        compile=("javac", *(f"-J{flag}" for flag in _JVM), "-d", "/work", "{main}"),
        cmd=("java", *_JVM, "-cp", "/work", "{stem}", "{args}"),
        main_file="Main.java",
        image_packages=("default-jdk-headless",),
        typical_start=0.85,  # javac included
    ),
    limits=LIMITS,
    example=(
        "public class Main {\n"
        "    public static void main(String[] args) {\n"
        '        System.out.println("hello from Java " + System.getProperty("java.version"));\n'
        "    }\n"
        "}\n"
    ),
    description="Java (javac + java) in a hardened container",
    # javac '/work/Main.java:3: error: ...', stack frames '\tat Main.main(Main.java:3)'.
    error_locations=(r"(?<![^\s():])(?P<file>[^\s():]+\.java):(?P<line>\d+)",),
    editing=Editing(lexer="java", indent=4, server_signs=(
        (r"\bHttpServer\.create\s*\(|\bnew\s+ServerSocket\s*\(", "listens on a port"),
    )),
)

__all__ = ["PACK"]
