"""The GUI's packages field (``playground.app.packages_field``): typed requirements and the one-click offer."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from playground.app.packages_field import PackagesField, parse_packages, suggest_package
from playground.core import InvalidSpec, Result, Sandbox, Spec
from playground.packs import javascript, python


def test_requirements_are_parsed_and_checked() -> None:
    assert parse_packages(" python-slugify,humanize==4.9  rich>=13 ") == ["python-slugify", "humanize==4.9", "rich>=13"]
    assert parse_packages("") == []
    with pytest.raises(InvalidSpec):
        parse_packages("--index-url http://x")


def test_only_a_module_no_runtime_has_is_offered() -> None:
    sb = Sandbox(packs=[python.PACK, javascript.PACK])
    failed = Result(exit_code=1, stderr=b"Traceback ...\nModuleNotFoundError: No module named 'slugify.x'\n")
    assert suggest_package(sb, Spec(lang="python", code=""), failed) == "python-slugify"  # the module: slugify
    yaml = Result(exit_code=1, stderr=b"ModuleNotFoundError: No module named 'yaml'\n")
    assert suggest_package(sb, Spec(lang="python", code=""), yaml) is None  # the scientific runtime has it
    asked = Spec(lang="python", code="", packages=["Python_Slugify"])
    assert suggest_package(sb, asked, failed) is None  # asked for already
    assert suggest_package(sb, Spec(lang="js", code=""), failed) is None  # no packages for JavaScript
    assert suggest_package(sb, Spec(lang="python", code=""), Result(exit_code=0)) is None
    for standard in ("multiprocessing", "concurrent.futures.thread", "_lzma"):  # not on PyPI (PyPI's is a backport)
        missing = Result(exit_code=1, stderr=f"ModuleNotFoundError: No module named '{standard}'\n".encode())
        assert suggest_package(sb, Spec(lang="python", code=""), missing) is None


def test_the_offer_adds_the_package_and_asks_to_run_again(qtbot: QtBot) -> None:
    field = PackagesField()
    qtbot.addWidget(field)
    field.edit.setText("humanize")
    assert field.packages() == ["humanize"] and not field.error_text()
    field.offer("python-slugify")
    assert field.offer_button.isVisibleTo(field) and "python-slugify" in field.offer_button.text()
    with qtbot.waitSignal(field.add_and_run) as fired:
        field.offer_button.click()
    assert fired.args == ["python-slugify"]
    assert field.packages() == ["humanize", "python-slugify"] and not field.offer_button.isVisibleTo(field)
    field.add("Python_Slugify")  # the same package: not added twice
    assert field.packages() == ["humanize", "python-slugify"]
    field.edit.setText("humanize -r x")
    assert "bad package" in field.error_text()
