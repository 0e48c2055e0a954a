"""Issue #12, item 6 in the GUI: /out names that are not UTF-8 are listed, previewed and saved, none lost.

Qt drops the surrogate escapes that stand for such bytes, so before the fix
``\\xff\\xfe.txt`` and ``\\xfe\\xff.txt`` both showed as ``.txt``, selecting
either looked up ``.txt`` and failed, and Save asked for a file that did
not exist. The window runs a real Python guest on Wasm (offscreen).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.gui.conftest import Playground

WRITE_WEIRD_NAMES = (
    "open(b'/out/\\xff\\xfe.txt', 'wb').write(b'weird one')\n"
    "open(b'/out/\\xfe\\xff.txt', 'wb').write(b'weird two')\n"
    "open(b'/out/bin\\xff.dat', 'wb').write(bytes(256))\n"
    "open('/out/ok.txt', 'w').write('fine')\n"
    "print('wrote them')\n"
)


def test_out_files_with_non_utf8_names_are_listed_previewed_and_saved(
    playground: Playground, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = playground.run_code("python", WRITE_WEIRD_NAMES, timeout=120)
    assert "wrote them" in output, playground.summary()
    files = playground.window.files
    shown = [files.outputs.item(i).text().split("  (")[0] for i in range(files.outputs.count())]
    assert shown == ["bin\\xff.dat", "ok.txt", "\\xfe\\xff.txt", "\\xff\\xfe.txt"]

    for row, text in ((2, "weird two"), (3, "weird one")):
        files.outputs.setCurrentRow(row)
        assert files.shown_kind() == "text" and files.text.toPlainText() == text
    assert files.current_out() == b"\xff\xfe.txt".decode("utf-8", "surrogateescape")  # the real name, not ".txt"
    files.outputs.setCurrentRow(0)
    assert files.shown_kind() == "info" and files.info.text().startswith("bin\\xff.dat: ")

    # Save… goes through the panel's signal, the window's dialog (answered here) and the controller
    target = tmp_path / "saved.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *args, **kwargs: (str(target), "")))
    files.outputs.setCurrentRow(3)
    files.save_button.click()
    assert target.read_bytes() == b"weird one"


def test_input_names_are_kept_exactly_for_remove(playground: Playground, tmp_path: Path) -> None:
    """The /in list works the same way: a host file whose name is not UTF-8 can be listed and removed."""
    weird = Path(tmp_path / b"in\xff.csv".decode("utf-8", "surrogateescape"))
    weird.write_bytes(b"1,2\n")
    plain = tmp_path / "plain.csv"
    plain.write_text("3,4\n")
    playground.controller.add_inputs([str(weird), str(plain)])
    files = playground.window.files
    assert [files.inputs.item(i).text().split()[0] for i in range(files.inputs.count())] == [
        "/in/in\\xff.csv", "/in/plain.csv"]
    files.inputs.item(0).setSelected(True)
    files.remove_button.click()
    assert [files.inputs.item(i).text().split()[0] for i in range(files.inputs.count())] == ["/in/plain.csv"]
