"""Python's scientific runtime (numpy, pandas, scipy, scikit-learn, statsmodels, matplotlib) on our WASI.

One module, one sandbox: the runtime is about 100 MB and its first
compile takes a minute or two, so the module's fixture prepares it once
(as ``playground setup --scientific`` would: download, hash check,
compile) and every test shares it. Under CI a missing runtime fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, MemoryLimitExceeded, Sandbox, SessionConfig, Spec
from playground.core.limits import MiB
from playground.packs import python
from playground.resource_files import resource_path
from tests.integration.wasm.conftest import need_scientific

PNG = b"\x89PNG\r\n\x1a\n"
LIMITS = Limits(wall_time=60.0, cpu_time=60.0, memory=512 * MiB)


@pytest.fixture(scope="module")
def sci() -> Iterator[Sandbox]:
    sandbox = Sandbox(backends=[WasmBackend()], packs=[python.PACK], default_limits=LIMITS)
    need_scientific(sandbox)
    with sandbox:
        yield sandbox


async def run(sb: Sandbox, code: str, **spec: object) -> tuple[str, str, dict[str, bytes]]:
    result = await sb.run(Spec(lang="python", code=code, **spec))  # type: ignore[arg-type]
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.exit_code == 0, err
    return out, err, dict(result.files)


async def test_a_plain_script_stays_on_the_light_runtime(sci: Sandbox) -> None:
    out, _, _ = await run(sci, "import sys\nprint(sys.version_info[:2])")
    assert out == "(3, 12)\n"
    assert sci.pack_for(Spec(lang="python", code="print(1)")) is sci.pack("python")


async def test_numpy_picks_the_scientific_runtime(sci: Sandbox) -> None:
    code = (
        "import sys\nimport numpy as np\n"
        "a = np.arange(6, dtype=float).reshape(2, 3)\n"
        "print(sys.version_info[:2], a @ np.ones(3), np.linalg.inv(np.array([[2.0, 0], [0, 4]])).tolist())\n"
    )
    out, _, _ = await run(sci, code)
    assert out == "(3, 15) [ 3. 12.] [[0.5, 0.0], [0.0, 0.25]]\n"


async def test_a_pandas_csv_summary_reads_in_and_prints_like_a_terminal(sci: Sandbox) -> None:
    csv = "city,temp,rain\n" + "".join(f"c{i % 3},{10 + i},{i % 4}\n" for i in range(30))
    code = (
        "import pandas as pd\n"
        "df = pd.read_csv('/in/weather.csv')\n"
        "print(df.groupby('city')['temp'].mean().round(1).to_dict())\n"
        "print(df.describe().loc[['count', 'mean']].to_string())\n"
    )
    out, _, _ = await run(sci, code, files={"weather.csv": csv.encode()})
    lines = out.splitlines()
    assert lines[0] == "{'c0': 23.5, 'c1': 24.5, 'c2': 25.5}"
    assert lines[1].split() == ["temp", "rain"]
    assert lines[2].split() == ["count", "30.0", "30.000000"]
    assert lines[3].split() == ["mean", "24.5", "1.433333"]
    assert lines[2].index("30.0") > len("count"), "columns are aligned as in a terminal"


@pytest.mark.parametrize(
    ("name", "code", "expected"),
    [
        (
            "scipy",
            "from scipy import optimize\nprint(round(optimize.brentq(lambda x: x * x - 2, 0, 2), 6))",
            "1.414214",
        ),
        (
            "sklearn",
            "from sklearn.linear_model import LinearRegression\nimport numpy as np\n"
            "X = np.arange(10).reshape(-1, 1)\nm = LinearRegression().fit(X, 3 * X.ravel() + 2)\n"
            "print(round(float(m.coef_[0]), 6), round(float(m.intercept_), 6))",
            "3.0 2.0",
        ),
        (
            "statsmodels",
            "import numpy as np\nimport statsmodels.api as sm\n"
            "x = np.arange(20.0)\nfit = sm.OLS(2 * x + 1, sm.add_constant(x)).fit()\n"
            "print([round(float(p), 6) for p in fit.params])",
            "[1.0, 2.0]",
        ),
    ],
)
async def test_each_scientific_package_is_there(sci: Sandbox, name: str, code: str, expected: str) -> None:
    out, _, _ = await run(sci, code)
    assert out.strip() == expected, name


async def test_show_and_a_relative_savefig_reach_out(sci: Sandbox) -> None:
    code = (
        "import os\nimport matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3], [1, 4, 9])\nplt.savefig('plot.png')\n"
        "print(os.getcwd(), os.path.getsize('/work/plot.png') > 0)\n"
        "plt.close('all')\nplt.figure()\nplt.bar(['a', 'b'], [3, 5])\nplt.show()\n"
        "print(sorted(os.listdir('/out')))\n"
    )
    out, err, files = await run(sci, code)
    assert out.splitlines() == ["/work True", "['figure-1.png', 'plot.png']"], err
    assert set(files) == {"plot.png", "figure-1.png"}
    assert all(data.startswith(PNG) and len(data) > 1000 for data in files.values())


async def test_an_import_the_scan_cannot_see_gets_a_hint(sci: Sandbox) -> None:
    spec = Spec(lang="python", code="import importlib\nimportlib.import_module('num' + 'py')\n")
    result = await sci.run(spec)
    assert result.exit_code == 1 and b"No module named 'numpy'" in result.stderr
    hint = sci.hint(spec, result)
    assert hint is not None and "scientific runtime" in hint and "import numpy" in hint
    # Asking for it as a package picks that runtime too.
    asked = Spec(lang="python", code=spec.code + "print('ok')\n", packages=["numpy"])
    out, _, _ = await run(sci, asked.code, packages=["numpy"])
    assert out == "ok\n"


async def test_the_library_is_read_only_and_matplotlib_data_cannot_be_left(sci: Sandbox) -> None:
    code = (
        "import os\nimport numpy\nlib = '/usr/local/lib/python315.zip'\nfailed = []\n"
        "for attempt in (lambda: open(lib, 'ab'), lambda: os.remove(lib), lambda: os.rename('/usr', '/work/usr'),\n"
        "                lambda: open(lib + '/matplotlib/mpl-data/matplotlibrc', 'a'),\n"
        "                lambda: open(lib + '/matplotlib/mpl-data/../../../../../../work/main.py')):\n"
        "    try:\n        attempt()\n    except OSError as exc:\n        failed.append(type(exc).__name__)\n"
        "print(len(failed), os.path.getsize(lib) > 50_000_000)\n"
    )
    out, _, _ = await run(sci, code)
    assert out == "5 True\n"


async def test_the_memory_limit_holds(sci: Sandbox) -> None:
    code = "import numpy as np\nkeep = []\nwhile True:\n    keep.append(np.ones(1 << 20))\n"
    with pytest.raises(MemoryLimitExceeded):
        await sci.run(Spec(lang="python", code=code, limits=Limits(memory=192 * MiB)))


async def test_a_fresh_session_moves_to_the_scientific_runtime_and_keeps_state(sci: Sandbox) -> None:
    session = await sci.new_session("python", SessionConfig())
    try:
        first = await session.eval("import numpy as np\na = np.arange(4)")
        assert first.exit_code == 0, first.stderr
        assert "3.15" in session.runtime
        assert (await session.eval("int(a.sum())")).stdout == b"6\n"
        shown = await session.eval("import matplotlib.pyplot as plt\nplt.plot(a, a * a)\nplt.show()")
        assert shown.exit_code == 0, shown.stderr
        assert shown.files["figure-1.png"].startswith(PNG)
    finally:
        session.close()
    plain = await sci.new_session("python", SessionConfig())
    try:
        assert (await plain.eval("import sys\nsys.version_info[:2]")).stdout == b"(3, 12)\n"
        assert "3.12" in plain.runtime
    finally:
        plain.close()


@pytest.mark.parametrize(
    ("example", "produces"),
    [
        ("pandas_csv_summary.py", {"revenue_by_region.csv"}),
        ("numpy_matplotlib_chart.py", {"figure-1.png", "waves.png"}),
        ("sklearn_fit.py", set()),
    ],
)
async def test_the_scientific_examples_run(sci: Sandbox, example: str, produces: set[str]) -> None:
    code = resource_path("examples", example).read_text()
    out, _, files = await run(sci, code)
    assert out.strip() and set(files) == produces
    assert all(files[name].startswith(PNG) for name in produces if name.endswith(".png"))


#: Printed first by a program: where it started (numpy is preloaded in the snapshot, not in a cold start).
STARTED = "import sys\nprint('snapshot' if 'numpy' in sys.modules else 'cold')\nimport numpy as np\n"

LEAKS = STARTED + """\
import builtins, os, json
print("seen", "LEAK" in globals(), getattr(np, "LEAK", None), os.environ.get("LEAKENV"),
      getattr(builtins, "leak", None), os.path.exists("/work/leak.txt"), os.path.exists("/tmp/leak.txt"),
      np.sum is None, json.dumps is None,
      hasattr(sys, "_playground_run") or hasattr(sys, "_playground_preloaded"))
