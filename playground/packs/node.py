"""Node.js in a container (Docker tier only).

Image: the official ``node:22-slim``; no digest pinned (none known offline).
Claims no file extension: ``.js``, ``.mjs`` and ``.cjs`` belong to the
``javascript`` pack (QuickJS on the Wasm tier); ask for node by name. Without
it, ``playground-node:local`` is used when present (Debian's nodejs, built by
``playground images build node``); see ``backends/docker/images.py``.
"""

from playground.core import DockerSpec, Pack

PACK = Pack(
    name="node",
    aliases=("nodejs",),
    version="22",
    docker=DockerSpec(image="node:22-slim", cmd=("node", "{main}", "{args}"), main_file="main.js", typical_start=0.41),
    example='const os = require("os");\nconsole.log(`hello from node ${process.version} on ${os.platform()}`);\n',
    description="Node.js in a hardened container",
    # '/work/main.js:2' above the source line, and stack frames '    at f (/work/main.js:2:12)'.
    error_locations=(r"(?<![^\s():])(?P<file>[^\s():]+\.[cm]?js):(?P<line>\d+)(?::(?P<col>\d+))?",),
)

__all__ = ["PACK"]
