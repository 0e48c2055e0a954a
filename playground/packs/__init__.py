"""Language packs: one module per language, plain data only."""

from playground.core import Pack

ALL_PACKS: tuple[Pack, ...] = ()

__all__ = ["ALL_PACKS"]
