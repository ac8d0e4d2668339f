"""The campaign recorded in fuzz/RESULTS.md: wire mutants through the reference parsers.

    python fuzz/campaign.py --seconds 600 --out /tmp/campaign [--seed 0] [--reduce-tests 150]

Disagreements are about the wire bytes (`parse_vector`): the checker's and onnxruntime's
refusals for a model's content count as "parsed".  Phase 1 (``--seconds``): wire mutants (`irmodel.fuzz.wire`, a quarter of them stacked on
an earlier mutant) of the sample model, of ``examples/lenet.onnx`` and, when the generator
is installed, of generated models, run through every target by `irmodel.fuzz.runner`
(one job: the machine is shared).  A disagreement is bucketed by its outcome vector and
the mutation kind that made it, so two kinds that happen to give the same vector are two
findings.  Phase 2: the hand-made inputs of issue 16 (`HAND_SEEDS`), run the same way, so
the report says which named disagreements the mutator found by itself and which needed a
hand.  Phase 3: each bucket's first input is reduced (at most ``--reduce-seconds`` each;
a bucket with a timeout, signal or out-of-memory outcome is kept as found) (`irmodel.fuzz.reduce`) keeping its
outcome vector, and written to ``OUT/reproducers`` as bytes and raw text.  ``OUT/campaign.json``
holds everything RESULTS.md reports.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from irmodel.fuzz.onnx_schema import MODEL_TYPE, model_mutator, onnx_registry  # noqa: E402
from irmodel.fuzz.reduce import reduce, write_reproducer  # noqa: E402
from irmodel.fuzz.runner import BUILTIN, Report, Runner, onnxruntime_available  # noqa: E402
from irmodel.fuzz.sample_model import sample_model_bytes  # noqa: E402
from wirefmt import encode_varint  # noqa: E402

TARGETS = ["ours", "ours-roundtrip", "upb", "protobuf-python", "onnx-checker", "onnx-shape-inference"]


def _tag(number: int, wt: int) -> bytes:
    return encode_varint(number << 3 | wt)


def hand_seeds(model: bytes) -> dict:
    """The disagreements issue 16 names, written by hand on a valid model."""
    def field(tag: bytes, value: bytes) -> bytes:
        return tag + value
    return {
        "tag varint above 2^32 (5 bytes)": model + encode_varint(1 << 32 | 8 << 3 | 0) + b"\x01",
        "tag varint above 2^32 (10 bytes)": model + encode_varint(1 << 60 | 8 << 3 | 0) + b"\x01",
        "field number 2^29": model + field(_tag(1 << 29, 0), b"\x01"),
        "field number 2^29 - 1 (the largest legal)": model + field(_tag((1 << 29) - 1, 0), b"\x01"),
        "tag 0": model + b"\x00\x01",
        "valid model + zero byte + garbage": model + b"\x00" + b"garbage!",
        "valid model + zero byte": model + b"\x00",
        "group holding field 0": model + _tag(100, 3) + b"\x00\x01" + _tag(100, 4),
        "invalid UTF-8 in a proto2 string": model + _tag(2, 2) + b"\x03a\xffb",
        "overlong tag (6 bytes)": model + bytes([0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01]),
        "overlong length (6 bytes)": model + b"\x12" + bytes([0x83, 0x80, 0x80, 0x80, 0x80, 0x00]) + b"abc",
    }


def mutant_stream(seeds: list, weights: list, seed: int):
    mutator = model_mutator()
    rng = random.Random(seed)
    recent: list = []
    i = 0
    while True:
        if recent and rng.random() < 0.25:
            base, chain = recent[rng.randrange(len(recent))]
        else:
            base, chain = rng.choices(seeds, weights)[0], ()
        m = mutator.mutate(base, seed * 1_000_003 + i, max_size=max(4096, 2 * len(base)))
        i += 1
        item = (m.data, chain + (m.kind,))
        if len(recent) < 64:
            recent.append(item)
        else:
            recent[rng.randrange(64)] = item
        yield item


#: What a C++-backed target says when its protobuf parser refused the bytes (any other
#: refusal is about the model's content: the parse succeeded).
PARSE_FAILURES = {"onnx-checker": "Unable to parse proto", "onnx-shape-inference": "Unable to parse proto",
                  "onnxruntime": "INVALID_PROTOBUF"}


CRASHES = {"signal", "timeout", "oom", "error"}


def parse_vector(targets: list, outcomes) -> tuple:
    """Each target's verdict on the *wire bytes*: ``parsed``, ``refused``, or a crash outcome.

    onnx's checker and onnxruntime refuse most mutants for their content (a missing input,
    an unknown operator); those count as ``parsed``: the fuzzing here is of the parsers.
    """
    out = []
    for t, o in zip(targets, outcomes):
        if o.outcome in ("accept", "differs"):
            out.append("parsed" if o.outcome == "accept" else "differs")
        elif o.outcome == "reject":
            marker = PARSE_FAILURES.get(t)
            out.append("refused" if marker is None or marker in o.detail else "parsed")
        else:
            out.append(o.outcome)
    return tuple(out)


class Buckets:
    """Distinct disagreements: (outcome vector, mutation kind) -> first input, count, details."""

    def __init__(self):
        self.items: dict = {}

    def add(self, vector: tuple, kind: str, data: bytes, details: tuple, phase: str) -> None:
        key = (vector, kind)
        b = self.items.get(key)
        if b is None:
            self.items[key] = {"vector": vector, "kind": kind, "count": 1, "data": data, "details": details,
                               "phase": phase}
        else:
            b["count"] += 1


def run(args) -> dict:
    targets = args.targets.split(",") if args.targets else TARGETS + (["onnxruntime"] if onnxruntime_available() else [])
    sample = sample_model_bytes()
    with open(os.path.join(ROOT, "examples", "lenet.onnx"), "rb") as f:
        lenet = f.read()
    seeds, weights = [sample, lenet], [10, 1]
    try:
        from irmodel.fuzz import generate  # noqa: PLC0415
        for i in range(8):
            seeds.append(generate.model_bytes(i, "valid" if i % 2 == 0 else "near-valid"))
            weights.append(2)
    except ImportError:
        pass
    buckets = Buckets()
    kinds: dict = {}
    result: dict = {"targets": targets, "seeds": len(seeds)}
    with Runner([BUILTIN[t] for t in targets], jobs=1, timeout=args.timeout) as runner:
        report = Report(tuple(targets))
        start = time.perf_counter()
        stream = mutant_stream(seeds, weights, args.seed)
        last = 0.0
        while time.perf_counter() - start < args.seconds and (not args.inputs or report.inputs < args.inputs):
            data, chain = next(stream)
            outcomes = runner.run_one(data)
            report.add(data, outcomes)
            kinds[chain[-1]] = kinds.get(chain[-1], 0) + 1
            vector = parse_vector(targets, outcomes)
            if len(set(vector)) > 1 or set(vector) & CRASHES:
                buckets.add(vector, chain[-1], data, tuple(o.detail for o in outcomes), "mutator")
            now = time.perf_counter() - start
            if now - last > 15:
                last = now
                print(f"{report.inputs} inputs, {now:.0f} s, {len(buckets.items)} buckets", file=sys.stderr)
        report.seconds = time.perf_counter() - start
        result["mutation_phase"] = {"inputs": report.inputs, "seconds": report.seconds,
                                    "counts": {t: dict(c) for t, c in report.counts.items()},
                                    "target_seconds": report.target_seconds, "kinds": kinds}
        print(report.format(), file=sys.stderr)
        hand = {}
        for name, data in hand_seeds(sample).items():
            outcomes = runner.run_one(data)
            vector = parse_vector(targets, outcomes)
            hand[name] = {"vector": vector, "outcomes": [o.outcome for o in outcomes], "details": [o.detail for o in outcomes], "hex": data[len(sample):].hex()}
            if len(set(vector)) > 1:
                buckets.add(vector, "hand: " + name, data, tuple(o.detail for o in outcomes), "hand")
        result["hand"] = hand
        result["buckets"] = [{**{k: v for k, v in b.items() if k != "data"}, "hex": b["data"].hex()}
                             for b in buckets.items.values()]
        _dump(args, result)  # before reduction: nothing is lost if it is stopped
        out_dir = os.path.join(args.out, "reproducers")
        found = []
        for n, b in enumerate(sorted(buckets.items.values(), key=lambda b: (b["phase"], -b["count"])), 1):
            small, vector = b["data"], b["vector"]
            if args.reduce_tests and not set(b["vector"]) & CRASHES:
                stop_at = time.monotonic() + args.reduce_seconds

                def keeps(d, wanted=b["vector"], stop_at=stop_at):
                    if time.monotonic() > stop_at:  # this bucket's share of time is spent
                        return False
                    return parse_vector(targets, runner.run_one(d)) == wanted
                try:
                    small = reduce(b["data"], keeps, registry=onnx_registry(), root_type=MODEL_TYPE,
                                   max_tests=args.reduce_tests)
                    vector = parse_vector(targets, runner.run_one(small))
                except ValueError:  # flaky: the vector did not repeat
                    pass
            stem = os.path.join(out_dir, f"{n:02d}-{b['kind'].replace('hand: ', 'hand-').replace(' ', '_')}"[:80])
            note = "\n".join(f"{t}: {o}" for t, o in zip(targets, vector))
            write_reproducer(small, stem, note=f"found by: {b['phase']} ({b['kind']}); {b['count']} inputs\n{note}")
            found.append({"n": n, "kind": b["kind"], "phase": b["phase"], "count": b["count"],
                          "vector": b["vector"], "reduced_vector": vector, "size": len(b["data"]),
                          "reduced_size": len(small), "stem": os.path.basename(stem),
                          "details": [d[:200] for d in b["details"]]})
            print(f"reduced {n}: {b['kind']} {len(b['data'])} -> {len(small)}", file=sys.stderr)
            result["disagreements"] = found
            _dump(args, result)
    return result


def _dump(args, result: dict) -> None:
    with open(os.path.join(args.out, "campaign.json"), "w") as f:
        json.dump(result, f, indent=1, default=list)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--reduce-tests", type=int, default=150)
    p.add_argument("--reduce-seconds", type=float, default=30.0, help="wall-clock cap per bucket's reduction")
    p.add_argument("--targets", help="comma-separated built-in targets (default: all the reference parsers)")
    p.add_argument("--inputs", type=int, help="stop the mutation phase after this many inputs")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    _dump(args, run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
