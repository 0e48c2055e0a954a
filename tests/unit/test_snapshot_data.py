"""The snapshot as pack data (``WasmSnapshot``) and the wasm reader/writer the snapshotter uses (``wasmbin``).

The capture and the runs themselves are tested on the real runtime in
``tests/integration/wasm/test_snapshot.py``.
"""

from __future__ import annotations

import json

import pytest
import wasmtime

from backends.wasm import snapshot, wasmbin
from playground.core import Artifact, InvalidPack, WasmSnapshot, WasmSpec
from playground.packs import (
    javascript,
    javascript_snapshot,
    python,
    python_shims,
    python_snapshot,
    python_watch,
    scientific,
)
from playground.packs.python_boot import LIGHT_ARGS
from playground.packs.runtimes import CPYTHON, QUICKJS


def _snap(**kw: object) -> WasmSnapshot:
    fields: dict[str, object] = {
        "artifact_sha256": CPYTHON.sha256, "entry_function": 1, "entry_marker": "main",
        "capture_args": ("-c", "x"), "run_source": "run({argv}, {env})", "cold_env": ("PYTHON*", "TZ"),
    }  # fmt: skip
    fields.update(kw)
    return WasmSnapshot(**fields)  # type: ignore[arg-type]


def test_the_attempt_report_is_set_up_by_the_capture_not_by_each_run() -> None:
    """``python_watch.CAPTURE_WATCH`` runs once, at the capture; the boot script a run executes has no watch,
    a cold start's and a session's do."""
    captures = (
        (python_snapshot.CAPTURE, LIGHT_ARGS), (python_snapshot.STDLIB_CAPTURE, LIGHT_ARGS),
        (python_snapshot.ASYNCIO_CAPTURE, LIGHT_ARGS), (scientific.SNAPSHOT.capture_source, scientific.ARGS),
    )  # fmt: skip
    for capture, kept in captures:
        code = capture.replace(repr(kept), "")  # the cold start's arguments are only data there (kept_args)
        assert code.count("def _playground_watch(") == 1 and python_watch.CAPTURE_WATCH in code
    for per_run in (python_snapshot.BOOT, scientific.SNAPSHOT_BOOT):
        assert "_playground_watch" not in per_run
    for cold in (LIGHT_ARGS[2], scientific.BOOT):
        assert python_watch.WATCH in cold
    assert repr(python_watch.WATCH) in python_snapshot.SESSION_CAPTURE  # a session's prelude, run as it starts


def test_the_python_pack_pins_its_snapshot_to_its_runtime() -> None:
    spec = python.PACK.wasm
    assert spec is not None and spec.snapshot is not None and spec.module is not None
    assert spec.snapshot.artifact_sha256 == spec.module.sha256 == CPYTHON.sha256
    assert spec.snapshot.entry_function == python_snapshot.PYRUN_SIMPLE_STRING_FLAGS
    (sci,) = spec.variants  # the scientific runtime: its own entry, numpy preloaded, through its mounts
    assert sci.wasm.snapshot is scientific.SNAPSHOT and sci.wasm.module is scientific.SCIENTIFIC_CPYTHON
    assert sci.wasm.snapshot.artifact_sha256 == scientific.SCIENTIFIC_CPYTHON.sha256
    assert (sci.wasm.snapshot.entry_export, sci.wasm.snapshot.alloc_export) == ("turn", "host_alloc")
    assert sci.wasm.snapshot.entry_function is None and "numpy" in sci.wasm.snapshot.preload
    assert sci.wasm.snapshot.preload[: len(python_snapshot.PRELOAD)] == python_snapshot.PRELOAD
    # the pack's own environment (PYTHONTZPATH) was the capture's: only a run's own PYTHON* starts cold
    assert not sci.wasm.snapshot.needs_cold_start(dict(sci.wasm.env), sci.wasm.env)
    assert sci.wasm.snapshot.needs_cold_start({**sci.wasm.env, "PYTHONTZPATH": "/x"}, sci.wasm.env)
    assert sci.wasm.snapshot.needs_cold_start({"NPY_DISABLE_CPU_FEATURES": "x"}, sci.wasm.env)


