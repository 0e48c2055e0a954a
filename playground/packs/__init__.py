"""Language packs: one module per language, plain data only."""

from playground.core import Pack
from playground.packs import bash, c, go, java, javascript, lua, node, python, rust, typescript, wasm

#: Every pack, in the order the UI lists them.
ALL_PACKS: tuple[Pack, ...] = (
    python.PACK,
    javascript.PACK,
    typescript.PACK,
    lua.PACK,
    wasm.PACK,
    node.PACK,
    java.PACK,
    go.PACK,
    rust.PACK,
    c.PACK,
    bash.PACK,
)

__all__ = ["ALL_PACKS"]
