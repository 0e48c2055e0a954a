"""A Docker REPL session's eval tells an agent what it tried (issue #15), through the real server and the SDK client.

Skipped without a Docker daemon, the bash image or the host's recorders (root, a local rootful daemon).
"""

from __future__ import annotations

import pytest
from mcp import StdioServerParameters
from mcp.types import TextContent
from mcp_support import PLAYGROUND, ROOT, call, connect, ok, real_server

from backends.docker.detect import DaemonProbe
from backends.docker.engine import Engine
from backends.docker.guestnet import netns_unavailable_reason
from backends.docker.sinkhole import tools_missing

pytestmark = pytest.mark.timeout(300)

NO_NET = "refused: no network in this sandbox"


@pytest.fixture(scope="module")
def docker_recorders() -> None:
    probe = DaemonProbe(timeout=3.0).get()
    if probe.endpoint is None:
        pytest.skip(f"no Docker daemon: {probe.reason}")
    engine = Engine(probe.endpoint.url, timeout=30.0, tls=probe.endpoint.tls)
    try:
        if not (engine.image_present("bash:5") or engine.image_present("playground-bash:local")):
            pytest.skip("no bash image (playground images build bash)")
    finally:
        engine.close()
    path = probe.endpoint.socket_path
    why = netns_unavailable_reason(socket_path=path, rootless=(path or "").startswith("/run/user/")) or tools_missing()
    if why is not None:
        pytest.skip(f"no host records here: {why}")


def this_tree() -> StdioServerParameters:
    """``playground mcp`` on bash, with this checkout's code first (a worktree shares another's venv)."""
    params = real_server("--languages", "bash")
    return StdioServerParameters(
        command=str(PLAYGROUND), args=params.args, env={**(params.env or {}), "PYTHONPATH": str(ROOT)}
    )


async def test_a_session_eval_carries_its_own_attempts(docker_recorders: None) -> None:
    async with connect(this_tree()) as client:
        opened = ok(await call(client, "eval_session", language="bash", code="echo hi"))
        sid = opened["session_id"]
        code = "sleep 0.2; (exec 3<>/dev/tcp/198.51.100.40/443) 2>/dev/null || echo refused"
        raw = await call(client, "eval_session", session_id=sid, code=code)
        after = ok(await call(client, "eval_session", session_id=sid, code="echo again"))
        ok(await call(client, "close_session", session_id=sid))
    tried = ok(raw)
    assert opened["stdout"] == "hi\n" and opened["attempts"] == [] and opened["attempts_summary"] is None
    assert tried["stdout"] == "refused\n"
    assert [(a["kind"], a["target"], a["verdict"], a["observer"]) for a in tried["attempts"]] == [
        ("process_spawn", "sleep 0.2", "allowed: inside the container", "host"),
        ("network_connect", "198.51.100.40:443", NO_NET, "host"),
    ]
    texts = [block.text for block in raw.content if isinstance(block, TextContent)]
    assert "connect 198.51.100.40:443" in texts[-1]
    assert after["stdout"] == "again\n" and after["attempts"] == []
