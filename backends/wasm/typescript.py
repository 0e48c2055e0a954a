"""TypeScript -> JavaScript inside Wasm: the OXC transform reactor from PyPI ``quickjs-rs``.

The transpiler is untrusted input's first reader, so it runs sandboxed
like a guest: its own Store on the shared engine, our WASI (no files, no
environment), a memory budget for the whole store (its memories and
tables, as for a run: ``memlimit``, ``tablelimit``) and a deadline. A
transform refused memory raises ``MemoryLimitExceeded``. Each transform
gets a fresh instance (instantiating a compiled module costs well under a
millisecond), so a trap or a corrupted heap never leaks into the next one.

ABI of ``_transform.wasm`` (all i32, pointers into its exported memory):
``qjst_alloc(len) -> ptr``, ``qjst_free(ptr, len)``,
``qjst_transform(name_ptr, name_len, src_ptr, src_len, flags) -> status``
(0 ok, 1 unchanged, 2 bad input, 3 parse error, 4 transform error, 5 panic),
``qjst_result_ptr/len``, ``qjst_error_ptr/len``, ``qjst_result_free``.

OXC's messages carry no position, so a syntax error is located by
bisection: the shortest prefix of whole lines that already fails with an
error other than "unexpected end of input" ends at the offending line.
"""

from __future__ import annotations

from typing import Final

import wasmtime

from backends.wasm import tablelimit
from backends.wasm.engine import WasmEngine
from backends.wasm.memlimit import MemoryBudget, budget_scope
from backends.wasm.state import RunControl, RunState
from backends.wasm.transforms import TransformError
from backends.wasm.tslines import keep_lines
from playground.core.errors import MemoryLimitExceeded
from playground.core.output import OutputCapture
from playground.core.vfs import VFS, Layout

FLAG_SOURCE_TS: Final = 1
FLAG_STRIP_TYPESCRIPT: Final = 1 << 8
#: Memory and time for one transform: generous for any real program, fatal for a bomb.
MEMORY_LIMIT: Final = 256 << 20
TIME_LIMIT: Final = 10.0
_STATUS: Final = {2: "bad input", 3: "syntax error", 4: "transform error", 5: "transpiler crash"}
_EOF_MARKERS: Final = ("EOF", "end of file", "end of input", "Unterminated")


class _Failed(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TypeScriptTransformer:
    """Strips types (and lowers enums, namespaces, parameter properties) to plain JS. Thread-safe."""

    def __init__(self, engine: WasmEngine, module: wasmtime.Module, *, memory_limit: int = MEMORY_LIMIT) -> None:
        self._engine = engine
        self._module = module
        self._memory_limit = memory_limit

    def transform(self, source: str, filename: str) -> str:
        """The JavaScript for ``source``, each line on the line of the TypeScript it came from (``tslines``).

        Raises:
            TransformError: the source does not compile; the message reads
                ``FILE:LINE: syntax error: ...`` and is meant for the user's stderr.
            MemoryLimitExceeded: the transpiler was refused memory.
        """
        try:
            return keep_lines(source, self._once(source, filename))
        except _Failed as failed:
            where = filename
            if failed.status == 3:
                where = f"{filename}:{self._error_line(source, filename, failed.message)}"
            label = _STATUS.get(failed.status, f"status {failed.status}")
            raise TransformError(f"{where}: {label}: {_short(failed.message)}") from None

    def _error_line(self, source: str, filename: str, message: str) -> int:
        lines = source.splitlines(keepends=True)
        if any(marker in message for marker in _EOF_MARKERS):
            return max(1, len(lines))
        low, high = 0, len(lines)  # the prefix of `high` lines fails for real; of `low` lines it does not
        while high - low > 1:
            middle = (low + high) // 2
            if self._fails_for_real("".join(lines[:middle]), filename):
                high = middle
            else:
                low = middle
        return max(1, high)

    def _fails_for_real(self, prefix: str, filename: str) -> bool:
        try:
            self._once(prefix, filename)
        except _Failed as failed:
            return not any(marker in failed.message for marker in _EOF_MARKERS)
        return False

    def _once(self, source: str, filename: str) -> str:
        control = RunControl(wall_limit=TIME_LIMIT, cpu_limit=TIME_LIMIT)
        state = RunState(
            control=control,
            vfs=VFS(fs_quota=0, max_files=0, layout=Layout.CALLER_ROOT),  # an empty root where nothing fits
            output=OutputCapture(64 << 10),
            stdin=b"",
            args=(),
            env={},
        )
        budget = MemoryBudget(self._memory_limit)
        store = wasmtime.Store(self._engine.engine)
        try:
            if not tablelimit.limit_store(store, self._module, budget):
                raise _Failed(5, "the transpiler does not fit its memory limit")
            with budget_scope(budget), self._engine.attach(store, state):
                control.start_clock()
                try:
                    instance = self._engine.linker.instantiate(store, self._module)
                    return _call_transform(store, instance, source, filename)
                except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                    reason = control.reason.value if control.reason else str(exc).splitlines()[0]
                    raise _Failed(5, f"the transpiler stopped ({reason})") from None
        except _Failed:
            if budget.refused:
                raise MemoryLimitExceeded(
                    f"the TypeScript transform exceeded its memory limit of {self._memory_limit} bytes "
                    f"(it asked for {budget.requested} bytes)"
                ) from None
            raise
        finally:
            state.release()
            store.close()


def _call_transform(store: wasmtime.Store, instance: wasmtime.Instance, source: str, filename: str) -> str:
    exports = instance.exports(store)
    memory = exports["memory"]
    assert isinstance(memory, wasmtime.Memory)

    def call(name: str, *args: int) -> int:
        func = exports[name]
        assert isinstance(func, wasmtime.Func)
        result = func(store, *args)
        return int(result) if result is not None else 0

    def put(data: bytes) -> int:
        pointer = call("qjst_alloc", max(1, len(data)))
        if pointer == 0:
            raise _Failed(5, "the transpiler ran out of memory")
        memory.write(store, data, pointer)
        return pointer

    def get(pointer_fn: str, length_fn: str) -> bytes:
        length = call(length_fn)
        start = call(pointer_fn)
        return bytes(memory.read(store, start, start + length)) if length else b""

    name_bytes = filename.encode("utf-8", "replace")
    source_bytes = source.encode("utf-8", "surrogatepass")
    name_ptr = put(name_bytes)
    source_ptr = put(source_bytes)
    status = call("qjst_transform", name_ptr, len(name_bytes), source_ptr, len(source_bytes),
                  FLAG_SOURCE_TS | FLAG_STRIP_TYPESCRIPT)
    if status == 1:
        return source
    if status == 0:
        return get("qjst_result_ptr", "qjst_result_len").decode("utf-8", "replace")
    raise _Failed(status, get("qjst_error_ptr", "qjst_error_len").decode("utf-8", "replace"))


def _short(message: str) -> str:
    """OXC prefixes 'source parse error in NAME:'; the file is already named."""
    _, sep, rest = message.partition(": ")
    return rest if sep and message.startswith("source parse error") else message
