"""From a ``Request`` to what the guest sees: argv, environment, the user's own module.

Pure functions of the request (no wasmtime), so they are easy to test.
"""

from __future__ import annotations

import errno
from typing import Final

import wasmtime

from playground.core.errors import FSQuotaExceeded, InvalidSpec
from playground.core.pack import Pack
from playground.core.spec import Spec
from playground.core.vfs import VFS, VFSError

_WASM_MAGIC: Final = b"\0asm"


def main_path(pack: Pack, spec: Spec) -> str:
    """Guest path of the program file: ``/work/<Spec.main_file>``, else ``/work/<pack's main_file>``."""
    assert pack.wasm is not None
    return f"/work/{spec.main_file or pack.wasm.main_file}"


def place_program(vfs: VFS, path: str, program: bytes) -> None:
    """Write the program file at ``path``; never over a caller's work file.

    Raises:
        InvalidSpec: ``Spec.work_files`` (or ``root_files``) already put a file there.
        FSQuotaExceeded: the program does not fit in the filesystem quota.
    """
    try:
        if vfs.resolve(vfs.root, path, follow=False).node is not None:
            raise InvalidSpec(f"the program's file {path} is also one of the caller's files; name one differently")
        vfs.write_file(path, program)
    except VFSError as exc:
        if exc.errno == errno.EDQUOT:
            raise FSQuotaExceeded(f"the program does not fit in the filesystem quota: {exc.strerror}") from None
        raise InvalidSpec(f"the program's file {path} cannot be written: {exc.strerror}") from None


def argv(pack: Pack, spec: Spec, *, has_program: bool) -> list[str]:
    """``[pack.name, *pack.wasm.args]`` with ``{main}`` replaced and ``{args}`` spliced.

    Without a program file (the user's code is the module), arguments that
    mention ``{main}`` are dropped.
    """
    assert pack.wasm is not None
    result = [pack.name]
    main = main_path(pack, spec)
    for template in pack.wasm.args:
        if template == "{args}":
            result.extend(spec.args)
        elif "{main}" in template:
            if has_program:
                result.append(template.replace("{main}", main))
        else:
            result.append(template)
    return result


def environment(pack: Pack, spec: Spec) -> dict[str, str]:
    """The pack's environment overlaid with the spec's; nothing from the host."""
    assert pack.wasm is not None
    env = dict(pack.wasm.env)
    env.update(spec.env)
    return env


def user_module_bytes(code: str | bytes, vfs: VFS) -> bytes:
    """The module a ``wasm``-pack user supplied.

    ``code`` may be the module's bytes, WAT text, or a path to a ``.wasm``
    under ``/in`` (``"/in/prog.wasm"`` or ``"prog.wasm"``).

    Raises:
        InvalidSpec: the path is not under /in or missing, or the text is not WAT.
    """
    if isinstance(code, bytes):
        if code.startswith(_WASM_MAGIC):
            return code
        try:
            code = code.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidSpec("wasm code is neither a WebAssembly binary nor WAT text") from None
    text = code.strip()
    if text.endswith(".wasm") and "\n" not in text and not text.startswith("("):
        return _read_input(text, vfs)
    try:
        return bytes(wasmtime.wat2wasm(text))
    except wasmtime.WasmtimeError as exc:
        raise InvalidSpec(f"wasm code is not valid WAT: {str(exc).splitlines()[0]}") from None


def _read_input(path: str, vfs: VFS) -> bytes:
    guest = path if path.startswith("/") else f"/in/{path}"
    parts = [p for p in guest.split("/") if p]
    if len(parts) < 2 or parts[0] != "in" or any(p in (".", "..") for p in parts):
        raise InvalidSpec(f"a module path must name a file under /in, got {path!r}")
    try:
        return vfs.read_file(guest)
    except VFSError as exc:
        reason = "no such file" if exc.errno == errno.ENOENT else exc.strerror
        raise InvalidSpec(f"module {guest!r}: {reason} (pass it in Spec.files)") from None
