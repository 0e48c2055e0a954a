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


async def test_a_statsmodels_fit_runs_under_the_scientific_runtimes_default_memory() -> None:
    """Its libraries take more than the built-in 128 MiB (an OLS fit peaked at 134 MiB): the runtime's own default
    (256 MiB) applies when the agent asks for none, and a limit it asks for is kept."""
    code = (
        "import numpy as np\nimport statsmodels.api as sm\n"
        "x = np.arange(20.0)\ny = 2 * x + 1\n"
        "print(sm.OLS(y, sm.add_constant(x)).fit().params.round(2).tolist())\n"
    )
    async with connect(real_server("--wasm-only", "--max-timeout", "120s")) as client:
        roomy = ok(await call(client, "execute_code", language="python", code=code, timeout="120s"))
        tight = ok(await call(client, "execute_code", language="python", code=code, timeout="120s", memory="128M"))
    assert roomy["exit_code"] == 0 and roomy["stdout"] == "[1.0, 2.0]\n", roomy["stderr"]
    assert roomy["limits"]["memory"] == "256M"
    assert tight["status"] == "limit_exceeded" and tight["limit_exceeded"] == "memory", tight
    assert tight["limits"]["memory"] == "128M"
