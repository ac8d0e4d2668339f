"""Build ``<target>_seed_corpus.zip`` for every fuzz/fuzz_*.py harness (OSS-Fuzz's convention).

    python fuzz/make_seed_corpus.py OUT_DIR [--mutants 64]

Built, not committed: the sample model (`irmodel.fuzz.sample_model`), examples/lenet.onnx,
generated valid and near-valid models (`irmodel.fuzz.generate`, when installed), wire
mutants of them (deterministic), and the campaign's reproducers (fuzz/reproducers/*.bin).
Every harness takes ONNX model bytes, so they share one corpus.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


def seed_corpus(mutants: int = 64) -> list:
    from irmodel.cli.fuzz import mutants as wire_mutants, seed_models  # noqa: PLC0415

    seeds = seed_models(0, count=8)
    lenet = os.path.join(ROOT, "examples", "lenet.onnx")
    if os.path.exists(lenet):
        with open(lenet, "rb") as f:
            seeds.append(f.read())
    out = list(seeds)
    stream = wire_mutants([s for s in seeds if len(s) < 65536], seed=0)  # lenet is 240 KB
    out += [next(stream) for _ in range(mutants)]
    for path in sorted(glob.glob(os.path.join(HERE, "reproducers", "*.bin"))):
        with open(path, "rb") as f:
            out.append(f.read())
    return out


def harnesses() -> list:
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "fuzz_*.py")))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--mutants", type=int, default=64)
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    corpus = seed_corpus(args.mutants)
    for name in harnesses():
        with zipfile.ZipFile(os.path.join(args.out, f"{name}_seed_corpus.zip"), "w", zipfile.ZIP_DEFLATED) as z:
            for data in dict.fromkeys(corpus):  # in order, each once
                z.writestr(hashlib.sha1(data).hexdigest(), data)
    print(f"{len(corpus)} seeds in each of {len(harnesses())} zips in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
