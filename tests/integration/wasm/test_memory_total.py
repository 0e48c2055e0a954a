"""The memory limit covers the whole store: every linear memory, the GC heap and every table.

Issue #12: each memory used to be checked against the whole limit on its own
(8 memories of 60 MiB ran under 64 MiB) and tables were not counted at all
(a 50M-slot table cost the host 400 MB). These modules are the attacks and
their variants, run for real through the library API.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from backends.wasm.artifacts import ArtifactStore
from backends.wasm.engine import shared_engine
from backends.wasm.tablelimit import ELEMENT_BYTES, GROWTH_SHARE, MAX_MEMORIES, MAX_TABLES
from backends.wasm.typescript import TypeScriptTransformer
from playground.core import Limits, MemoryLimitExceeded, Result, Sandbox, Spec
from playground.core.limits import MiB
from playground.packs import javascript, lua, python, runtimes, typescript
from tests.integration.wasm.conftest import need_runtime

PAGE = 65536
PAGES_60_MIB = 60 * MiB // PAGE
LIMIT = Limits(memory=64 * MiB, wall_time=20.0, cpu_time=20.0)

#: ``$say`` prints an i32 (>= -1) and a newline on stdout, using its own one-page memory ``$io``.
SAY = """
 (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
 (memory $io (export "memory") 1)
 (func $say (param $v i32) (local $p i32)
   (local.set $p (i32.const 100))
   (i32.store8 $io (local.get $p) (i32.const 10))
   (if (i32.lt_s (local.get $v) (i32.const 0))
     (then (local.set $p (i32.sub (local.get $p) (i32.const 2)))
           (i32.store16 $io (local.get $p) (i32.const 0x312d)))  ;; "-1"
     (else (loop $digit
             (local.set $p (i32.sub (local.get $p) (i32.const 1)))
             (i32.store8 $io (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
             (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
             (br_if $digit (local.get $v)))))
   (i32.store $io (i32.const 200) (local.get $p))
   (i32.store $io (i32.const 204) (i32.sub (i32.const 101) (local.get $p)))
   (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 208))))
"""


def module(decls: str, start: str) -> str:
    """A WASI command with ``$say``, the declarations ``decls`` and ``start`` as its ``_start`` body."""
    return f'(module {SAY} {decls} (func (export "_start") (local $i i32) {start}))'


def touch(memory: str, pages: int) -> str:
    """Write one byte in every 4 KiB of ``memory``'s first ``pages`` pages (so the host really holds them)."""
    return f"""(local.set $i (i32.const 0))
      (loop $t (i32.store8 {memory} (local.get $i) (i32.const 1))
        (local.set $i (i32.add (local.get $i) (i32.const 4096)))
        (br_if $t (i32.lt_u (local.get $i) (i32.const {pages * PAGE}))))"""


EIGHT_DECLARED_MEMORIES = module(
    "".join(f"(memory $m{k} {PAGES_60_MIB})" for k in range(8)),
    "".join(touch(f"$m{k}", PAGES_60_MIB) for k in range(8)) + "(call $say (i32.const 0))",
)
EIGHT_GROWN_MEMORIES = module(
    "".join(f"(memory $m{k} 0)" for k in range(8)),
    "".join(
        f"(call $say (memory.grow $m{k} (i32.const {PAGES_60_MIB})))"
        f"(if (i32.ge_u (memory.size $m{k}) (i32.const {PAGES_60_MIB})) (then {touch(f'$m{k}', PAGES_60_MIB)}))"
        for k in range(8)
    ),
)
DECLARED_TABLE_50M = module(
    "(table $t 50000000 funcref)",
    "(table.fill $t (i32.const 0) (ref.null func) (i32.const 50000000)) (call $say (table.size $t))",
)
GROWN_TABLE_50M = module(
    "(table $t 0 funcref)",
    "(call $say (table.grow $t (ref.null func) (i32.const 50000000))) (call $say (table.size $t))",
)


async def refused(sandbox: Sandbox, code: str, limits: Limits = LIMIT) -> tuple[MemoryLimitExceeded, Result]:
    with pytest.raises(MemoryLimitExceeded) as info:
        await sandbox.run(Spec(lang="wasm", code=code, limits=limits))
    assert info.value.result is not None
    return info.value, info.value.result


# -- the attacks of the issue ------------------------------------------------------------------


async def test_eight_declared_memories_of_60_mib_do_not_fit_64_mib(sandbox: Sandbox) -> None:
    error, result = await refused(sandbox, EIGHT_DECLARED_MEMORIES)
    assert result.stdout == b""  # refused at instantiation: the guest never ran
    assert "asked for" in str(error)


async def test_eight_memories_grown_to_60_mib_get_only_the_first(sandbox: Sandbox) -> None:
    _, result = await refused(sandbox, EIGHT_GROWN_MEMORIES)
    assert result.stdout == b"0\n" + b"-1\n" * 7
    assert result.usage.peak_memory <= 64 * MiB


async def test_a_declared_table_of_50m_slots_is_refused_before_it_exists(sandbox: Sandbox) -> None:
    error, result = await refused(sandbox, DECLARED_TABLE_50M)
    assert result.stdout == b""
    # Charged before instantiation: 8 bytes a slot, plus the growth headroom of a table without maximum.
    assert f"asked for {50_000_000 * ELEMENT_BYTES + 64 * MiB // GROWTH_SHARE} bytes" in str(error)


async def test_growing_a_table_by_50m_slots_is_refused(sandbox: Sandbox) -> None:
    # wasmtime offers no callback when a table grows, only a per-table cap (tablelimit): the
    # guest's table.grow gets -1, as the spec allows, and the table keeps its size.
    result = await sandbox.run(Spec(lang="wasm", code=GROWN_TABLE_50M, limits=LIMIT))
    assert result.stdout == b"-1\n0\n"


def test_the_attacks_leave_the_host_rss_alone(tmp_path: Path) -> None:
    # In a fresh process, so the high-water mark is this test's own. Before the fix: +480 MiB.
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        sys.path[:0] = {[str(Path(__file__).resolve().parents[3])]!r}
        from backends.wasm import WasmBackend
        from playground.core import MemoryLimitExceeded, Sandbox, Spec
        from tests.integration.wasm.conftest import WASM_PACK
        from tests.integration.wasm import test_memory_total as t

        def hwm():
            return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))

        with Sandbox(backends=[WasmBackend(cache_dir=Path(sys.argv[1]))], packs=[WASM_PACK]) as sb:
            sb.run_sync(Spec(lang="wasm", code=t.module("", "")))
            base = hwm()
            for code in (t.EIGHT_DECLARED_MEMORIES, t.EIGHT_GROWN_MEMORIES, t.DECLARED_TABLE_50M, t.GROWN_TABLE_50M):
                try:
                    sb.run_sync(Spec(lang="wasm", code=code, limits=t.LIMIT))
                except MemoryLimitExceeded:
                    pass
            print(hwm() - base)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    grown = int(done.stdout.split()[-1])
    print(f"peak RSS over the four attacks: +{grown / MiB:.1f} MiB")
    assert grown < 64 * MiB + 16 * MiB  # the one 60 MiB memory that fits, touched, plus slack


