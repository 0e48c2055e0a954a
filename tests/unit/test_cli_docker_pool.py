"""``--docker-pool N`` on run, serve, mcp and gui, and ``--wasm-processes N`` on mcp: parsed, checked, and handed
to the sandbox factory.

Tries to break: a value the flag must refuse (negative, too large, not a
number), a sub-command that silently lacks the flag, and a given size that
never reaches ``assembly.default_sandbox`` (and so the Docker tier).
"""

from __future__ import annotations

import os

import pytest

from playground import cli
from playground.cli import build_parser
from playground.cli.pool_flag import DEFAULT_PROCESSES, MAX_POOL, MAX_PROCESSES
from playground.core import Outcome, Pack, Policy, Sandbox, WasmSpec
from tests.fake_backend import FakeBackend

TEXT = Pack(name="text", aliases=("txt",), extensions=(".txt",), wasm=WasmSpec(module=None))


@pytest.mark.parametrize("command", [["run", "-e", "x"], ["serve", "app.py"], ["mcp"], ["gui"]])
def test_every_command_that_runs_guests_takes_the_flag(command: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args([*command, "--docker-pool", "3"]).docker_pool == 3
    assert parser.parse_args(command).docker_pool is None


@pytest.mark.parametrize("value", ["-1", str(MAX_POOL + 1), "two", "1.5"])
def test_bad_sizes_are_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", "-e", "x", "--docker-pool", value])
    assert exited.value.code == 2
    assert "--docker-pool" in capsys.readouterr().err


def test_help_documents_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["mcp", "--help"])
    out = capsys.readouterr().out
    assert "--docker-pool N" in out and "0 disables" in out


@pytest.mark.parametrize(("flag", "expected"), [([], None), (["--docker-pool", "0"], 0), (["--docker-pool", "4"], 4)])
def test_the_size_reaches_the_sandbox_factory(
    flag: list[str], expected: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Policy, int | None]] = []

    def factory(policy: Policy, docker_pool: int | None = None) -> Sandbox:
        seen.append((policy, docker_pool))
        backend = FakeBackend("wasm", lambda req: (req.output.write_stdout(b"ok\n"), Outcome(exit_code=0))[1])
        return Sandbox(backends=[backend], packs=[TEXT])

    monkeypatch.setattr(cli, "_default_factory", factory)
    assert cli.main(["run", "-l", "text", "-e", "print ok", *flag]) == 0
    assert [pool for _, pool in seen] == [expected]


def test_default_sandbox_gives_the_docker_tier_the_size() -> None:
    from playground.assembly import default_sandbox, docker_pool_size, set_docker_pool

    sandbox = default_sandbox(docker_pool=2)
    try:
        if "docker" not in sandbox.backends or docker_pool_size(sandbox) is None:
            pytest.skip("no Docker tier in this build (the docker SDK is missing)")
        assert docker_pool_size(sandbox) == 2
        assert set_docker_pool(sandbox, 0) and docker_pool_size(sandbox) == 0
        with pytest.raises(ValueError):
            set_docker_pool(sandbox, -1)
    finally:
        sandbox.close()


@pytest.mark.parametrize("value", ["-1", str(MAX_PROCESSES + 1), "two"])
def test_bad_process_counts_are_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["mcp", "--wasm-processes", value])
    assert exited.value.code == 2
    assert "--wasm-processes" in capsys.readouterr().err


def test_the_process_count_reaches_the_wasm_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def factory(policy: Policy, docker_pool: int | None = None, wasm_processes: int = 0) -> Sandbox:
        seen.append(wasm_processes)
        raise SystemExit(0)  # the server itself is tested elsewhere

    monkeypatch.setattr(cli, "_default_factory", factory)
    with pytest.raises(SystemExit):
        cli.main(["mcp", "--wasm-processes", "2"])
    assert seen == [2]
    assert build_parser().parse_args(["mcp", "--wasm-processes", "0"]).wasm_processes == 0


@pytest.mark.parametrize(("cpus", "expected"), [(1, 0), (2, DEFAULT_PROCESSES), (8, DEFAULT_PROCESSES)])
def test_mcp_has_workers_by_default_where_there_are_cpus_for_them(
    cpus: int, expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    assert build_parser().parse_args(["mcp"]).wasm_processes == expected
    assert build_parser().parse_args(["run", "x.py"]).__dict__.get("wasm_processes") is None  # mcp's alone


def test_default_sandbox_gives_the_wasm_tier_its_workers() -> None:
    from playground.assembly import default_sandbox

    sandbox = default_sandbox(wasm_processes=2)
    try:
        assert sandbox.backends["wasm"].processes == 2  # type: ignore[attr-defined]
    finally:
        sandbox.close()


def test_the_flag_and_the_pool_agree_on_the_most_workers() -> None:
    from backends.wasm import procpool

    assert procpool.MAX_PROCESSES == MAX_PROCESSES  # the CLI does not import wasmtime to read it