def test_an_export_entry_and_a_function_entry_do_not_mix() -> None:
    turn = {"entry_function": None, "entry_marker": "", "capture_args": (), "entry_export": "turn"}
    made = _snap(**turn, alloc_export="alloc", capture_source="import x")
    assert made.entry_export == "turn" and made.capture_args == ()
    for bad in (
        {**turn, "alloc_export": "alloc"},  # no capture source
        {**turn, "capture_source": "x"},  # no allocator
        {**turn, "alloc_export": "alloc", "capture_source": "x", "entry_function": 3},
        {**turn, "alloc_export": "alloc", "capture_source": "x", "capture_args": ("-c", "x")},
        {"entry_function": None},  # neither
        {"entry_marker": ""},
        {"alloc_export": "alloc"},  # an allocator without an export entry
        {"capture_source": "x"},
    ):
        with pytest.raises(InvalidPack):
            _snap(**bad)


def test_a_snapshot_must_match_its_runtime() -> None:
    with pytest.raises(InvalidPack):
        WasmSpec(module=Artifact(name="other.wasm", sha256="0" * 64), snapshot=_snap())
    with pytest.raises(InvalidPack):
        WasmSpec(module=None, snapshot=_snap())
    with pytest.raises(InvalidPack):
        _snap(run_source="run()")
    with pytest.raises(InvalidPack):
        _snap(artifact_sha256="nope")
    assert WasmSpec(module=CPYTHON, snapshot=_snap()).snapshot is not None


def test_variables_read_at_start_up_need_a_cold_start() -> None:
    snap = _snap()
    assert snap.needs_cold_start({"PYTHONPATH": "/x"}) and snap.needs_cold_start({"TZ": "UTC"})
    assert not snap.needs_cold_start({"HOME": "/home/user", "TZX": "1", "MYPYTHON": "1"})
    # what the capture had, with the same value, needs nothing; another value does
    assert not snap.needs_cold_start({"TZ": "UTC", "X": "1"}, {"TZ": "UTC"})
    assert snap.needs_cold_start({"TZ": "CET"}, {"TZ": "UTC"})


def test_the_payload_is_json_and_a_python_literal_without_the_kept_arguments() -> None:
    run_args = ["/work/main.py", 'quote " and \\ and \n', "\udcff"]
    argv = ["python", *LIGHT_ARGS, *run_args]
    env = {"HOME": "/home/user", "X": "é"}
    data = snapshot.payload(python_snapshot_spec(), argv, env)
    assert data is not None and data.endswith(b"\0") and b"\0" not in data[:-1]
    assert len(data) < 300  # the 9 KB boot script stays in the image (kept_args)
    source = data[:-1].decode("utf-8", "surrogatepass")
    call = source[source.index("_playground_run(") + len("_playground_run(") : source.rindex(")")]
    expected = [["python", *run_args], env]
    assert eval("[" + call + "]") == expected  # our own literal
    assert json.loads("[" + call + "]") == expected
    # a run whose arguments do not start with the kept ones starts cold
    assert snapshot.payload(python_snapshot_spec(), ["python", "-B", "-c", "other", *run_args], env) is None
    light = python.PACK.wasm
    assert light is not None
    for snap in (python_snapshot_spec(), *light.import_snapshots, scientific.SNAPSHOT, *scientific.IMPORT_SNAPSHOTS):
        assert snap.kept_args and repr(snap.kept_args) in (snap.capture_source or snap.capture_args[-1])


def python_snapshot_spec() -> WasmSnapshot:
    spec = python.PACK.wasm
    assert spec is not None and spec.snapshot is not None
    return spec.snapshot


def test_leb128_round_trips() -> None:
    for value in (0, 1, 63, 64, 127, 128, 624485, 2**32 - 1):
        assert wasmbin.uleb(wasmbin.enc_uleb(value), 0) == (value, len(wasmbin.enc_uleb(value)))
    for value in (0, -1, 63, -64, 64, -65, 0x80000, -(2**31)):
        assert wasmbin.sleb(wasmbin.enc_sleb(value), 0) == (value, len(wasmbin.enc_sleb(value)))


TOY = """
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
  (memory (export "memory") 2)
  (global $sp (mut i32) (i32.const 65536))
  (global i32 (i32.const 7))
  (data (i32.const 1024) "xx __main__\\00")
  (func (export "_start"))
  (func (param i32 i32) (result i32) (drop (i32.const 1027)) (i32.const 0)))
"""