# -- the same limit from other directions ----------------------------------------------------


def memory_and_table(pages: int, elements: int) -> str:
    return f'(module (memory {pages}) (table {elements} {elements} funcref) (func (export "_start")))'


async def test_a_memory_and_a_table_that_just_fit(sandbox: Sandbox) -> None:
    elements = (64 * MiB - 1000 * PAGE) // ELEMENT_BYTES
    result = await sandbox.run(Spec(lang="wasm", code=memory_and_table(1000, elements), limits=LIMIT))
    assert result.exit_code == 0
    assert result.usage.peak_memory == 64 * MiB


async def test_a_memory_and_a_table_one_slot_over(sandbox: Sandbox) -> None:
    elements = (64 * MiB - 1000 * PAGE) // ELEMENT_BYTES + 1
    error, _ = await refused(sandbox, memory_and_table(1000, elements))
    assert f"asked for {64 * MiB + ELEMENT_BYTES} bytes" in str(error)


async def test_many_small_growths_of_four_memories_share_one_limit(sandbox: Sandbox) -> None:
    grow_each = "".join(
        f"(br_if $done (i32.eq (memory.grow $m{k} (i32.const 1)) (i32.const -1)))"
        "(local.set $i (i32.add (local.get $i) (i32.const 1)))"
        for k in range(4)
    )
    code = module(
        "".join(f"(memory $m{k} 0)" for k in range(4)),
        f"(block $done (loop $more {grow_each} (br_if $more (i32.lt_u (local.get $i) (i32.const 4096)))))"
        "(call $say (local.get $i))",
    )
    _, result = await refused(sandbox, code, Limits(memory=8 * MiB))
    assert result.stdout == b"127\n"  # 128 pages in all, one of them $io's


