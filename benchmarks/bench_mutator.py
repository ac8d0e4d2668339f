"""Benchmark: wire-mutator throughput, mutants per second on one core.

The input is the 1.6 KB sample model (`irmodel.fuzz.sample_model`); the mutator is the
schema-aware ONNX one, called as atheris calls a ``custom_mutator``: ``(data, max_size,
seed)`` with a new seed each time and the same input (its parse is cached after the
first call, as in a fuzzing campaign, which mutates each corpus entry many times).

Time is CPU time of this process (``time.process_time``), so other load on a shared
machine slows the figure less than wall time would; the best of ``--repeat`` runs is
reported, with the median beside it.  ``--per-kind`` adds the cost of each kind alone.
``--input FILE`` measures another protobuf file (schema-aware when it is a model).

    python benchmarks/bench_mutator.py [--count 50000] [--repeat 5] [--per-kind]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irmodel.fuzz.onnx_schema import model_mutator  # noqa: E402
from irmodel.fuzz.sample_model import sample_model_bytes  # noqa: E402
from irmodel.fuzz.wire import KINDS, WireMutator  # noqa: E402


def rate(mutator, data: bytes, count: int, first_seed: int = 0, kind: str | None = None) -> float:
    """Mutants per CPU second over ``count`` consecutive seeds."""
    max_size = max(4096, 4 * len(data))
    start = time.process_time()
    if kind is None:
        for seed in range(first_seed, first_seed + count):
            mutator(data, max_size, seed)
    else:
        for seed in range(first_seed, first_seed + count):
            mutator.mutate(data, seed, kind=kind)
    return count / (time.process_time() - start)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=50000, help="mutants per run (default 50000)")
    p.add_argument("--repeat", type=int, default=5, help="runs (default 5)")
    p.add_argument("--per-kind", action="store_true", help="also time each mutation kind alone")
    p.add_argument("--input", help="a protobuf file instead of the sample model")
    p.add_argument("--schemaless", action="store_true", help="mutate without the ONNX schema")
    args = p.parse_args(argv)

    data = open(args.input, "rb").read() if args.input else sample_model_bytes()
    mutator = WireMutator() if args.schemaless else model_mutator()
    mutator(data, 1 << 30, 0)  # parse once, as a campaign's first mutation of an input does
    rates = [rate(mutator, data, args.count, first_seed=r * args.count) for r in range(args.repeat)]
    print(f"input: {args.input or 'sample model'}, {len(data)} bytes; "
          f"{'schema-less' if args.schemaless else 'ONNX schema'}")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(f"mutants per CPU second: best {max(rates):,.0f}, median {statistics.median(rates):,.0f} "
          f"({args.repeat} runs of {args.count:,})")
    if args.per_kind:
        per_kind = []
        for name in KINDS:
            try:
                per_kind.append((1e6 / rate(mutator, data, max(1, args.count // 20), kind=name), name))
            except ValueError:
                per_kind.append((float("nan"), name + " (does not apply)"))
        for micros, name in sorted(per_kind):
            print(f"  {micros:6.1f} us  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