LEAK = 1
np.LEAK = 2
os.environ["LEAKENV"] = "3"
builtins.leak = 4
np.sum = None
json.dumps = None
open("/work/leak.txt", "w").write("x")
open("/tmp/leak.txt", "w").write("x")
np.random.seed(42)
"""


async def test_numpy_programs_start_from_the_snapshot_and_share_nothing(sci: Sandbox) -> None:
    clean = "snapshot\nseen False None None None False False False False False\n"
    for _ in range(3):
        assert (await run(sci, LEAKS))[0] == clean
    draws = "print(np.random.rand(), np.random.default_rng().random())\n"
    first, second = (await run(sci, STARTED + draws))[0], (await run(sci, STARTED + draws))[0]
    assert first.startswith("snapshot\n") and first != second  # np.random.seed(42) above stayed in its run
    pages = "import os\nprint(len(os.listdir('/usr/local/lib/python315.zip/matplotlib/mpl-data')) > 3)\n"
    assert (await run(sci, STARTED + pages))[0] == "snapshot\nTrue\n"  # the mounts, preopen included
    frozen = "import gc\nprint(gc.get_freeze_count() > 10000, len(gc.get_objects()) < 5000)\n"
    assert (await run(sci, STARTED + frozen))[0] == "snapshot\nTrue True\n"  # python_snapshot._FREEZE


async def test_a_snapshot_run_exits_as_cpython_would(sci: Sandbox) -> None:
    ending = STARTED + (
        "import atexit\natexit.register(print, 'atexit ran')\n"
        "class Noisy:\n    def __del__(self):\n        print('__del__ ran')\n"
        "kept = Noisy()\nleft_open = open('/out/unclosed.txt', 'w')\nleft_open.write('flushed at exit')\n"
    )
    result = await sci.run(Spec(lang="python", code=ending + "raise SystemExit('bye')"))
    assert (result.exit_code, result.stderr) == (1, b"bye\n")
    assert result.stdout == b"snapshot\natexit ran\n__del__ ran\n"
    assert result.files["unclosed.txt"] == b"flushed at exit"
    assert (await sci.run(Spec(lang="python", code=STARTED + "sys.exit(7)"))).exit_code == 7
    failed = await sci.run(Spec(lang="python", code=STARTED + "np.zeros(2) / None"))
    assert failed.exit_code == 1 and failed.stderr.decode().endswith("TypeError: unsupported operand type(s) "
                                                                     "for /: 'float' and 'NoneType'\n")  # fmt: skip


async def test_the_memory_limit_covers_the_scientific_snapshot(sci: Sandbox) -> None:
    with pytest.raises(MemoryLimitExceeded) as below:
        await sci.run(Spec(lang="python", code="import numpy", limits=Limits(memory=16 * MiB)))
    assert "the python snapshot starts with" in str(below.value), below.value


async def test_numpy_variables_start_a_run_cold(sci: Sandbox) -> None:
    out, _, _ = await run(sci, STARTED + "import os\nprint(os.environ['NPY_X'])", env={"NPY_X": "1"})
    assert out == "cold\n1\n"
    argv = "import sys\nprint(repr([sys.orig_argv, sys.argv]))\n"
    cold, _, _ = await run(sci, STARTED + argv, args=("x",), env={"NPY_X": "1"})
    warm, _, _ = await run(sci, STARTED + argv, args=("x",))
    assert cold.replace("cold\n", "snapshot\n", 1) == warm  # kept_args: the same command line without sending it


async def test_setup_prepares_the_scientific_snapshot_and_doctor_says_so(sci: Sandbox) -> None:
    status = sci.variant_status("python")["scientific"]
    backend = WasmBackend(packs=[python.PACK])
    assert backend.missing(status.pack) == []  # the module fixture's prepare_pack captured it
    lines = {d.name: d for d in backend.diagnostics()}
    line = lines["python (scientific) snapshot"]
    assert line.ok and line.detail.startswith("ready"), line
    runtime = lines["runtime python-3.15-scientific.wasm"]  # its snapshot's code module is what gets compiled
    assert runtime.ok and "not compiled" not in runtime.detail, runtime


#: Printed first: which snapshot the run started from (what was imported before the program's first line).
WHICH = (
    "import sys\nprint('pandas' in sys.modules, 'matplotlib.pyplot' in sys.modules, 'numpy' in sys.modules)\n"
)


async def test_pandas_and_matplotlib_programs_start_with_them_imported(sci: Sandbox) -> None:
    plain = await sci.run(Spec(lang="python", code=WHICH + "import numpy"))
    tables = await sci.run(Spec(lang="python", code=WHICH + "import pandas as pd\nprint(pd.Series([1, 2]).sum())"))
    plotting = WHICH + "import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()"
    plots = await sci.run(Spec(lang="python", code=plotting))
    both = await sci.run(Spec(lang="python", code=plotting + "\nimport pandas", limits=Limits(memory=128 * MiB)))
    assert plain.stdout == b"False False True\n"
    assert tables.stdout == b"True False True\n3\n"
    assert plots.stdout == b"False True True\n" and plots.files["figure-1.png"].startswith(PNG)
    assert both.stdout == b"True True True\n" and both.files["figure-1.png"].startswith(PNG)
    # a numpy program does not start with pandas' memory (it counts against its limit)
    assert plain.usage.peak_memory + 10 * MiB < tables.usage.peak_memory


async def test_scikit_learn_and_scipy_programs_start_with_them_imported_under_the_default_memory_limit(
    sci: Sandbox,
) -> None:
    preloaded = "import sys\nprint('sklearn.linear_model' in sys.modules, 'pandas' in sys.modules)\n"
    ttest = (
        "import sys\nprint('scipy.signal' in sys.modules, 'pandas' in sys.modules)\n"
        "from scipy import stats\nprint(round(float(stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 5]).pvalue), 4))\n"
    )
    sciences = await sci.run(Spec(lang="python", code=ttest, limits=Limits(memory=128 * MiB)))
    assert sciences.stdout == b"True False\n0.3153\n", sciences.stderr
    fit = (
        "from sklearn.linear_model import LinearRegression\n"
        "model = LinearRegression().fit([[0.0], [1.0], [2.0]], [1.0, 3.0, 5.0])\n"
        "print(round(float(model.coef_[0]), 6), round(float(model.intercept_), 6))\n"
    )
    plain = await sci.run(Spec(lang="python", code=preloaded + "import numpy"))
    learning = await sci.run(Spec(lang="python", code=preloaded + fit, limits=Limits(memory=128 * MiB)))
    assert plain.stdout == b"False False\n"
    assert learning.stdout == b"True True\n2.0 1.0\n"
    assert learning.usage.peak_memory < 128 * MiB  # the snapshot's pages count: it still fits the default limit
    example = resource_path("examples", "sklearn_fit.py").read_text()
    result = await sci.run(Spec(lang="python", code=example, limits=Limits(memory=128 * MiB)))
    assert result.exit_code == 0 and b"weighted avg" in result.stdout, result.stderr


@pytest.mark.parametrize(
    "code",
    [
        "from sklearn.linear_model import LinearRegression\nimport numpy as np\nimport matplotlib.pyplot as plt\n"
        "x = np.arange(5).reshape(-1, 1)\nplt.plot(LinearRegression().fit(x, np.arange(5)).predict(x))\n",
        "import numpy as np\nfrom scipy import signal\nimport matplotlib.pyplot as plt\n"
        "b, a = signal.butter(2, 0.2)\nplt.plot(signal.lfilter(b, a, np.ones(10)))\n",
    ],
    ids=["sklearn", "scipy"],
)
async def test_a_model_or_a_signal_plotted_starts_with_pyplot_and_reports_no_font_probes(
    sci: Sandbox, code: str
) -> None:
    """matplotlib builds its font list as pyplot is first imported, probing for system fonts (``fc-list``,
    ``~/.fonts``): a run that did it showed those probes as the program's attempts and took 1.1 s."""
    started = "import sys\nprint('matplotlib.pyplot' in sys.modules)\n"
    result = await sci.run(Spec(lang="python", code=started + code + "plt.savefig('/out/p.png')\n"))
    assert result.stdout == b"True\n", result.stderr
    assert result.files["p.png"].startswith(PNG)
    assert result.attempts == ()


