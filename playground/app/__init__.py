"""The desktop playground (PySide6 + qasync). Uses only ``playground.core``'s public API.

Importing this package has no side effects: Qt is imported by the modules
that need it, and nothing is shown or loaded until ``run_gui`` is called.
"""

from playground.app.launch import run_gui

__all__ = ["run_gui"]