def test_the_code_module_exports_the_entry_and_stack_pointer_and_drops_the_data() -> None:
    wasm = bytes(wasmtime.wat2wasm(TOY))
    snap = _snap(entry_function=2, entry_marker="__main__")
    code, stack_pointer = snapshot.code_module(wasm, snap)
    assert stack_pointer == 65536
    module = wasmtime.Module(wasmtime.Engine(), code)
    names = {e.name for e in module.exports}
    assert {"memory", "_start", snapshot.ENTRY_EXPORT, snapshot.STACK_EXPORT} <= names
    assert dict(wasmbin.sections(code)).get(wasmbin.DATA) == b"\0"
    memory = snapshot.initial_memory(wasm)
    assert len(memory) == 2 * 65536 and memory[1024:1036] == b"xx __main__\0"
    with pytest.raises(snapshot.SnapshotError, match="not \\(i32, i32\\)"):
        snapshot.code_module(wasm, _snap(entry_function=1, entry_marker="__main__"))
    with pytest.raises(snapshot.SnapshotError, match="does not refer"):
        snapshot.code_module(wasm, _snap(entry_function=2, entry_marker="__other__"))
    with pytest.raises(snapshot.SnapshotError, match="imported"):
        snapshot.code_module(wasm, _snap(entry_function=0, entry_marker="__main__"))


def _code_section(*bodies: bytes) -> bytes:
    out = wasmbin.enc_uleb(len(bodies))
    for body in bodies:
        out += wasmbin.enc_uleb(len(body)) + body
    return out


def test_a_string_reference_is_found_in_the_padded_form_a_linker_leaves() -> None:
    """wasm-ld writes a patched address as a 5-byte LEB128 (our QuickJS build); the marker check reads both forms,
    and only the exact address counts."""
    parts = wasmbin.sections(bytes(wasmtime.wat2wasm(TOY)))
    start = b"\x00\x0b"
    for address, found in ((1027, True), (1026, False), (1028, False)):
        entry = b"\x00\x41" + wasmbin.padded_sleb32(address) + b"\x1a\x41\x00\x0b"  # drop (i32.const addr); 0
        patched = [(sid, _code_section(start, entry) if sid == wasmbin.CODE else body) for sid, body in parts]
        wasmtime.Module(wasmtime.Engine(), wasmbin.build(patched))  # still a valid module
        assert wasmbin.references_string(patched, 2, b"__main__") is found, address
        assert wasmbin.sleb(wasmbin.padded_sleb32(address), 0) == (address, 5)
    assert wasmbin.references_string(parts, 2, b"__main__")  # the shortest form, as before


def test_the_javascript_pack_pins_its_snapshot_to_its_runtime() -> None:
    spec = javascript.PACK.wasm
    assert spec is not None and spec.snapshot is not None and spec.module is not None
    assert spec.snapshot.artifact_sha256 == spec.module.sha256 == QUICKJS.sha256
    assert spec.snapshot.entry_function == javascript_snapshot.ENTRY_FUNCTION
    assert spec.snapshot.needs_cold_start({"QJS_STACK_SIZE": "1"}) and not spec.snapshot.needs_cold_start({"X": "1"})
    argv, env = ["javascript", "--", "/work/main.js", '"]}'], {"K": "v\0"}
    data = snapshot.payload(spec.snapshot, argv, env)
    assert json.loads(data[:-1]) == {"argv": argv, "env": env}


REACTOR = """
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
  (memory (export "memory") 2)
  (global $sp (mut i32) (i32.const 65536))
  (data "passive, as Wizer leaves none")
  (data (i32.const 1024) "image")
  (data "")
  (func (export "turn") (param i32 i32) (result i32) (i32.const 0))
  (func (export "host_alloc") (param i32) (result i32) (i32.const 2048))
  (func (export "bad_turn") (param i32) (result i32) (i32.const 0)))
"""


def _turn(**kw: object) -> WasmSnapshot:
    fields: dict[str, object] = {
        "entry_function": None, "entry_marker": "", "capture_args": (), "entry_export": "turn",
        "alloc_export": "host_alloc", "capture_source": "import x",
    }  # fmt: skip
    fields.update(kw)
    return _snap(**fields)


