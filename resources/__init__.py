"""The project's data files, installed as the package ``playground.resources``.

Why a package: a wheel (or ``pipx install``) carries only packages, so the
examples, REPL drivers, themes, icons, the runtime manifest and the C sources
our runtime recipes compile must live in one for ``playground`` to work
outside a checkout. ``pyproject.toml`` maps this folder to
``playground.resources``; in a checkout and an editable install it is this
folder itself. Code finds the files through ``playground.resource_files``,
never by importing this package (type checkers and linters see only the
folder layout, not the mapping). Data only: nothing here runs.
"""
