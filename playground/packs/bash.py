"""Bash in a container (Docker tier only).

Image: the official ``bash:5`` (Alpine based). No digest is pinned: none
could be looked up offline, so the tag is used as is; pin one with a local
override. Without it, ``playground-bash:local`` is used when present (built by
``playground images build bash``); see ``backends/docker/images.py``.
"""

from playground.core import DockerDriver, DockerSpec, Editing, Pack

PACK = Pack(
    name="bash",
    aliases=("sh",),
    version="5",
    extensions=(".sh", ".bash"),
    docker=DockerSpec(
        image="bash:5", cmd=("bash", "{main}", "{args}"), main_file="main.sh", typical_start=0.225,
        session=DockerDriver(
            resource="docker_bash_repl.sh", program=("bash", "--norc", "--noprofile"), fifos=("cmd", "res"),
            interrupt=("bash", "--norc", "--noprofile", "-c", "kill -INT -- -{pgid}"), keyboard=True,
        ),
        image_packages=("bash", "coreutils"),
    ),
    example='name="world"\necho "hello, $name from bash $BASH_VERSION"\n',
    description="GNU Bash in a hardened container",
    # '/work/main.sh: line 3: nope: command not found', syntax errors likewise.
    error_locations=(r"(?<![^\s:])(?P<file>[^\s:]+): line (?P<line>\d+):",),
    editing=Editing(lexer="bash", indent=2, server_signs=(
        (r"\b(?:nc|ncat|netcat)\b[^\n]*\s-\w*l|\bhttp\.server\b", "listens on a port"),
    )),
)

__all__ = ["PACK"]
