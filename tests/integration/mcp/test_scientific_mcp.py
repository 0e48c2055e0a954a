"""The real MCP server with Python's scientific runtime: charts come back as image content.

The server sets the runtime up on first use (download and compile, outside
the program's time limit), so this works on a fresh cache too, slowly once.
"""

from __future__ import annotations

import base64

import pytest
from mcp_support import call, connect, ok, real_server

pytestmark = pytest.mark.timeout(600)

PNG = b"\x89PNG\r\n\x1a\n"


async def test_figures_from_show_and_a_relative_savefig_are_image_content() -> None:
    code = (
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3], [2, 4, 1])\nplt.savefig('chart.png')\n"
        "plt.figure()\nplt.scatter([1, 2], [3, 4])\nplt.show()\n"
        "print('drawn')\n"
    )
    async with connect(real_server("--wasm-only", "--max-timeout", "120s")) as client:
        result = await call(client, "execute_code", language="python", code=code, timeout="120s")
        langs = {lang["name"]: lang for lang in ok(await call(client, "list_languages"))["languages"]}
    out = ok(result)
    assert out["exit_code"] == 0 and out["stdout"] == "drawn\n", out["stderr"]
    files = {f["name"]: f for f in out["files"]}
    assert {name: f["delivery"] for name, f in files.items()} == {"chart.png": "image", "figure-1.png": "image",
                                                                  "figure-2.png": "image"}
    images = [b for b in result.content if b.type == "image"]
    assert len(images) == 3 and all(b.mime_type == "image/png" for b in images)
    assert all(base64.b64decode(b.data).startswith(PNG) for b in images)
    (variant,) = langs["python"]["variants"]
    assert variant["name"] == "scientific" and variant["ready"] is True and "numpy" in variant["provides"]
