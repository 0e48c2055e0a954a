"""Isolation backends (each imports the core's types; the core never imports them)."""

__all__: list[str] = []
