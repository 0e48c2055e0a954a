"""Node itself still prints what ``tests/integration/node_compat`` expects (the Wasm tier is held to it)."""

from __future__ import annotations

import pytest

from backends.docker.engine import Engine
from playground.core import Limits, Sandbox, Spec
from playground.packs import node
from tests.integration.node_compat import PROGRAMS, STDIN, STDIN_PROGRAMS

from .conftest import require_image


@pytest.mark.parametrize(("name", "code", "expected"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
async def test_node_prints_the_expected_output(
    engine: Engine, sandbox: Sandbox, name: str, code: str, expected: bytes
) -> None:
    require_image(engine, node.PACK)
    result = await sandbox.run(Spec(lang="node", code=code, main_file=name, limits=Limits(wall_time=60)))
    assert result.backend == "docker"
    assert (result.exit_code, result.stderr) == (0, b""), result.stderr.decode()
    assert result.stdout.decode() == expected.decode()


@pytest.mark.parametrize(("name", "code", "expected"), STDIN_PROGRAMS, ids=[p[0] for p in STDIN_PROGRAMS])
async def test_node_reads_stdin_as_expected(
    engine: Engine, sandbox: Sandbox, name: str, code: str, expected: bytes
) -> None:
    require_image(engine, node.PACK)
    result = await sandbox.run(Spec(lang="node", code=code, stdin=STDIN, limits=Limits(wall_time=60)))
    assert (result.exit_code, result.stderr) == (0, b""), result.stderr.decode()
    assert result.stdout == expected
