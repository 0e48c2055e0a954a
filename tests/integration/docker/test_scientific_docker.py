"""The Docker tier's python image has the data stack (Debian's numpy, pandas, scipy, scikit-learn, ...).

The same programs as the Wasm tier's scientific tests (``tests/integration/wasm/test_scientific.py``),
in a hardened container with no network.
"""

from __future__ import annotations

import pytest

from backends.docker.engine import Engine
from playground.core import Limits, Sandbox, Spec
from playground.core.limits import MiB
from playground.packs import python

from .conftest import require_image

LIMITS = Limits(wall_time=60.0, cpu_time=60.0, memory=512 * MiB)

PROGRAMS = {
    "numpy": ("import numpy as np\nprint((np.arange(6.0).reshape(2, 3) @ np.ones(3)).tolist())", "[3.0, 12.0]"),
    "pandas": (
        "import pandas as pd\nprint(pd.read_csv('/in/t.csv').groupby('k')['v'].sum().to_dict())",
        "{'a': 4, 'b': 2}",
    ),
    "scipy": ("from scipy import optimize\nprint(round(optimize.brentq(lambda x: x * x - 2, 0, 2), 6))", "1.414214"),
    "sklearn": (
        "from sklearn.linear_model import LinearRegression\nimport numpy as np\nX = np.arange(10).reshape(-1, 1)\n"
        "m = LinearRegression().fit(X, 3 * X.ravel() + 2)\nprint(round(float(m.coef_[0]), 6))",
        "3.0",
    ),
    "statsmodels": (
        "import numpy as np\nimport statsmodels.api as sm\nx = np.arange(20.0)\n"
        "print([round(float(p), 6) for p in sm.OLS(2 * x + 1, sm.add_constant(x)).fit().params])",
        "[1.0, 2.0]",
    ),
    "matplotlib": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3])\nplt.savefig('/out/chart.png')\nprint('saved')",
        "saved",
    ),
    "requests": ("import requests\nprint(requests.__name__)", "requests"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
async def test_each_package_is_in_the_python_image(engine: Engine, sandbox: Sandbox, name: str) -> None:
    require_image(engine, python.PACK)
    code, expected = PROGRAMS[name]
    spec = Spec(lang="python", code=code, files={"t.csv": b"k,v\na,1\nb,2\na,3\n"}, limits=LIMITS)
    result = await sandbox.run(spec)
    assert result.backend == "docker"
    assert result.exit_code == 0, result.stderr.decode()[-2000:]
    assert result.stdout.decode().strip() == expected
    if name == "matplotlib":
        assert result.files["chart.png"].startswith(b"\x89PNG\r\n\x1a\n")
