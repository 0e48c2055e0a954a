"""Hostile guests calling WASI directly (WAT): bad pointers, wrapping lengths, bad descriptors."""

from __future__ import annotations

import pytest

from playground.core import Sandbox, Spec

EBADF, EFAULT, EINVAL, ENOTSOCK, EPERM, ENOENT = 8, 21, 28, 57, 63, 44


def _call_and_exit(imports: str, body: str, data: str = "") -> str:
    """A module whose _start exits with the errno returned by ``body``."""
    return f"""(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      {imports}
      (memory (export "memory") 1)
      {data}
      (func (export "_start") (call $exit {body})))"""


FD_WRITE = '(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))'
PATH_OPEN = (
    '(import "wasi_snapshot_preview1" "path_open" '
    "(func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))"
)


@pytest.mark.parametrize(
    ("body", "data", "expected"),
    [
        # iovec array outside memory
        ("(call $fd_write (i32.const 1) (i32.const 70000) (i32.const 1) (i32.const 0))", "", EFAULT),
        # iovec count that would wrap 32-bit arithmetic
        ("(call $fd_write (i32.const 1) (i32.const 0) (i32.const 0x20000001) (i32.const 100))", "", EFAULT),
        # buffer pointer near 2^32 with a length that wraps
        ("(call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 100))",
         '(data (i32.const 0) "\\f0\\ff\\ff\\ff\\20\\00\\00\\00")', EFAULT),
        # result pointer out of range
        ("(call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const -1))",
         '(data (i32.const 0) "\\10\\00\\00\\00\\01\\00\\00\\00")', EFAULT),
        # a descriptor that was never opened
        ("(call $fd_write (i32.const 99) (i32.const 0) (i32.const 0) (i32.const 100))", "", EBADF),
        # writing to stdin
        ("(call $fd_write (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 100))", "", EBADF),
    ],
)  # fmt: skip
async def test_fd_write_validates_everything(sandbox: Sandbox, body: str, data: str, expected: int) -> None:
    result = await sandbox.run(Spec(lang="wasm", code=_call_and_exit(FD_WRITE, body, data)))
    assert result.exit_code == expected
    assert result.stdout == b""


@pytest.mark.parametrize(
    ("path", "expected"),
    # fd 3 is the root preopen "/": ".." at the root stays at the root, so an escape finds nothing.
    [("/etc/passwd", EPERM), ("../x", ENOENT), ("./../x", ENOENT), ("a/../../x", ENOENT), ("missing", ENOENT),
     ("../../etc/passwd", ENOENT)],
)  # fmt: skip
async def test_path_open_refuses_escapes(sandbox: Sandbox, path: str, expected: int) -> None:
    data = f'(data (i32.const 16) "{path}")'
    body = f"(call $path_open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const {len(path)}) (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 0))"  # noqa: E501
    result = await sandbox.run(Spec(lang="wasm", code=_call_and_exit(PATH_OPEN, body, data)))
    assert result.exit_code == expected


async def test_sockets_are_refused(sandbox: Sandbox) -> None:
    imports = '(import "wasi_snapshot_preview1" "sock_accept" (func $accept (param i32 i32 i32) (result i32)))'
    result = await sandbox.run(
        Spec(lang="wasm", code=_call_and_exit(imports, "(call $accept (i32.const 3) (i32.const 0) (i32.const 0))"))
    )
    assert result.exit_code == ENOTSOCK


async def test_unknown_import_is_an_invalid_module(sandbox: Sandbox) -> None:
    from playground.core import SandboxError

    wat = '(module (import "env" "system" (func (param i32))) (func (export "_start")))'
    with pytest.raises(SandboxError):
        await sandbox.run(Spec(lang="wasm", code=wat))


ENVIRON_GET = '(import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))'
IN_RANGE = "(drop (call $environ_get (i32.const 0) (i32.const 64)))"
ARGS_GET = '(import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))'


@pytest.mark.parametrize(
    ("imports", "body", "expected"),
    [
        # the strings would end past the memory: EFAULT, and the address array (at 0) stays unwritten
        (ENVIRON_GET, "(drop (call $environ_get (i32.const 0) (i32.const 65530))) (i32.load (i32.const 0))", 0),
        (ENVIRON_GET, "(call $environ_get (i32.const 0) (i32.const 65530))", EFAULT),
        # the address array would end past the memory: EFAULT, and the strings (at 64) stay unwritten
        (ENVIRON_GET, "(drop (call $environ_get (i32.const 65532) (i32.const 64))) (i32.load8_u (i32.const 64))", 0),
        (ENVIRON_GET, "(call $environ_get (i32.const -4) (i32.const 64))", EFAULT),
        # in range: the second string starts 4 bytes after the first ("A=1\0"), and holds "BC=22\0"
        (ENVIRON_GET, IN_RANGE + "(i32.sub (i32.load (i32.const 4)) (i32.const 64))", 4),
        (ENVIRON_GET, IN_RANGE + "(i32.load8_u (i32.const 69))", ord("C")),
        (ENVIRON_GET, IN_RANGE + "(i32.load8_u (i32.const 73))", 0),
        # arguments: argv[0] is the pack's name, then the spec's ("xyz": 120 is "x")
        (ARGS_GET, "(drop (call $args_get (i32.const 0) (i32.const 64)))(i32.load8_u (i32.load (i32.const 4)))", 120),
        (ARGS_GET, "(call $args_get (i32.const 65534) (i32.const 64))", EFAULT),
    ],
)  # fmt: skip
async def test_environ_and_args_get_check_both_ranges_before_writing(
    sandbox: Sandbox, imports: str, body: str, expected: int
) -> None:
    spec = Spec(lang="wasm", code=_call_and_exit(imports, body), env={"A": "1", "BC": "22"}, args=("xyz",))
    assert (await sandbox.run(spec)).exit_code == expected
