"""Real runs on a real daemon: hello world, files, stdin, args, env, exit codes, concurrency."""

from __future__ import annotations

import asyncio

import pytest

from backends.docker.engine import Engine
from playground.core import Sandbox, Spec
from playground.packs import bash, node

from .conftest import require_image


@pytest.fixture(autouse=True)
def bash_image(engine: Engine) -> None:
    require_image(engine, bash.PACK)


async def test_bash_hello(sandbox: Sandbox) -> None:
    result = await sandbox.run(Spec(lang="bash", code='echo "hello $((6 * 7))"; echo oops >&2'))
    assert result.stdout == b"hello 42\n"
    assert result.stderr == b"oops\n"
    assert result.exit_code == 0
    assert result.backend == "docker"
    assert not result.truncated
    assert result.usage.peak_memory > 0


async def test_node_hello(sandbox: Sandbox, engine: Engine) -> None:
    require_image(engine, node.PACK)
    result = await sandbox.run(Spec(lang="nodejs", code='console.log("hello", 6 * 7); console.error("e")'))
    assert (result.stdout, result.stderr, result.exit_code) == (b"hello 42\n", b"e\n", 0)


async def test_bash_syntax_error_is_an_exit_code(sandbox: Sandbox) -> None:
    result = await sandbox.run(Spec(lang="sh", code='echo "unterminated'))
    assert result.exit_code != 0
    assert b"unexpected EOF" in result.stderr


async def test_exit_code_stdin_and_args(sandbox: Sandbox) -> None:
    code = 'printf "%s|" "$@"; read -r line; echo "[$line]"; cat; exit 7'
    result = await sandbox.run(Spec(lang="bash", code=code, args=["a b", "$(id)", "'q'"], stdin="first\nrest\n"))
    assert result.stdout == b"a b|$(id)|'q'|[first]\nrest\n"
    assert result.exit_code == 7


async def test_large_stdin_and_output(sandbox: Sandbox) -> None:
    data = bytes(range(256)) * 4096  # 1 MiB, binary
    result = await sandbox.run(Spec(lang="bash", code="cat", stdin=data))
    assert result.stdout == data


async def test_in_and_out_round_trip(sandbox: Sandbox) -> None:
    files = {"a.txt": b"alpha\n", "nested/deep/b.bin": bytes(range(256))}
    code = (
        "set -e; cat /in/a.txt; sha256sum /in/nested/deep/b.bin | cut -c1-16; "
        "mkdir -p /out/x/y; cp /in/nested/deep/b.bin /out/x/y/copy.bin; echo done > /out/result.txt; "
        "mkdir /out/empty"
    )
    result = await sandbox.run(Spec(lang="bash", code=code, files=files))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(b"alpha\n")
    assert dict(result.files) == {"x/y/copy.bin": bytes(range(256)), "result.txt": b"done\n"}


async def test_in_is_read_only_and_root_fs_too(sandbox: Sandbox) -> None:
    code = (
        "echo x > /in/a.txt 2>/dev/null && echo in-writable; "
        "echo x > /in/new 2>/dev/null && echo in-dir-writable; "
        "echo x > /etc/evil; echo x > /evil; touch /usr/bin/evil; "
        "echo x > /work/ok && echo work-ok; echo x > /tmp/ok && echo tmp-ok; id -u"
    )
    result = await sandbox.run(Spec(lang="bash", code=code, files={"a.txt": b"A"}))
    out = result.stdout.decode()
    assert "in-writable" not in out and "in-dir-writable" not in out
    assert "work-ok" in out and "tmp-ok" in out
    assert out.strip().endswith("65534")
    assert result.stderr.count(b"Read-only file system") == 3
    assert result.stderr.count(b"Permission denied") == 2


async def test_env_is_only_what_was_given(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAYGROUND_HOST_SECRET", "must-not-leak")
    result = await sandbox.run(Spec(lang="bash", code="env", env={"GREETING": "hi there"}))
    env = dict(line.split("=", 1) for line in result.stdout.decode().splitlines())
    assert env["GREETING"] == "hi there"
    assert "must-not-leak" not in result.stdout.decode()
    # what the shell and the container runtime always add (Podman: container, TERM); nothing from the host
    assert set(env) <= {"GREETING", "PATH", "HOSTNAME", "HOME", "PWD", "SHLVL", "_", "OLDPWD", "container", "TERM"}


async def test_no_capabilities_and_no_new_privileges(sandbox: Sandbox) -> None:
    result = await sandbox.run(Spec(lang="bash", code="grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status"))
    status = dict(line.split(":\t") for line in result.stdout.decode().splitlines())
    assert int(status["CapEff"], 16) == 0
    assert int(status["CapBnd"], 16) == 0
    assert status["NoNewPrivs"] == "1"


async def test_network_is_unreachable(sandbox: Sandbox) -> None:
    """Only a loopback device exists; a host service on 127.0.0.1 cannot be reached."""
    accepted: list[bool] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(True)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        code = (
            f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo refused; "
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
        )
        result = await sandbox.run(Spec(lang="bash", code=code))
    finally:
        server.close()
        await server.wait_closed()
    assert result.stdout == b"refused\nlo\n"
    assert accepted == []


async def test_node_network_fails(sandbox: Sandbox, engine: Engine) -> None:
    require_image(engine, node.PACK)
    code = (
        'const s = require("net").connect(9, "127.0.0.1");'
        's.on("error", e => console.log("error", e.code)); s.on("connect", () => console.log("connected"));'
    )
    result = await sandbox.run(Spec(lang="node", code=code))
    assert result.stdout == b"error ECONNREFUSED\n"


async def test_concurrent_runs_are_isolated(sandbox: Sandbox) -> None:
    async def one(i: int) -> bytes:
        code = f"echo {i} > /work/mine; sleep 0.2; cat /work/mine; ls /out | wc -l; echo {i} > /out/f{i}"
        result = await sandbox.run(Spec(lang="bash", code=code))
        assert dict(result.files) == {f"f{i}": f"{i}\n".encode()}
        return result.stdout

    outputs = await asyncio.gather(*(one(i) for i in range(4)))
    assert outputs == [f"{i}\n0\n".encode() for i in range(4)]