def test_a_reactor_keeps_its_own_entry_and_every_data_segment_index() -> None:
    wasm = bytes(wasmtime.wat2wasm(REACTOR))
    code, stack_pointer = snapshot.code_module(wasm, _turn())
    assert stack_pointer == 65536
    module = wasmtime.Module(wasmtime.Engine(), code)  # valid: memory.init/data.drop indices would still resolve
    names = {e.name for e in module.exports}
    assert {"turn", "host_alloc", snapshot.STACK_EXPORT} <= names and snapshot.ENTRY_EXPORT not in names
    data = dict(wasmbin.sections(code))[wasmbin.DATA]
    assert data == wasmbin.empty_passive_data(3) and wasmbin.data_count(data) == (3, 3)
    assert wasmbin.data_count(dict(wasmbin.sections(wasm))[wasmbin.DATA]) == (3, 2)
    memory = snapshot.initial_memory(wasm)  # the active segment only
    assert memory[1024:1029] == b"image" and b"passive" not in memory
    with pytest.raises(snapshot.SnapshotError, match="exports no function 'nope'"):
        snapshot.code_module(wasm, _turn(entry_export="nope"))
    with pytest.raises(snapshot.SnapshotError, match="'bad_turn' does not take 2"):
        snapshot.code_module(wasm, _turn(entry_export="bad_turn"))
    with pytest.raises(snapshot.SnapshotError, match="'turn' does not take 1"):
        snapshot.code_module(wasm, _turn(alloc_export="turn"))
    with pytest.raises(wasmbin.WasmFormatError, match="passive"):
        wasmbin.read_data(dict(wasmbin.sections(wasm))[wasmbin.DATA])  # refused unless asked for


def test_an_export_entry_gets_its_source_by_length_without_a_nul() -> None:
    data = snapshot.payload(_turn(run_source="run({argv}, {env})"), ["a"], {"K": "v"})
    assert data == b'run(["a"], {"K": "v"})'
    assert snapshot.payload(_snap(), ["a"], {}).endswith(b"\0")


def test_import_snapshots_are_checked_and_picked_by_what_a_program_imports() -> None:
    from playground.core.variants import snapshot_for

    sci = python.PACK.wasm.variants[0].wasm  # type: ignore[union-attr]
    learning_and_plots, learning, statistics, sciences, tables_and_plots, tables, plots, algebra = sci.import_snapshots
    assert snapshot_for(sci, "from sympy import symbols, solve") is algebra and "sympy" in algebra.preload
    assert snapshot_for(sci, "import sympy, matplotlib") is plots  # the first that matches
    assert snapshot_for(sci, "import numpy") is sci.snapshot
    assert snapshot_for(sci, b"import seaborn as sns") is statistics
    assert snapshot_for(sci, "import statsmodels.formula.api as smf\nimport pandas") is statistics
    assert snapshot_for(sci, "import seaborn, sklearn") is learning
    assert {"seaborn", "statsmodels.api", "scipy.stats", "pandas", "matplotlib.pyplot"} <= set(statistics.preload)
    assert snapshot_for(sci, "from matplotlib import pyplot") is plots
    assert snapshot_for(sci, "import pandas") is tables
    assert snapshot_for(sci, "import pandas, matplotlib") is tables_and_plots  # both: the one for the pair
    assert snapshot_for(sci, "import pandas as pd\nfrom matplotlib import pyplot as plt") is tables_and_plots
    assert snapshot_for(sci, "import matplotlib, seaborn") is statistics
    assert tables_and_plots.all_imports and not tables.all_imports
    assert set(tables_and_plots.preload) == set(tables.preload) | set(plots.preload)
    assert {"PANDAS_*", "MPL*"} <= set(tables_and_plots.cold_env)
    assert snapshot_for(sci, "from sklearn.ensemble import RandomForestClassifier") is learning
    assert snapshot_for(sci, "import pandas as pd\nfrom sklearn import svm") is learning  # it imports pandas too
    assert snapshot_for(sci, "from scipy import stats") is sciences
    assert snapshot_for(sci, "import pandas as pd\nimport scipy.optimize") is sciences  # before pandas'
    assert snapshot_for(sci, "import scipy, sklearn") is learning
    # A model or a signal plotted: matplotlib's font list is built at the capture (its font probes are not the
    # program's), by scikit-learn's own snapshot for the pair, and by scipy's, which has pyplot.
    assert snapshot_for(sci, "from sklearn import svm\nimport matplotlib.pyplot as plt") is learning_and_plots
    assert learning_and_plots.all_imports and set(learning_and_plots.preload) == {*learning.preload, *plots.preload}
    assert "matplotlib.pyplot" not in learning.preload  # it would start every scikit-learn program above 128 MiB
    assert snapshot_for(sci, "import scipy.signal\nimport matplotlib.pyplot") is sciences
    assert "matplotlib.pyplot" in sciences.preload and "MPL*" in sciences.cold_env
    assert snapshot_for(sci, "def broken(:") is sci.snapshot
    light = python.PACK.wasm
    assert light is not None and light.snapshot is not None
    asyncio, stdlib = light.import_snapshots
    assert snapshot_for(light, "import pandas") is light.snapshot
    assert snapshot_for(light, "import math, collections\nprint(1)") is light.snapshot  # preloaded by both
    assert snapshot_for(light, "import os\nfrom json import dumps") is stdlib
    assert snapshot_for(light, "import urllib.request") is stdlib  # urllib.parse preloaded, the rest imported
    assert snapshot_for(light, "import datetime") is light.snapshot  # quick to import: not worth the larger heap
    assert snapshot_for(light, "import asyncio") is asyncio
    assert snapshot_for(light, "import json\nfrom asyncio import run") is asyncio  # it has the stdlib one's too
    assert set(asyncio.preload) - set(stdlib.preload) == {"asyncio"} and asyncio.for_imports == ("asyncio",)
    assert asyncio.capture_args[-1] == python_snapshot.ASYNCIO_CAPTURE
    assert stdlib.preload[: len(light.snapshot.preload)] == light.snapshot.preload
    assert {*stdlib.for_imports} <= {name.split(".")[0] for name in stdlib.preload}
    assert stdlib.capture_args[-1] == python_snapshot.STDLIB_CAPTURE and stdlib.kept_args == light.snapshot.kept_args
    assert set(tables.preload) - set(sci.snapshot.preload) == {"pandas"}  # type: ignore[union-attr]
    assert {"sklearn", "sklearn.linear_model", "sklearn.ensemble"} <= set(learning.preload)
    assert {"SKLEARN_*", "SCIPY_*", "PANDAS_*", "NPY_*"} <= set(learning.cold_env)  # read at import: a cold start
    assert set(sciences.preload) - set(sci.snapshot.preload) == {  # type: ignore[union-attr]
        "scipy.stats", "scipy.optimize", "scipy.linalg", "scipy.sparse", "scipy.signal", "scipy.integrate",
        "scipy.interpolate", "matplotlib", "matplotlib.pyplot",
    }  # fmt: skip
    assert "SCIPY_*" in sciences.cold_env
    assert "MPL*" in plots.cold_env and "NPY_*" in plots.cold_env
    with pytest.raises(InvalidPack, match="go together"):
        _turn(for_imports=("pandas",))
    with pytest.raises(InvalidPack, match="all_imports needs the imports"):
        _turn(all_imports=True)
    with pytest.raises(InvalidPack, match="names the imports"):
        WasmSpec(module=CPYTHON, snapshot=_snap(), import_snapshots=(_snap(),))
    with pytest.raises(InvalidPack, match="same runtime"):
        WasmSpec(module=CPYTHON, import_snapshots=(_snap(for_imports=("x",), detector="python-imports"),))
    with pytest.raises(InvalidPack, match="serves every program"):
        WasmSpec(module=CPYTHON, snapshot=_snap(for_imports=("x",), detector="python-imports"))


