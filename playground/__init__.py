"""Sandbox Playground: run untrusted or AI-generated code without it touching the machine.

``playground.core`` is the embedded sandbox (stdlib only). ``default_sandbox()``
assembles a ``Sandbox`` with every pack and every backend this machine can use;
it is what the CLI, the MCP server and the GUI run on.
"""

from playground.assembly import default_sandbox

__all__ = ["default_sandbox"]
