"""Node.js in a container (Docker tier only).

Image: the official ``node:22-slim``; no digest pinned (none known offline).
Claims no file extension: ``.js``, ``.mjs`` and ``.cjs`` belong to the
``javascript`` pack (QuickJS on the Wasm tier); ask for node by name. Without
it, ``playground-node:local`` is used when present (Debian's nodejs, built by
``playground images build node``); see ``backends/docker/images.py``.
"""

from playground.core import DockerDriver, DockerSpec, Editing, Pack
from playground.packs.javascript import SERVER_SIGNS
from playground.packs.node_watch import BOOT

PACK = Pack(
    name="node",
    aliases=("nodejs",),
    version="22",
    # node_watch.BOOT installs the in-guest attempt report, then runs the program as `node main.js` would.
    docker=DockerSpec(
        image="node:22-slim", cmd=("node", "-e", BOOT, "{main}", "{args}"), main_file="main.js", typical_start=0.41,
        session=DockerDriver(
            resource="docker_node_repl.js", program=("node",), fifos=("out", "err", "kbd"), keyboard=True,
            # bash starts in a few ms, node in a few hundred: node only in an image without bash.
            interrupt=("sh", "-c", "if command -v bash >/dev/null; then exec bash -c 'kill -INT -- -{pgid}'; fi; "
                                   "exec node -e \"process.kill(-{pgid}, 'SIGINT')\""),
        ),
        image_packages=("nodejs", "python3"),
    ),
    example='const os = require("os");\nconsole.log(`hello from node ${process.version} on ${os.platform()}`);\n',
    description="Node.js in a hardened container",
    # '/work/main.js:2' above the source line, and stack frames '    at f (/work/main.js:2:12)'.
    error_locations=(r"(?<![^\s():])(?P<file>[^\s():]+\.[cm]?js):(?P<line>\d+)(?::(?P<col>\d+))?",),
    editing=Editing(lexer="javascript", indent=2, server_signs=SERVER_SIGNS),
)

__all__ = ["PACK"]