async def test_the_import_snapshots_share_nothing_between_runs(sci: Sandbox) -> None:
    tables = (
        "import pandas as pd\nprint(pd.get_option('display.max_rows'), getattr(pd, 'LEAK', None))\n"
        "pd.set_option('display.max_rows', 3)\npd.LEAK = 1\n"
    )
    plots = (
        "import matplotlib.pyplot as plt\nprint(plt.rcParams['lines.linewidth'], len(plt.get_fignums()))\n"
        "plt.rcParams['lines.linewidth'] = 9\nplt.figure()\n"
    )
    learning = (
        "import sklearn\nprint(sklearn.get_config()['assume_finite'], getattr(sklearn, 'LEAK', None))\n"
        "sklearn.set_config(assume_finite=True)\nsklearn.LEAK = 1\n"
    )
    sciences = (  # scipy's distributions draw from numpy's global generator, reseeded by every run
        "from scipy import stats\nprint(getattr(stats, 'LEAK', None), type(stats.norm.random_state).__name__)\n"
        "print(stats.norm.rvs())\nstats.LEAK = 1\nstats.norm.random_state = 5\n"
    )
    statistics = (  # seaborn's theme is matplotlib's rcParams
        "import seaborn as sns\nimport matplotlib.pyplot as plt\nimport statsmodels.api as sm\n"
        "print(plt.rcParams['axes.facecolor'], getattr(sm, 'LEAK', None))\nsns.set_theme()\nsm.LEAK = 1\n"
    )
    algebra = (  # a global switch of sympy's
        "import sympy\nfrom sympy.core.parameters import global_parameters\n"
        "print(getattr(sympy, 'LEAK', None), global_parameters.evaluate)\n"
        "global_parameters.evaluate = False\nsympy.LEAK = 1\n"
    )
    draws = set()
    for _ in range(2):
        assert (await run(sci, tables))[0] == "60 None\n"
        assert (await run(sci, plots))[0] == "1.5 0\n"
        assert (await run(sci, learning))[0] == "False None\n"
        assert (await run(sci, tables + plots))[0] == "60 None\n1.5 0\n"  # the pair's snapshot
        assert (await run(sci, learning + plots))[0] == "False None\n1.5 0\n"  # scikit-learn's with pyplot
        assert (await run(sci, statistics))[0] == "white None\n"
        assert (await run(sci, algebra))[0] == "None True\n"
        first, draw = (await run(sci, sciences))[0].splitlines()
        assert first == "None RandomState"
        draws.add(draw)
    assert len(draws) == 2


