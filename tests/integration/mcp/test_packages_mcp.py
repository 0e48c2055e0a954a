"""The real MCP server's ``packages`` argument: pure-Python packages from PyPI added to a run.

The server fetches them before the run (outside its timeout) through the
same mechanism as the library and CLI; the argument is strict (a list of
requirement strings); a native package is a tool error that names it; a
program that fails on a missing module gets a ``hint`` that says how.
"""

from __future__ import annotations

import pytest
from mcp_support import call, connect, error_text, ok, real_server

pytestmark = pytest.mark.timeout(600)


async def test_packages_are_added_refused_and_hinted() -> None:
    code = "import slugify\nprint(slugify.slugify('Héllo Wörld!'))"
    async with connect(real_server("--wasm-only")) as client:
        added = ok(await call(client, "execute_code", language="python", code=code, packages=["python-slugify"]))
        missing = ok(await call(client, "execute_code", language="python", code=code))
        native = await call(client, "execute_code", language="python", code="print(1)", packages=["orjson"])
        loose = await call(client, "execute_code", language="python", code="print(1)", packages="python-slugify")
        bad = await call(client, "execute_code", language="python", code="print(1)", packages=["-r x.txt"])
    assert added["exit_code"] == 0 and added["stdout"] == "hello-world\n", added["stderr"]
    assert added["hint"] is None
    assert missing["exit_code"] == 1 and "No module named 'slugify'" in missing["stderr"]
    assert "packages" in missing["hint"] and "slugify" in missing["hint"]
    assert "orjson needs native code" in error_text(native)
    assert "packages" in error_text(loose)
    assert "bad package" in error_text(bad)


async def test_what_the_wasm_tier_cannot_do_is_hinted_and_asyncio_runs() -> None:
    """A thread on the Wasm tier: the hint says why and names Docker (no package offered); asyncio works there."""
    threads = "import threading\nthreading.Thread(target=print).start()"
    loop = "import asyncio\nasync def main():\n    await asyncio.sleep(0.01)\n    return 7\nprint(asyncio.run(main()))"
    async with connect(real_server("--wasm-only")) as client:
        failed = ok(await call(client, "execute_code", language="python", code=threads))
        ran = ok(await call(client, "execute_code", language="python", code=loop))
    assert failed["exit_code"] == 1 and "can't start new thread" in failed["stderr"]
    assert failed["hint"].startswith("this WebAssembly Python runs one thread") and "Docker" in failed["hint"]
    assert (ran["exit_code"], ran["stdout"], ran["hint"]) == (0, "7\n", None), ran["stderr"]
