"""``python -m playground.cli`` runs the ``playground`` command."""

from playground.cli import entry

entry()
