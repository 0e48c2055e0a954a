"""Tables under the run's memory budget: charged up front, bounded by wasmtime's store limiter.

Why up front: a table lives in a host ``Vec`` that wasmtime grows itself.
No callback of the C API sees a table grow (``wasmtime_store_limiter``
installs a fixed ``StoreLimits``: one element cap for *each* table plus
counts of instances, tables and memories; no ``ResourceLimiter`` of our
own can be installed from Python), so a table cannot be charged when it
grows the way a linear memory is (``memlimit``). Instead every table is
charged for the most it can ever hold before the guest starts:

* its declared minimum (allocated at instantiation), from ``shape``;
* for a table that may grow (no maximum, or a maximum above the minimum),
  growth headroom up to the per-table element cap ``elements``. Growable
  tables share at most ``1/GROWTH_SHARE`` of the limit; every toolchain
  we run (and most others) declares fixed tables, which reserve nothing.

The limiter then refuses any table growth past ``elements`` (the guest's
``table.grow`` returns -1, as the spec allows) and any instance, table or
memory beyond the counts, so tables plus memories never exceed the limit.

Bytes per element: ``ELEMENT_BYTES`` = 8, what a funcref slot costs
(measured: growing a funcref table by 50M slots adds 400 MB of RSS; a
GC-reference slot, externref/anyref/exnref, measures 4 and is charged
8 too, the conservative single figure).

A module whose shape is unknown (not compiled through ``ModuleCache``)
gets ``MAX_TABLES`` tables of the growth share each, all reserved.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Final

import wasmtime

from backends.wasm import shape
from backends.wasm.memlimit import MemoryBudget
from backends.wasm.shape import ModuleShape

log = logging.getLogger(__name__)

#: Host bytes charged per table element (a funcref slot is a pointer).
ELEMENT_BYTES: Final = 8
#: Growable tables may reserve at most this fraction (1/n) of the limit for growth.
GROWTH_SHARE: Final = 16
#: Per run: more would only cost host address space (each memory reserves 4 GiB of it) and bookkeeping.
MAX_TABLES: Final = 16
MAX_MEMORIES: Final = 16
_U32_MAX: Final = (1 << 32) - 1


@dataclass(frozen=True, slots=True)
class TablePlan:
    """What a store's limiter allows and what its tables are charged."""

    #: Per-table element cap handed to the limiter.
    elements: int
    tables: int
    memories: int
    #: Bytes of the declared minimums (they exist from instantiation on).
    initial: int
    #: Bytes reserved for growth up to ``elements``.
    headroom: int
    #: Why the module cannot run within the counts, or None.
    refusal: str | None = None


@functools.lru_cache(maxsize=256)  # a pure function asked at every run (a binary search): remembered
def plan(module_shape: ModuleShape | None, limit: int) -> TablePlan:
    """The limiter settings and the table charge for a module under a ``limit``-byte budget."""
    allowance = limit // GROWTH_SHARE
    if module_shape is None:
        cap = min(_U32_MAX, allowance // (MAX_TABLES * ELEMENT_BYTES))
        headroom = cap * MAX_TABLES * ELEMENT_BYTES
        return TablePlan(elements=cap, tables=MAX_TABLES, memories=MAX_MEMORIES, initial=0, headroom=headroom)
    tables = module_shape.tables
    refusal = None
    if len(tables) > MAX_TABLES:
        refusal = f"the module declares {len(tables)} tables; a run may have {MAX_TABLES}"
    elif module_shape.memories > MAX_MEMORIES:
        refusal = f"the module declares {module_shape.memories} memories; a run may have {MAX_MEMORIES}"
    initial = sum(t.minimum for t in tables) * ELEMENT_BYTES
    floor = min(_U32_MAX, max((t.minimum for t in tables), default=0))
    cap = _largest_cap(module_shape, floor, allowance)
    return TablePlan(
        elements=cap, tables=len(tables), memories=module_shape.memories, initial=initial,
        headroom=_headroom(module_shape, cap), refusal=refusal,
    )  # fmt: skip


def _headroom(module_shape: ModuleShape, cap: int) -> int:
    """Bytes the tables may still grow by when no table may exceed ``cap`` elements."""
    grow = 0
    for table in module_shape.tables:
        top = cap if table.maximum is None else min(table.maximum, cap)
        grow += max(0, top - table.minimum)
    return grow * ELEMENT_BYTES


def _largest_cap(module_shape: ModuleShape, floor: int, allowance: int) -> int:
    """The largest useful cap >= ``floor`` whose headroom fits ``allowance`` (``floor`` if none does)."""
    declared = (_U32_MAX if t.maximum is None else t.maximum for t in module_shape.tables)
    low, high = floor, max(floor, min(_U32_MAX, max(declared, default=0)))
    if _headroom(module_shape, high) <= allowance:
        return high
    while high - low > 1:  # headroom(high) does not fit; headroom(low) does, or low is the floor
        middle = (low + high) // 2
        if _headroom(module_shape, middle) <= allowance:
            low = middle
        else:
            high = middle
    return low


def limit_store(store: wasmtime.Store, module: wasmtime.Module, budget: MemoryBudget) -> bool:
    """Charge ``module``'s tables to ``budget`` and bound them (and the counts) in ``store``.

    Call before instantiating, once per store. Returns False when the
    tables alone do not fit (the refusal is recorded on the budget); the
    module must not be instantiated then. No limit, no bounds.
    """
    if budget.limit is None:
        return True
    module_shape = shape.of(module)
    if module_shape is None:
        log.debug("no recorded shape for a module; its tables get the conservative plan")
    table_plan = plan(module_shape, budget.limit)
    if table_plan.refusal is not None:
        budget.refuse(table_plan.refusal)
        return False
    if not budget.charge_tables(table_plan.initial, table_plan.headroom):
        return False
    store.set_limits(
        table_elements=table_plan.elements, instances=1, tables=table_plan.tables, memories=table_plan.memories
    )
    return True
