"""The limits panel: defaults shown, units parsed like the CLI, bad values refused before a run, reset."""

from __future__ import annotations

import pytest

from playground.app.limits_panel import field_errors, parse_limits
from playground.core import DEFAULT_LIMITS, UNLIMITED, InvalidLimits
from playground.core.limits import MiB
from tests.gui.conftest import Playground, save_artifact


def test_empty_fields_are_the_defaults() -> None:
    assert parse_limits({}) == DEFAULT_LIMITS.validate()
    assert parse_limits({"memory": "  "}) == DEFAULT_LIMITS.validate()


def test_units_are_parsed_like_the_cli() -> None:
    limits = parse_limits({"memory": "64M", "wall_time": "500ms", "cpu_time": "2m", "max_output": "512k",
                           "fs_quota": "1G", "max_files": "1000", "max_procs": "unlimited"})
    assert limits.memory == 64 << 20
    assert limits.wall_time == 0.5
    assert limits.cpu_time == 120.0
    assert limits.max_output == 512 << 10
    assert limits.fs_quota == 1 << 30
    assert limits.max_files == 1000
    assert limits.max_procs is UNLIMITED


@pytest.mark.parametrize(
    ("field", "text", "why"),
    [
        ("memory", "12 parsecs", "not a size"),
        ("memory", "0", "zero is not a limit"),
        ("wall_time", "soon", "not a duration"),
        ("wall_time", "30d", "not a duration"),
        ("max_files", "2.5", "not a whole number"),
        ("max_output", "99T", "above the maximum"),
    ],
)
def test_bad_values_are_refused_with_the_reason(field: str, text: str, why: str) -> None:
    assert why in field_errors({field: text})[field]
    with pytest.raises(InvalidLimits, match=why):
        parse_limits({field: text})


def test_panel_shows_defaults_and_refuses_a_bad_value_before_running(playground: Playground) -> None:
    window, controller = playground.window, playground.controller
    panel = window.limits
    assert window.current_language() == "python"
    assert panel.fields["memory"].placeholderText() == "128M (default; scientific: 256M)"  # a variant's differs
    assert panel.fields["wall_time"].placeholderText() == "10s (default)"
    assert panel.fields["max_files"].placeholderText() == "256 (default)"
    panel.fields["memory"].setText("lots")
    assert "not a size" in panel.error_text("memory")
    window.tabs.setCurrentIndex(1)
    controller.run()
    assert not controller.running and controller.runs_finished == 0
    assert "Not run: Memory: not a size: 'lots'" in playground.summary()
    assert window.tabs.currentWidget() is window.run_settings and window.run_settings.limits is panel
    panel.reset_button.click()
    assert panel.texts() == dict.fromkeys(panel.fields, "")
    assert panel.error_text("memory") == ""


def test_limits_reach_the_run(playground: Playground) -> None:
    playground.window.set_limit_texts({"max_output": "100"})
    output = playground.run_code("python", "print('z' * 500)", timeout=120)
    assert "output limit (100) was reached" in playground.summary()
    assert output.startswith("z" * 100) and "z" * 101 not in output


def test_a_scientific_program_gets_the_runtimes_default_memory_unless_the_panel_sets_one(
    playground: Playground,
) -> None:
    """The scientific Python's libraries need more than the built-in 128 MiB (statsmodels' OLS peaked at 134).

    The panel shows the language's defaults; a run gets what was typed over its runtime's own.
    """
    controller, window = playground.controller, playground.window
    playground.select("python")
    memory = window.limits.fields["memory"]
    assert memory.placeholderText() == "128M (default; scientific: 256M)"
    assert window.limits.fields["wall_time"].placeholderText() == "10s (default)"
    window.show_tab("limits")
    save_artifact(window, "limits_scientific_default.png")
    ols = (
        "import numpy as np\nimport statsmodels.api as sm\nx = np.arange(20.0)\n"
        "print(sm.OLS(2 * x + 1, sm.add_constant(x)).fit().params.round(2).tolist())\n"
    )
    assert controller._current_limits().memory is None  # nothing typed: the runtime's default applies
    output = playground.run_code("python", ols, timeout=180)
    assert "[1.0, 2.0]" in output and "exit 0" in playground.summary(), (output, playground.summary())
    window.set_limit_texts({"memory": "100M"})
    assert controller._current_limits().memory == 100 * MiB
    playground.run_code("python", ols, timeout=180)
    assert "memory" in playground.summary().lower() and "100M" in playground.summary(), playground.summary()