async def test_doctor_lists_the_import_snapshots(sci: Sandbox) -> None:
    backend = WasmBackend(packs=[python.PACK])
    names = {d.name: d for d in backend.diagnostics()}
    for name in ("python (scientific) snapshot for sklearn", "python (scientific) snapshot for scipy",
                 "python (scientific) snapshot for seaborn, statsmodels", "python (scientific) snapshot for sympy",
                 "python (scientific) snapshot for pandas + matplotlib",
                 "python (scientific) snapshot for sklearn + matplotlib",
                 "python (scientific) snapshot for pandas",
                 "python (scientific) snapshot for matplotlib, pylab"):  # fmt: skip
        assert names[name].ok and names[name].detail.startswith("ready"), names.get(name)


async def test_a_seaborn_plot_runs_under_the_runtimes_own_default_memory(sci: Sandbox) -> None:
    """Its libraries take more than the built-in 128 MiB: the runtime's own default (256 MiB) applies."""
    plot = (
        "import pandas as pd\nimport seaborn as sns\nimport matplotlib.pyplot as plt\n"
        "df = pd.DataFrame({'x': range(20), 'y': [i % 7 for i in range(20)]})\n"
        "sns.scatterplot(data=df, x='x', y='y')\nplt.savefig('/out/s.png')\n"
    )
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK]) as defaults:  # no limits chosen
        result = await defaults.run(Spec(lang="python", code=plot))
        assert defaults.default_limits_for(defaults.pack_for(Spec(lang="python", code=plot))).memory == 256 * MiB
    assert result.exit_code == 0, result.stderr
    assert result.files["s.png"].startswith(PNG)
    assert result.usage.peak_memory > 128 * MiB  # what the built-in default would have stopped
    with pytest.raises(MemoryLimitExceeded):
        await sci.run(Spec(lang="python", code=plot, limits=Limits(memory=128 * MiB)))


