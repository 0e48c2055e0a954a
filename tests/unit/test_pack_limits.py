"""A pack's own default limits (``Pack.limits``): merged over the built-in defaults, never over a chosen value.

Also how the front ends tell a limit the program ran into without being
stopped (``Result.limits_reached``): the CLI's exit code, the MCP
server's defaults per language, the GUI's summary (issue #17).
"""

from __future__ import annotations

import dataclasses

import pytest

from playground.cli import exitcodes
from playground.core import (
    DEFAULT_LIMITS,
    UNLIMITED,
    InvalidPack,
    Limits,
    Outcome,
    Pack,
    Request,
    Result,
    Sandbox,
    Spec,
    WasmSpec,
    reached_note,
)
from playground.mcp.config import ServerConfig
from playground.packs import go, java, python, rust
from tests.fake_backend import FakeBackend

MiB = 1 << 20
BIG = Pack(name="biglang", extensions=(".big",), wasm=WasmSpec(module=None),
           limits=Limits(memory=512 * MiB, wall_time=30.0))  # fmt: skip
PLAIN = Pack(name="plain", wasm=WasmSpec(module=None))


def test_pack_defaults_replace_only_the_built_in_ones() -> None:
    sb = Sandbox(packs=[BIG, PLAIN])
    expected = DEFAULT_LIMITS.merged(Limits(memory=512 * MiB, wall_time=30.0)).validate()
    assert sb.default_limits_for("biglang") == expected
    assert sb.default_limits_for("plain") == DEFAULT_LIMITS.validate()
    assert sb.resolve_limits(None, "biglang").memory == 512 * MiB
    assert sb.resolve_limits(None).memory == DEFAULT_LIMITS.memory  # no pack: the sandbox's defaults


def test_a_chosen_value_is_never_raised_by_a_pack() -> None:
    sb = Sandbox(packs=[BIG], default_limits=Limits(memory=64 * MiB))
    assert sb.default_limits_for(BIG).memory == 64 * MiB  # the sandbox's own choice wins
    assert sb.default_limits_for(BIG).wall_time == 30.0  # what it left unset is the pack's
    assert sb.resolve_limits(Limits(memory=32 * MiB, wall_time=2.0), BIG).memory == 32 * MiB
    assert sb.resolve_limits(Limits(wall_time=2.0), BIG).wall_time == 2.0
    assert sb.resolve_limits(Limits(memory=UNLIMITED), BIG).memory is UNLIMITED


async def test_a_run_gets_its_packs_defaults() -> None:
    seen: list[Limits] = []

    async def guest(request: Request) -> Outcome:
        seen.append(request.limits)
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", guest)], packs=[BIG])
    await sb.run(Spec(lang="biglang", code=""))
    await sb.run(Spec(lang="biglang", code="", limits=Limits(memory=100 * MiB)))
    assert [limits.memory for limits in seen] == [512 * MiB, 100 * MiB]


def test_bad_pack_limits_are_refused() -> None:
    with pytest.raises(InvalidPack, match="default limits"):
        Pack(name="bad", wasm=WasmSpec(module=None), limits=Limits(memory=-1)).validate()
    with pytest.raises(InvalidPack, match="needs"):
        Pack(name="bad", wasm=WasmSpec(module=None), error_locations=(r"(?P<file>x)",)).validate()


def test_the_compilers_have_room_and_the_interpreters_the_built_in_defaults() -> None:
    sb = Sandbox(packs=[rust.PACK, java.PACK, go.PACK, python.PACK])
    assert sb.default_limits_for("rust").memory == 512 * MiB
    assert sb.default_limits_for("java").memory == 256 * MiB
    assert sb.default_limits_for("go").memory == 256 * MiB
    assert sb.default_limits_for("python") == DEFAULT_LIMITS.validate()


def test_the_scientific_runtime_has_its_own_default_memory_and_a_chosen_value_stays() -> None:
    sb = Sandbox(packs=[python.PACK])
    light = Spec(lang="python", code="print(1)")
    heavy = Spec(lang="python", code="import statsmodels.api as sm")
    assert sb.default_limits_for(sb.pack_for(light)).memory == DEFAULT_LIMITS.memory
    scientific = sb.default_limits_for(sb.pack_for(heavy))
    assert scientific.memory == 256 * MiB
    assert scientific == DEFAULT_LIMITS.merged(Limits(memory=256 * MiB)).validate()  # memory only
    assert sb.resolve_limits(Limits(memory=100 * MiB), sb.pack_for(heavy)).memory == 100 * MiB
    chosen = Sandbox(packs=[python.PACK], default_limits=Limits(memory=64 * MiB))
    assert chosen.default_limits_for(chosen.pack_for(heavy)).memory == 64 * MiB  # the sandbox's choice wins
    with pytest.raises(InvalidPack, match="variant 'x': default limits"):
        dataclasses.replace(python.PACK.wasm.variants[0], name="x", limits=Limits(memory=-1))  # type: ignore[union-attr]


async def test_a_scientific_run_gets_the_variants_default_memory() -> None:
    seen: list[int | None] = []

    async def guest(request: Request) -> Outcome:
        seen.append(request.limits.memory)  # type: ignore[arg-type]
        return Outcome(exit_code=0)

    sb = Sandbox(backends=[FakeBackend("wasm", guest)], packs=[python.PACK])
    await sb.run(Spec(lang="python", code="import seaborn"))
    await sb.run(Spec(lang="python", code="print(1)"))
    await sb.run(Spec(lang="python", code="import seaborn", limits=Limits(memory=100 * MiB)))
    assert seen == [256 * MiB, 128 * MiB, 100 * MiB]


def test_mcp_defaults_per_language_stay_under_the_ceilings() -> None:
    sb = Sandbox(packs=[rust.PACK, python.PACK])
    config = ServerConfig(max_memory=256 * MiB, max_timeout=15.0)
    rust_limits = config.request_limits(timeout=None, memory=None, max_output=None,
                                        base=sb.default_limits_for("rust"))  # fmt: skip
    assert rust_limits.memory == 256 * MiB and rust_limits.wall_time == 15.0  # clipped: never above a ceiling
    rust_defaults = sb.default_limits_for("rust")
    roomy = ServerConfig().request_limits(timeout=None, memory=None, max_output=None, base=rust_defaults)
    assert roomy.memory == 512 * MiB and roomy.wall_time == 20.0 and roomy.fs_quota == 64 * MiB
    asked = ServerConfig().request_limits(timeout="2s", memory="64M", max_output=None, base=rust_defaults)
    assert (asked.memory, asked.wall_time) == (64 * MiB, 2.0)
    assert config.request_limits(timeout=None, memory=None, max_output=None) == config.defaults


def test_reaching_the_process_limit_is_told_alike() -> None:
    limits = DEFAULT_LIMITS
    assert reached_note("max_procs", limits) == (
        "the process limit (64) was reached: the sandbox refused to start more processes")
    assert exitcodes.for_reached(("max_procs",)) == exitcodes.PROCESS_LIMIT == 125
    assert exitcodes.for_reached(()) is None


def test_the_gui_summary_leads_with_the_limit_reached() -> None:
    from playground.app.run_summary import summarize_result

    summary = summarize_result(Result(exit_code=0, backend="docker", limits_reached=("max_procs",)), DEFAULT_LIMITS)
    assert summary.kind == "limit"
    assert summary.text.startswith("The process limit (64) was reached: the sandbox refused to start more "
                                   "processes; the program ran on · exit 0")
    assert summarize_result(Result(exit_code=0)).kind == "ok"
