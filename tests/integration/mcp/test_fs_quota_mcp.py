"""Issue #12, item 1, from an agent's side: ``execute_code`` with default limits cannot beat the fs quota.

The real server (``.venv/bin/playground mcp``) on the real Wasm backend,
driven by the SDK's client. The guest fills a file, unlinks it while open
and truncates it through the descriptor, then keeps what it wrote in
``/out``: before the fix the quota was credited twice per round and 96 MiB
came back under the 16 MiB default.
"""

from __future__ import annotations

import pytest
from mcp_support import call, connect, ok, real_server

pytestmark = pytest.mark.timeout(300)

QUOTA = 16 << 20

ATTACK = """
import os
junk = b"x" * (4 << 20)
for i in range(24):
    with open("/work/t", "wb") as f:
        f.write(junk)
        f.flush()
        os.unlink("/work/t")
        f.truncate(0)
    with open(f"/out/o{i}", "wb") as g:
        g.write(junk)
"""


async def test_unlink_then_truncate_through_the_fd_hits_the_default_quota() -> None:
    async with connect(real_server("--wasm-only")) as client:
        out = ok(await call(client, "execute_code", language="python", code=ATTACK))
    assert out["status"] == "limit_exceeded" and out["limit_exceeded"] == "fs_quota", out
    assert sum(f["size"] for f in out["files"]) <= QUOTA
    assert len(out["files"]) < 4
    assert 0 <= out["usage"]["fs_bytes"] <= QUOTA