async def test_a_session_that_moves_to_the_scientific_runtime_gets_its_default_memory() -> None:
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK]) as defaults:  # no limits chosen
        session = await defaults.new_session("python", SessionConfig())
        chosen = await defaults.new_session("python", SessionConfig(limits=Limits(memory=100 * MiB)))
        try:
            assert session.limits.memory == 128 * MiB  # the light runtime's
            moved = await session.eval("import statsmodels.api as sm\nimport numpy as np\nx = np.arange(20.0)")
            assert moved.exit_code == 0, moved.stderr
            assert "3.15" in session.runtime and session.limits.memory == 256 * MiB
            fit = await session.eval("sm.OLS(2 * x + 1, sm.add_constant(x)).fit().params.round(2).tolist()")
            assert fit.stdout == b"[1.0, 2.0]\n", fit.stderr
            assert (await chosen.eval("import numpy")).exit_code == 0
            assert "3.15" in chosen.runtime and chosen.limits.memory == 100 * MiB  # a chosen value stays
        finally:
            session.close()
            chosen.close()


async def test_an_import_snapshot_is_built_by_its_first_run_before_the_clock_or_by_a_complete_setup(
    sci: Sandbox,
) -> None:
    """A first use prepares the runtime and the snapshot every run starts from; an import snapshot (eight, about
    630 MiB of images) is built by the first run that starts from it, before its clock starts (the sympy one takes
    about 2 s: the run's 1 s wall limit is not met), or by ``playground setup`` (``complete``). A process keeps
    only the images its runs use, loaded from the cache when one first needs it."""
    backend = WasmBackend(packs=[python.PACK])
    scientific = sci.pack_for(Spec(lang="python", code="import sympy"))
    spec = scientific.wasm
    assert spec is not None
    (algebra,) = [s for s in spec.import_snapshots if s.for_imports == ("sympy",)]
    path = backend.snapshots.path(spec, algebra)
    path.unlink(missing_ok=True)
    with Sandbox(backends=[backend], packs=[python.PACK], default_limits=LIMITS) as fresh:
        assert fresh.missing(scientific) == [] and fresh.prepare_pack(scientific, print) == []  # runnable as it is
        (wanted,) = backend.missing(scientific, complete=True)
        assert "snapshot for sympy" in wanted
        quick = Spec(lang="python", code="import sympy\nprint(sympy.sqrt(8))", limits=Limits(wall_time=1.0))
        result = await fresh.run(quick)
        assert result.stdout == b"2*sqrt(2)\n", result.stderr
        assert path.is_file() and backend.missing(scientific, complete=True) == []
        assert list(backend.snapshots._images) == [backend.snapshots.key(spec, algebra)]  # the one a run used
    path.unlink()
    complete = WasmBackend(packs=[python.PACK])
    with Sandbox(backends=[complete], packs=[python.PACK], default_limits=LIMITS) as setup:
        assert setup.prepare_pack(scientific, print, complete=True) == [wanted]
        assert path.is_file()
        assert complete.snapshots._images == {}  # built and stored, none held
