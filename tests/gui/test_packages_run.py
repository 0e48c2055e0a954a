"""The packages field in the window: a missing module is offered as a PyPI package, one click adds it and re-runs.

Real core, real pip and PyPI (the package is fetched and checked on this machine).
"""

from __future__ import annotations

from tests.gui.conftest import Playground, save_artifact

SLUG = "import slugify\nprint(slugify.slugify('Hello, Sandbox World!'))\n"


def test_a_missing_module_is_offered_and_one_click_runs_again(playground: Playground) -> None:
    window, controller = playground.window, playground.controller
    playground.run_code("python", SLUG, timeout=120)
    assert "ModuleNotFoundError" in window.output.plain_text(), playground.summary()
    field = window.packages_field
    playground.qtbot.waitUntil(field.offer_button.isVisible, timeout=5_000)
    assert "python-slugify" in field.offer_button.text()
    assert window.tabs.currentWidget() is window.run_settings
    save_artifact(window, "packages_offer.png")

    before = controller.runs_finished
    field.offer_button.click()
    assert field.packages() == ["python-slugify"]
    playground.wait_run(before, timeout=180)
    summary = playground.summary()
    assert "hello-sandbox-world" in window.output.plain_text(), (window.output.plain_text(), summary)
    assert "exit 0" in summary, summary
    assert not field.offer_button.isVisible()
    save_artifact(window, "packages_added_and_run.png")


def test_packages_are_ignored_by_a_language_that_takes_none(playground: Playground) -> None:
    playground.window.packages_field.edit.setText("python-slugify")
    output = playground.run_code("javascript", "console.log('still runs')")
    assert "still runs" in output, playground.summary()


def test_a_bad_packages_line_refuses_the_run(playground: Playground) -> None:
    playground.window.packages_field.edit.setText("-r requirements.txt")
    before = playground.controller.runs_finished
    playground.select("python")
    playground.window.set_code("print(1)")
    playground.window.run_action.trigger()
    assert playground.controller.runs_finished == before and not playground.controller.running
    assert "Not run" in playground.summary(), playground.summary()
