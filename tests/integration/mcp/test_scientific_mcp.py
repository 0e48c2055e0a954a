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


async def test_a_session_that_moves_to_the_scientific_runtime_gets_its_memory_up_to_the_ceiling() -> None:
    """A session whose first input moves it to the scientific runtime takes that runtime's 256 MiB when the agent
    asked for no memory (the OLS fit needs more than 128 MiB); one that asked for 128M keeps it; a server ceiling
    below 256M holds, at the highest value it allows."""
    imports = "import numpy as np\nimport statsmodels.api as sm\nx = np.arange(20.0)"
    fit = "print(sm.OLS(2 * x + 1, sm.add_constant(x)).fit().params.round(2).tolist())"

    async def limits_of(client: object, **asked: str) -> tuple[str, str, dict[str, object]]:
        """The memory of a plain session, of one that moved, and the moved one's fit."""
        plain = ok(await call(client, "eval_session", language="python", code="y = 1", **asked))
        moved = ok(await call(client, "eval_session", language="python", code=imports, **asked))
        assert moved["exit_code"] == 0, moved["stderr"]
        fitted = ok(await call(client, "eval_session", session_id=moved["session_id"], code=fit))
        return plain["limits"]["memory"], fitted["limits"]["memory"], fitted

    async with connect(real_server("--wasm-only", "--max-timeout", "120s")) as client:
        plain, moved, fitted = await limits_of(client, timeout="120s")
        assert (plain, moved) == ("128M", "256M")
        assert fitted["exit_code"] == 0 and fitted["stdout"] == "[1.0, 2.0]\n", fitted["stderr"]
        plain, moved, fitted = await limits_of(client, timeout="120s", memory="128M")
        assert (plain, moved) == ("128M", "128M")
        assert fitted["status"] == "limit_exceeded" and fitted["limit_exceeded"] == "memory", fitted
    async with connect(real_server("--wasm-only", "--max-timeout", "120s", "--max-memory", "200M")) as client:
        plain, moved, fitted = await limits_of(client, timeout="120s")
        assert (plain, moved) == ("200M", "200M")
        assert fitted["exit_code"] == 0 and fitted["stdout"] == "[1.0, 2.0]\n", fitted["stderr"]


async def test_a_session_on_the_light_runtime_that_imports_numpy_later_is_told_to_start_a_new_one() -> None:
    async with connect(real_server("--wasm-only", "--max-timeout", "120s")) as client:
        plain = ok(await call(client, "eval_session", language="python", code="y = 1", timeout="120s"))
        later = ok(await call(client, "eval_session", session_id=plain["session_id"], code="import numpy"))
        fresh = ok(await call(client, "eval_session", language="python", code="import numpy", timeout="120s"))
        ran = ok(await call(client, "execute_code", language="python", code="import requests"))
    assert later["exit_code"] == 1 and "ModuleNotFoundError" in later["stderr"]
    assert "start a new one) and make 'import numpy' its first input" in later["hint"], later["hint"]
    assert (fresh["exit_code"], fresh["hint"]) == (0, None)
    assert "--pip requests" in ran["hint"] and "session" not in ran["hint"]
