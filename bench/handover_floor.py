"""What concurrency 2 can give when one Python process hands short jobs to two worker processes (issue #18 item 3).

    python bench/handover_floor.py [--work-us 770] [--after-us 190] [--parent-us 0 100 190] [--seconds 2] [--rounds 3]

No sandbox here: each worker only burns ``--work-us`` of CPU per job
(the CPU of one in-process Lua hello world on this machine) and answers
with a small pickle, so the figures are the floor of the hand-over
itself, whatever the sandbox around it does. Columns, interleaved in
``--rounds`` rounds (the machine's speed drifts), median runs/s:

* *seq*: the job done here, one at a time (what an in-process run is);
* *threads c2*: two threads, each writing a job to its own worker and
  blocking on the answer (no event loop);
* *asyncio c2*: two tasks of one event loop, each writing a job and
  awaiting the answer with ``add_reader`` on the worker's pipe, as the
  Wasm tier's ``procpool`` does, plus ``--parent-us`` of Python work per job
  in the loop's thread (0: a bare hand-over; 190: with the hand-over's own
  ~50 us, the 240 us of CPU per run the sandbox's process spends at
  concurrency 2: the core's run, the pickles, the answer's tree, asyncio).

``--after-us``: of each job's CPU, how much a worker spends after it has
answered (``procworker`` makes the next run's instance then, 190 us of a
Lua hello's 770): that work overlaps the parent's hand-over of the next
job, so a worker that has not finished it finds the next job waiting.

Ratios are to *seq*; each column also prints the parent's CPU per job.
On 2 cores every microsecond the parent spends per job comes out of the
workers' time, so a short job's ratio falls with it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import pickle
import statistics
import struct
import subprocess
import sys
import threading
import time

_LENGTH = struct.Struct("<I")
_CHUNK = b"x" * 8192


def burn(us: float) -> None:
    """Spend ``us`` microseconds of this thread's CPU."""
    end = time.thread_time() + us / 1e6
    while time.thread_time() < end:
        hashlib.sha256(_CHUNK).digest()


def serve(us: float, after_us: float) -> None:
    """A worker: for each framed job on stdin, burn, answer with a small frame, then burn ``after_us`` more."""
    while head := os.read(0, _LENGTH.size):
        (size,) = _LENGTH.unpack(head)
        job = pickle.loads(os.read(0, size))
        burn(us - after_us)
        answer = pickle.dumps(("done", job[1], 0, b"hello\n"))
        os.write(1, _LENGTH.pack(len(answer)) + answer)
        burn(after_us)  # the next run's instance, made while the parent hands that run over


def _job(number: int) -> bytes:
    data = pickle.dumps(("run", number, ("lua", 1), "print('hello')", {"wall_time": 30.0}, b"", "empty"))
    return _LENGTH.pack(len(data)) + data


def _workers(us: float, after_us: float) -> list[subprocess.Popen[bytes]]:
    cmd = [sys.executable, __file__, "--serve", str(us), str(after_us)]
    return [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0) for _ in range(2)]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


def seq(us: float, seconds: float) -> tuple[float, float]:
    done, cpu, started = 0, time.process_time(), time.perf_counter()
    while time.perf_counter() - started < seconds:
        burn(us)
        done += 1
    return done / (time.perf_counter() - started), (time.process_time() - cpu) / done * 1e6


def threads(procs: list[subprocess.Popen[bytes]], seconds: float) -> tuple[float, float]:
    counts = [0, 0]
    deadline = time.perf_counter() + seconds

    def loop(index: int) -> None:
        proc = procs[index]
        assert proc.stdin is not None and proc.stdout is not None
        to, back = proc.stdin.fileno(), proc.stdout.fileno()
        os.set_blocking(back, True)  # the asyncio column sets it non-blocking
        while time.perf_counter() < deadline:
            os.write(to, _job(counts[index]))
            (size,) = _LENGTH.unpack(os.read(back, _LENGTH.size))
            pickle.loads(os.read(back, size))
            counts[index] += 1

    cpu, started = time.process_time(), time.perf_counter()
    pair = [threading.Thread(target=loop, args=(i,)) for i in range(2)]
    for thread in pair:
        thread.start()
    for thread in pair:
        thread.join()
    done = sum(counts)
    return done / (time.perf_counter() - started), (time.process_time() - cpu) / done * 1e6


async def tasks(procs: list[subprocess.Popen[bytes]], seconds: float, parent_us: float) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    counts = [0, 0]
    deadline = time.perf_counter() + seconds

    async def one(index: int) -> None:
        proc = procs[index]
        assert proc.stdin is not None and proc.stdout is not None
        to, back = proc.stdin.fileno(), proc.stdout.fileno()
        os.set_blocking(back, False)
        while time.perf_counter() < deadline:
            answer: asyncio.Future[bytes] = loop.create_future()

            def readable(answer: asyncio.Future[bytes] = answer) -> None:
                try:
                    data = os.read(back, 1 << 16)
                except BlockingIOError:
                    return
                if not answer.done():
                    answer.set_result(data)

            burn(parent_us / 2)  # the parent's work before the hand-over, and after it
            loop.add_reader(back, readable)
            os.write(to, _job(counts[index]))
            data = await answer
            loop.remove_reader(back)
            pickle.loads(data[_LENGTH.size :])
            burn(parent_us / 2)
            counts[index] += 1

    cpu, started = time.process_time(), time.perf_counter()
    await asyncio.gather(one(0), one(1))
    done = sum(counts)
    return done / (time.perf_counter() - started), (time.process_time() - cpu) / done * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-us", type=float, default=770.0, help="CPU per job in a worker (and in seq)")
    parser.add_argument("--parent-us", type=float, nargs="+", default=[0.0, 100.0, 190.0], help="parent work per job")
    parser.add_argument("--seconds", type=float, default=2.0, help="per column and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--after-us",
        type=float,
        default=190.0,
        help="of --work-us, what a worker does after answering (procworker's prepare_next: 190)",
    )
    parser.add_argument("--serve", type=float, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(*args.serve)
        return
    procs = _workers(args.work_us, args.after_us)
    time.sleep(0.5)
    columns: dict[str, list[tuple[float, float]]] = {}
    try:
        for _ in range(args.rounds):
            columns.setdefault("seq", []).append(seq(args.work_us, args.seconds))
            columns.setdefault("threads c2", []).append(threads(procs, args.seconds))
            for parent_us in args.parent_us:
                got = asyncio.run(tasks(procs, args.seconds, parent_us))
                columns.setdefault(f"asyncio c2 +{parent_us:g} us", []).append(got)
    finally:
        _stop(procs)
    base = statistics.median(rate for rate, _ in columns["seq"])
    print(
        f"jobs of {args.work_us:g} us of CPU ({args.after_us:g} after the answer), 2 workers, "
        f"{os.cpu_count()} CPUs; median of {args.rounds} rounds"
    )
    for name, figures in columns.items():
        rate = statistics.median(r for r, _ in figures)
        cpu = statistics.median(c for _, c in figures)
        print(f"  {name:<22} {rate:7.1f}/s = {rate / base:4.2f}x of seq   parent CPU {cpu:6.1f} us/job")


if __name__ == "__main__":
    main()
