#!/usr/bin/env python3
"""Maintainers' front end to the runtime provisioner (users run ``playground setup``).

    python packaging/runtimes/install.py [--only NAME ...] [--force]
    python packaging/runtimes/install.py --update-manifest [--only NAME ...]

The work is done by ``backends.wasm.provision`` (shipped in the package, so a
wheel install can set itself up). ``--update-manifest`` rebuilds the named
runtimes and writes their new SHA-256 and size into ``resources/runtimes.json``
(after a version bump or a driver change); the packs' pins in
``playground/packs/runtimes.py`` must then be updated to match (a test checks).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from backends.wasm.provision import (
    BuildError,
    load_manifest,
    manifest_path,
    produce,
    provision,
    sha256_file,
)


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def update_manifest(names: list[str] | None) -> None:
    path = manifest_path()
    data = json.loads(path.read_text())
    for runtime, entry in zip(load_manifest(path), data["runtimes"], strict=True):
        if names and runtime.name not in names:
            continue
        with tempfile.TemporaryDirectory(prefix="playground-rt-") as tmp:
            result = produce(runtime, Path(tmp), log)
            entry["sha256"], entry["size"] = sha256_file(result), result.stat().st_size
        log(f"{runtime.name}: sha256 {entry['sha256']} size {entry['size']}")
    path.write_text(json.dumps(data, indent=2) + "\n")
    log(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch or build the pinned Wasm runtimes into the cache.")
    parser.add_argument("--only", nargs="+", action="extend", metavar="NAME", help="only these runtimes")
    parser.add_argument("--force", action="store_true", help="fetch/build again even if the cached file is valid")
    parser.add_argument("--update-manifest", action="store_true", help="re-pin the runtimes after a change")
    args = parser.parse_args(argv)
    try:
        if args.update_manifest:
            update_manifest(args.only)
        else:
            provision(args.only, force=args.force, progress=log)
    except BuildError as exc:
        log(f"error: {exc}")
        return 1
    except (OSError, ValueError, KeyError) as exc:
        log(f"error: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
