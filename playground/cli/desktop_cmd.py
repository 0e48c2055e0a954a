"""``playground install-desktop`` / ``uninstall-desktop``: the app in the desktop's menu, with its icon.

Follows the freedesktop.org specs that GNOME, KDE, Xfce and the others read:
a ``.desktop`` entry in ``$XDG_DATA_HOME/applications`` (default
``~/.local/share``) and the icon in the ``hicolor`` theme under
``$XDG_DATA_HOME/icons`` (the SVG as ``scalable``, plus PNG renders for
desktops and docks that want bitmaps). Per user, no root. ``Exec`` points at
this very ``playground`` (the virtualenv or pipx one), so the menu starts
the installation that installed it. The window sets the same desktop file
name, so Wayland compositors and taskbars match the window to the entry and
show its icon. Uninstall removes exactly the files install wrote.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from playground.resource_files import resource_path

APP_ID = "sandbox-playground"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("install-desktop", help="add Sandbox Playground to the desktop's menu, with its icon")
    p.set_defaults(handler=install_command)
    p = sub.add_parser("uninstall-desktop", help="remove the menu entry and icons install-desktop added")
    p.set_defaults(handler=uninstall_command)


def data_home() -> Path:
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".local" / "share"


def entry_path(base: Path) -> Path:
    return base / "applications" / f"{APP_ID}.desktop"


def icon_paths(base: Path) -> list[Path]:
    hicolor = base / "icons" / "hicolor"
    return [hicolor / "scalable" / "apps" / f"{APP_ID}.svg"] + [
        hicolor / f"{n}x{n}" / "apps" / f"{APP_ID}.png" for n in PNG_SIZES
    ]


def launcher() -> list[str]:
    """This installation's ``playground`` command, absolute (what the menu entry runs)."""
    script = Path(sys.argv[0])
    if script.name == "playground" and script.exists():
        return [str(script.absolute())]
    found = shutil.which("playground")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "playground.cli"]


def exec_quote(argument: str) -> str:
    """Quote one argument of an ``Exec`` key as the Desktop Entry spec says."""
    if not any(c in argument for c in " \t\n\"'\\><~|&;$*?#()`%"):
        return argument
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in argument).replace("%", "%%")
    return f'"{escaped}"'


def desktop_entry(command: list[str]) -> str:
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Version=1.4",
            "Name=Sandbox Playground",
            "GenericName=Code Sandbox",
            "Comment=Run untrusted or AI-generated code without it touching your machine",
            f"Exec={' '.join(exec_quote(part) for part in command)} gui",
            f"TryExec={command[0]}",
            f"Icon={APP_ID}",
            "Terminal=false",
            "Categories=Development;IDE;",
            "Keywords=sandbox;python;javascript;lua;webassembly;wasm;docker;repl;",
            f"StartupWMClass={APP_ID}",
            "StartupNotify=true",
            "",
        ]
    )


def render_pngs(svg: Path, targets: dict[int, Path]) -> None:
    """Render the SVG at each size with Qt (offscreen: no display is needed)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(svg))
    for size, target in targets.items():
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        if not image.save(str(target)):  # the format follows the .png suffix
            raise OSError(f"could not write {target}")


def _refresh_caches(base: Path) -> None:
    """Tell the desktop about the change, where its tools are installed (best effort)."""
    for argv in (["update-desktop-database", "-q", str(base / "applications")],
                 ["gtk-update-icon-cache", "-q", "-t", str(base / "icons" / "hicolor")]):  # fmt: skip
        if shutil.which(argv[0]) and Path(argv[-1]).is_dir():
            subprocess.run(argv, capture_output=True, check=False)


def install(base: Path, command: list[str]) -> list[Path]:
    svg = resource_path("icons", "playground.svg")
    if not svg.is_file():
        raise FileNotFoundError(f"the icon {svg} is missing from this installation")
    written: list[Path] = []
    icons = icon_paths(base)
    for path in icons:
        path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, icons[0])
    written.append(icons[0])
    pngs = dict(zip(PNG_SIZES, icons[1:], strict=True))
    render_pngs(svg, pngs)
    written.extend(pngs.values())
    entry = entry_path(base)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(desktop_entry(command), encoding="utf-8")
    written.append(entry)
    _refresh_caches(base)
    return written


def uninstall(base: Path) -> list[Path]:
    removed: list[Path] = []
    for path in [entry_path(base), *icon_paths(base)]:
        if path.exists():
            path.unlink()
            removed.append(path)
    _refresh_caches(base)
    return removed


def _say(line: str) -> None:
    print(f"playground: {line}", file=sys.stderr)


def install_command(args: argparse.Namespace, make_sandbox: object) -> int:
    try:
        written = install(data_home(), launcher())
    except (OSError, ImportError) as exc:
        _say(f"could not install the desktop entry: {exc}")
        return 1
    _say(f"added to the desktop's menu: {entry_path(data_home())} (and {len(written) - 1} icon files)")
    return 0


def uninstall_command(args: argparse.Namespace, make_sandbox: object) -> int:
    removed = uninstall(data_home())
    _say(f"removed {len(removed)} file(s)" if removed else "nothing to remove")
    return 0
