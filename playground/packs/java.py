"""Java in a container (Docker tier only): ``javac`` into /work, then ``java``.

The program is saved as ``/work/Main.java``, so the class with ``main``
must be ``Main``. Compile errors come back as stderr with javac's non-zero
exit code. Both JVMs run with the serial GC, C1 only and no perf-data file,
which keeps them inside the default 128 MiB and 64 processes.

Image: the official ``eclipse-temurin:21``; no digest pinned (none known
offline). Offline: ``PLAYGROUND_IMAGE_JAVA=playground-java:local``
(Debian's default-jdk-headless, ``packaging/images/build.sh java``).
"""

from playground.core import Capabilities, DockerSpec, Pack

_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xss512k")

PACK = Pack(
    name="java",
    version="21",
    extensions=(".java",),
    docker=DockerSpec(
        image="eclipse-temurin:21",
        compile=("javac", *(f"-J{flag}" for flag in _JVM), "-d", "/work", "{main}"),
        cmd=("java", *_JVM, "-cp", "/work", "Main", "{args}"),
        main_file="Main.java",
        typical_start=0.85,  # javac included
    ),
    caps=Capabilities(compiles=True),
    example=(
        "public class Main {\n"
        "    public static void main(String[] args) {\n"
        '        System.out.println("hello from Java " + System.getProperty("java.version"));\n'
        "    }\n"
        "}\n"
    ),
    description="Java (javac + java) in a hardened container",
)

__all__ = ["PACK"]