def test_every_wasm_python_start_makes_asyncio_work() -> None:
    """``python_shims.SHIMS`` (asyncio without a self-pipe) runs before every program on the Wasm tier: in a
    cold start's boot script and a cold session's prelude, once in every snapshot's capture (before its
    imports, so a preloaded asyncio is patched too); never on Docker, whose CPython has ``socketpair``."""
    light, sci = python.PACK.wasm, python.PACK.wasm.variants[0].wasm  # type: ignore[union-attr]
    assert light is not None and light.snapshot is not None and light.session_prelude
    captures = [
        *(snap.capture_args[-1] for snap in (light.snapshot, *light.import_snapshots)),
        *(snap.capture_source for snap in (scientific.SNAPSHOT, *scientific.IMPORT_SNAPSHOTS)),
    ]
    for capture in captures:
        assert capture.count(python_shims.SHIMS) == 1
        assert capture.index(python_shims.SHIMS) < capture.index("for _playground_module in")
    session_capture = python_snapshot.SESSION_CAPTURE  # set up once; the prelude each session runs is WATCH
    assert python_shims.SHIMS in session_capture and repr(python_shims.SHIMS) not in session_capture
    for cold in (LIGHT_ARGS[2], scientific.BOOT, light.session_prelude, sci.session_prelude):
        assert cold.count(python_shims.SHIMS) == 1
    for per_run in (python_snapshot.BOOT, scientific.SNAPSHOT_BOOT, python.DOCKER_BOOT):
        assert "_playground_shims" not in per_run
