"""What the compiled languages' hello worlds need: peak memory, scratch space, and the smallest limits that pass.

    .venv/bin/python bench/compiler_limits.py                       # every compiled pack, 3 runs each
    .venv/bin/python bench/compiler_limits.py --lang rust --runs 5 --sweep

For each language, the pack's example runs ``--runs`` times under generous
limits (2 GiB, 1 GiB of tmpfs, 120 s) and we print the cgroup's peak
memory (``memory.max_usage_in_bytes``: the compiler, the program, their
tmpfs files and the page cache they read, which the kernel reclaims
before it kills), the wall time and what ``/work`` and ``/tmp`` held at the
end (from the wrapper's trailer). ``--sweep`` then runs it under smaller
memory limits and says, for each, how many runs passed and what the others
were told (an OOM kill, or a compile failure): the smallest limit that
always passes is what the compiler really needs. ``--cold`` drops the
host's page cache before each run (root): then the compiler's own files are
read into the run's cgroup, the worst case (the first run after a boot or
an image build). The pack defaults
(``Pack.limits``) are chosen from these figures with room to spare; the
figures are in the packs' comments.

Images: ``playground-<lang>:local`` or the official one (``playground images build``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends.docker import DockerBackend, oneshot
from backends.docker.trailer import Trailer, parse_trailer
from playground.core import DOCKER_ONLY, LimitExceeded, Limits, Pack, Sandbox, Spec
from playground.packs import ALL_PACKS

MiB = 1 << 20
#: The compiled languages: the packs whose Docker tier compiles first.
PACKS: dict[str, Pack] = {p.name: p for p in ALL_PACKS if p.caps.compiles}
GENEROUS = Limits(memory=2048 * MiB, wall_time=120.0, cpu_time=120.0, fs_quota=1024 * MiB, max_files=100_000)
SWEEP = (32, 48, 64, 80, 96, 128, 192, 256, 384, 512)

_trailers: list[Trailer] = []


def _capture(data: bytes, mark: str) -> Trailer:
    trailer = parse_trailer(data, mark)
    _trailers.append(trailer)
    return trailer


def drop_caches() -> None:
    """Empty the host's page cache (root only), so the compiler's files are read again and charged to the run."""
    with open("/proc/sys/vm/drop_caches", "w") as control:
        control.write("3\n")


def run_once(sb: Sandbox, pack: Pack, limits: Limits, cold: bool) -> tuple[str, float, int, Trailer | None]:
    """(verdict, wall seconds, peak bytes, trailer): verdict is ``ok``, ``exit N`` or the limit's name."""
    _trailers.clear()
    if cold:
        drop_caches()
    try:
        result = sb.run_sync(Spec(lang=pack.name, code=pack.example, limits=limits))
    except LimitExceeded as exc:
        assert exc.result is not None
        return exc.limit, exc.result.usage.wall, exc.result.usage.peak_memory, None
    verdict = "ok" if result.exit_code == 0 and result.stdout else f"exit {result.exit_code}"
    return verdict, result.usage.wall, result.usage.peak_memory, (_trailers[-1] if _trailers else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lang", default=",".join(PACKS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sweep", action="store_true", help="also find the smallest memory limit that passes")
    parser.add_argument("--sizes", default=",".join(map(str, SWEEP)), help="memory limits (MiB) for --sweep")
    parser.add_argument("--cold", action="store_true", help="drop the page cache before every run (root): the "
                        "worst case, where the compiler's files are read into the run's own memory")
    args = parser.parse_args()
    oneshot.parse_trailer = _capture  # type: ignore[assignment]  # read the trailer's mount usage too
    packs = [PACKS[name] for name in args.lang.split(",")]
    sb = Sandbox(backends=[DockerBackend(packs=packs)], packs=packs, policy=DOCKER_ONLY)
    try:
        for pack in packs:
            peaks, walls, used = [], [], []
            for _ in range(args.runs):
                verdict, wall, peak, trailer = run_once(sb, pack, GENEROUS, args.cold)
                peaks.append(peak)
                walls.append(wall)
                if trailer is not None:
                    used.append({m: u.used for m, u in trailer.space.items()})
                print(f"{pack.name:5} generous: {verdict:8} peak {peak / MiB:7.1f} MiB  wall {wall:5.2f} s  "
                      f"tmpfs used {used[-1] if used else '?'}", flush=True)
            print(f"{pack.name:5} peak max {max(peaks) / MiB:.1f} MiB, wall p50 {statistics.median(walls):.2f} s")
            if args.sweep:
                for mib in (int(size) for size in args.sizes.split(",")):
                    runs = [run_once(sb, pack, GENEROUS.merged(Limits(memory=mib * MiB)), args.cold)
                            for _ in range(args.runs)]
                    verdicts = [verdict for verdict, *_ in runs]
                    slowest = max(wall for _, wall, *_ in runs)
                    print(f"{pack.name:5} memory {mib:4} MiB: {verdicts} slowest {slowest:.2f} s", flush=True)
    finally:
        sb.close()


if __name__ == "__main__":
    main()