async def test_many_small_table_growths_stop_at_the_tables_share(sandbox: Sandbox) -> None:
    limit = 8 * MiB
    code = module(
        "(table $t 0 funcref)",
        """(loop $more
             (if (i32.ne (table.grow $t (ref.null func) (i32.const 4096)) (i32.const -1))
               (then (br_if $more (i32.lt_u (table.size $t) (i32.const 2097152))))))
           (call $say (table.size $t))""",
    )
    result = await sandbox.run(Spec(lang="wasm", code=code, limits=Limits(memory=limit)))
    assert result.stdout == b"%d\n" % (limit // GROWTH_SHARE // ELEMENT_BYTES)


async def test_the_gc_heap_counts_beside_the_linear_memory(sandbox: Sandbox) -> None:
    code = f"""(module (memory {PAGES_60_MIB}) (type $bytes (array (mut i8)))
      (global $keep (mut (ref null $bytes)) (ref.null $bytes))
      (func (export "_start") (global.set $keep (array.new_default $bytes (i32.const {8 * MiB})))))"""
    await refused(sandbox, code)


async def test_exception_payloads_kept_in_a_table_count_too(sandbox: Sandbox) -> None:
    # Each caught exception is an object on the GC heap; a table of exnrefs keeps them alive.
    code = f"""(module (memory {PAGES_60_MIB})
      (tag $boom (param i64 i64 i64 i64 i64 i64 i64 i64))
      (table $kept 0 exnref)
      (func (export "_start") (local $i i32) (local $e exnref)
        (drop (table.grow $kept (ref.null exn) (i32.const 200000)))
        (loop $again
          (block $caught (result exnref)
            (try_table (catch_all_ref $caught)
              (throw $boom (i64.const 1) (i64.const 2) (i64.const 3) (i64.const 4)
                           (i64.const 5) (i64.const 6) (i64.const 7) (i64.const 8)))
            unreachable)
          (local.set $e)
          (table.set $kept (local.get $i) (local.get $e))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $again (i32.lt_u (local.get $i) (i32.const 200000))))))"""
    await refused(sandbox, code)


@pytest.mark.parametrize(("kind", "cap"), [("memory", MAX_MEMORIES), ("table", MAX_TABLES)])
async def test_more_memories_or_tables_than_a_run_may_have(sandbox: Sandbox, kind: str, cap: int) -> None:
    one = "(memory 0)" if kind == "memory" else "(table 0 funcref)"
    error, _ = await refused(sandbox, f'(module {one * (cap + 1)} (func (export "_start")))')
    assert f"declares {cap + 1}" in str(error)


async def test_the_same_modules_run_when_the_limit_allows_them(sandbox: Sandbox) -> None:
    roomy = Limits(memory=1024 * MiB, wall_time=20.0, cpu_time=20.0)
    result = await sandbox.run(Spec(lang="wasm", code=EIGHT_GROWN_MEMORIES, limits=roomy))
    assert result.stdout == b"0\n" * 8
    code = memory_and_table(1000, (64 * MiB - 1000 * PAGE) // ELEMENT_BYTES + 1)
    assert (await sandbox.run(Spec(lang="wasm", code=code, limits=roomy))).exit_code == 0


# -- the runtimes --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> Sandbox:
    return Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK, python.PACK, typescript.PACK])


@pytest.mark.parametrize(
    ("lang", "code"),
    [
        ("javascript", 'console.log("hello", 6 * 7)'),
        ("typescript", 'const n: number = 6 * 7;\nconsole.log("hello", n)'),
        ("lua", 'print("hello", 6 * 7)'),
        ("python", 'print("hello", 6 * 7)'),
    ],
)
async def test_hello_runs_under_the_default_limit(real: Sandbox, lang: str, code: str) -> None:
    need_runtime(real, lang)
    result = await real.run(Spec(lang=lang, code=code))
    assert result.stdout.replace(b"\t", b" ") == b"hello 42\n", result.stderr
    assert 0 < result.usage.peak_memory <= 128 * MiB


def test_the_typescript_transform_is_held_to_its_own_budget(real: Sandbox) -> None:
    need_runtime(real, "typescript")
    backend = real.backends["wasm"]
    assert isinstance(backend, WasmBackend)
    artifact = runtimes.TYPESCRIPT_TRANSFORM
    path = ArtifactStore(backend.cache_dir).verified_path(artifact, "typescript")
    module = backend.modules.runtime(artifact.sha256, path, label=artifact.name, progress=None)
    source = "".join(f"const value{i}: number = {i} * 2;\n" for i in range(40_000))
    transformed = TypeScriptTransformer(shared_engine(), module).transform(source, "main.ts")
    assert "const value39999 = 39999 * 2;" in transformed
    small = TypeScriptTransformer(shared_engine(), module, memory_limit=4 * MiB)
    assert small.transform("const n: number = 1;\n", "main.ts") == "const n = 1;\n"
    with pytest.raises(MemoryLimitExceeded, match="TypeScript transform"):
        small.transform(source, "main.ts")
