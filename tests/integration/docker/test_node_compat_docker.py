"""Node itself still prints what ``tests/integration/node_compat`` expects (the Wasm tier is held to it)."""

from __future__ import annotations

import pytest

from backends.docker.engine import Engine
from playground.core import Limits, Sandbox, Spec
from playground.packs import node
from tests.integration.node_compat import PROGRAMS, NodeProgram

from .conftest import require_image


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
async def test_node_prints_the_expected_output(engine: Engine, sandbox: Sandbox, program: NodeProgram) -> None:
    require_image(engine, node.PACK)
    limits = Limits(wall_time=60)
    spec = Spec(lang="node", code=program.code, main_file=program.name, stdin=program.stdin, limits=limits)
    result = await sandbox.run(spec)
    assert result.backend == "docker"
    assert (result.exit_code, result.stderr) == (0, b""), result.stderr.decode()
    assert result.stdout.decode() == program.expected.decode()
