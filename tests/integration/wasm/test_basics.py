"""Hello world, argv, environment, stdin, exit codes, clocks, random, traps."""

from __future__ import annotations

import pytest

from playground.core import Sandbox, Spec

from .conftest import TEST_LIMITS


def run(sb: Sandbox, probe: bytes, *args: str, **kw: object) -> object:
    return sb.run_sync(Spec(lang="wasm", code=probe, args=args, limits=TEST_LIMITS, **kw))  # type: ignore[arg-type]


async def test_hello_world(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["hello"]))
    assert result.stdout == b"hello world\n"
    assert result.stderr == b""
    assert result.exit_code == 0
    assert result.backend == "wasm"
    assert result.usage.peak_memory > 0


async def test_args_are_exactly_the_spec_args(sandbox: Sandbox, probe_wasm: bytes) -> None:
    args = ["args", "a b", "", "ünï", "--flag=1"]
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=args))
    assert result.stdout.decode().split("\n")[:-1] == ["wasm", *args]


async def test_env_is_exactly_the_spec_env(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["env"], env={"A": "1", "B": "x=y"}))
    lines = result.stdout.decode().splitlines()
    assert sorted(lines) == ["A=1", "B=x=y"]
    assert not any(line.startswith(("HOME=", "PATH=", "USER=")) for line in lines)


async def test_stdin_is_read_and_eof_does_not_block(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["stdin"], stdin=b"line1\nline2"))
    assert result.stdout == b"line1\nline2\ntotal=11 again=0\n"


async def test_empty_stdin_reads_eof(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["stdin"]))
    assert result.stdout == b"\ntotal=0 again=0\n"


@pytest.mark.parametrize(("code", "expected"), [("0", 0), ("3", 3), ("255", 255), ("-1", 255)])
async def test_exit_codes(sandbox: Sandbox, probe_wasm: bytes, code: str, expected: int) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["exit", code]))
    assert result.exit_code == expected


async def test_clocks_and_random(sandbox: Sandbox, probe_wasm: bytes) -> None:
    clock = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["clock"]))
    realtime = int(clock.stdout.split(b"realtime=")[1].split()[0])
    assert realtime > 1_600_000_000
    one = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["random"]))
    two = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["random"]))
    assert len(one.stdout.strip()) == 32 and one.stdout != two.stdout


async def test_short_sleep_completes(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["nanosleep", "20"]))
    assert result.stdout == b"slept\n"
    assert result.usage.wall >= 0.02


async def test_trap_is_exit_134_with_a_message(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["trap"]))
    assert result.exit_code == 134
    assert result.stderr.startswith(b"wasm trap: unreachable")


async def test_c_stack_overflow_is_a_trap_not_a_crash(sandbox: Sandbox, probe_wasm: bytes) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=probe_wasm, args=["stack"]))
    assert result.exit_code == 134
    assert result.stderr.startswith(b"wasm trap: ")


async def test_wasm_call_stack_exhaustion_is_a_trap(sandbox: Sandbox) -> None:
    wat = '(module (memory (export "memory") 1) (func $f (call $f)) (func (export "_start") (call $f)))'
    result = await sandbox.run(Spec(lang="wasm", code=wat))
    assert result.exit_code == 134
    assert result.stderr == b"wasm trap: stack overflow\n"


async def test_wat_text_and_input_path_are_accepted(sandbox: Sandbox, probe_wasm: bytes) -> None:
    wat = '(module (memory (export "memory") 1) (func (export "_start")))'
    assert (await sandbox.run(Spec(lang="wasm", code=wat))).exit_code == 0
    for path in ("/in/prog.wasm", "prog.wasm"):
        result = await sandbox.run(Spec(lang="wasm", code=path, args=["hello"], files={"prog.wasm": probe_wasm}))
        assert result.stdout == b"hello world\n"
