"""Issue #14 in the GUI: files dropped into /work next to the program, and the program under the editor's name."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from tests.gui.conftest import Playground


def test_files_dropped_for_work_sit_next_to_the_program(playground: Playground, tmp_path: Path) -> None:
    helper = tmp_path / "helper.py"
    helper.write_text("X = 42\n")
    data = tmp_path / "data.csv"
    data.write_text("1,2\n")
    files = playground.window.files
    files.place.setCurrentIndex(files.place.findData("work"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(helper)), QUrl.fromLocalFile(str(data))])
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)  # fmt: skip
    files.dropEvent(drop)
    files.place.setCurrentIndex(files.place.findData("in"))
    playground.controller.add_inputs([str(data)])
    rows = [files.inputs.item(i).text().split()[0] for i in range(files.inputs.count())]
    assert rows == ["/in/data.csv", "/work/data.csv", "/work/helper.py"]
    code = (
        "import os, helper\n"
        "open('notes.txt', 'w').write(open('data.csv').read())\n"
        "print(os.getcwd(), helper.X, sorted(os.listdir('.')), open('/in/data.csv').read().strip())\n"
    )
    output = playground.run_code("python", code, timeout=120)
    assert "/work 42 ['data.csv', 'helper.py', 'main.py', 'notes.txt'] 1,2" in output, playground.summary()
    files.inputs.item(2).setSelected(True)  # /work/helper.py
    files.remove_button.click()
    assert [files.inputs.item(i).text().split()[0] for i in range(files.inputs.count())] == [
        "/in/data.csv", "/work/data.csv"]  # fmt: skip


def test_the_program_runs_under_the_editors_file_name(playground: Playground, tmp_path: Path) -> None:
    script = tmp_path / "analysis.py"
    script.write_text("import os\nprint(os.listdir('.'))\n1 / 0\n")
    playground.controller.open_file(str(script))
    output = playground.run_code("python", playground.window.code(), timeout=120)
    assert "['analysis.py']" in output, playground.summary()
    assert 'File "/work/analysis.py", line 3' in output
