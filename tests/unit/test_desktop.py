"""``playground install-desktop`` into a temporary XDG data dir: a valid entry, real icons, a clean uninstall."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from playground.cli.desktop_cmd import APP_ID, PNG_SIZES, desktop_entry, exec_quote

PLAYGROUND = Path(sys.executable).parent / "playground"


def run_cli(*args: str, data_home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_DATA_HOME=str(data_home), QT_QPA_PLATFORM="offscreen")
    return subprocess.run([str(PLAYGROUND), *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def need_validator() -> str:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("desktop-file-validate is missing (packaging/test.sh installs desktop-file-utils)")
        pytest.skip("desktop-file-validate is not installed")
    return tool


def test_install_writes_a_valid_entry_and_icons_and_uninstall_removes_them(tmp_path: Path) -> None:
    validator = need_validator()
    proc = run_cli("install-desktop", data_home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    entry = tmp_path / "applications" / f"{APP_ID}.desktop"
    checked = subprocess.run([validator, str(entry)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0 and checked.stdout == "" and checked.stderr == "", checked.stdout + checked.stderr
    text = entry.read_text()
    assert f"Exec={PLAYGROUND} gui" in text.splitlines()
    assert f"Icon={APP_ID}" in text.splitlines()
    svg = tmp_path / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    assert svg.read_text().lstrip().startswith("<svg")
    for size in PNG_SIZES:
        png = tmp_path / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == size and int.from_bytes(data[20:24], "big") == size

    proc = run_cli("uninstall-desktop", data_home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ours = [p for p in tmp_path.rglob("*") if p.is_file() and APP_ID in p.name]
    assert ours == []


def test_exec_quoting_follows_the_spec() -> None:
    assert exec_quote("/usr/bin/playground") == "/usr/bin/playground"
    assert exec_quote("/home/a b/playground") == '"/home/a b/playground"'
    assert exec_quote('/x/$HOME"`\\') == '"/x/\\$HOME\\"\\`\\\\"'
    assert exec_quote("/x/100%") == '"/x/100%%"'
    entry = desktop_entry(["/opt/my apps/playground"])
    assert 'Exec="/opt/my apps/playground" gui' in entry.splitlines()
