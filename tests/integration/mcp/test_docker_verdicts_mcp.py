"""The real MCP server on the Docker tier: a contained fork bomb and a missing image, as an agent sees them (#17).

Skipped without a Docker daemon or the bash image (``playground images build bash``).
"""

from __future__ import annotations

import os

import pytest
from mcp import StdioServerParameters
from mcp_support import PLAYGROUND, call, connect, ok, real_server

from backends.docker.detect import DaemonProbe
from backends.docker.engine import Engine
from tests.integration.docker.test_verdicts import FORK_BOMB  # ends once a fork was refused: no race

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def docker_with_bash() -> None:
    probe = DaemonProbe(timeout=3.0).get()
    if probe.endpoint is None:
        pytest.skip(f"no Docker daemon: {probe.reason}")
    engine = Engine(probe.endpoint.url, timeout=30.0, tls=probe.endpoint.tls)
    try:
        if not (engine.image_present("bash:5") or engine.image_present("playground-bash:local")):
            pytest.skip("no bash image (playground images build bash)")
    finally:
        engine.close()


async def test_a_contained_fork_bomb_is_completed_with_the_process_limit_in_words(docker_with_bash: None) -> None:
    async with connect(real_server("--languages", "bash")) as client:
        result = await call(client, "execute_code", language="bash", code=FORK_BOMB)
    out = ok(result)
    assert out["status"] == "completed" and out["exit_code"] == 0 and out["stdout"] == "main done\n"
    assert out["limits_reached"] == ["max_procs"]
    assert out["message"] == ("the process limit (64) was reached: the sandbox refused to start more processes; "
                              "the program ran on and exited with 0")
    text = result.content[0]
    assert text.type == "text" and "the process limit (64) was reached" in text.text


async def test_list_languages_says_a_language_whose_image_is_missing_cannot_run(docker_with_bash: None) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PLAYGROUND_CACHE_DIR", "XDG_CACHE_HOME")}
    env["PLAYGROUND_IMAGE_RUST"] = "playground-nonexistent:none"
    params = StdioServerParameters(command=str(PLAYGROUND), args=["mcp"], env=env)
    async with connect(params) as client:
        langs = {lang["name"]: lang for lang in ok(await call(client, "list_languages"))["languages"]}
        refused = await call(client, "execute_code", language="rust", code="fn main() {}\n")
    assert langs["rust"]["available"] is False and langs["rust"]["backend"] is None
    assert "playground-nonexistent:none" in langs["rust"]["reason"]
    assert "playground images build rust" in langs["rust"]["reason"]
    assert langs["bash"]["available"] is True and langs["bash"]["backend"] == "docker"
    assert refused.is_error and "playground images build rust" in refused.content[0].text
