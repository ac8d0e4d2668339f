"""Each harness under atheris from its seed corpus: does libFuzzer see enough, and keep inputs?

    python fuzz/check_coverage.py [--seconds 45] [--only fuzz_decode ...] [--work DIR] [--json]

For every harness: the seed corpus (`make_seed_corpus.py`) unzipped, then
``python fuzz/<harness>.py NEW SEEDS -max_total_time=S``; the run passes when libFuzzer's
last ``cov`` reaches the harness's bar (`BARS`), the corpus it kept grew past what it kept
of the seeds (``INITED``), and it exited without a crash.  The bars are the issue's, for a
45 s run; ``--short`` (CI's smoke run, a few seconds each) lowers the checker's and
inference's bars (`SHORT_BARS`) and asks the corpus to have grown past its ``INITED`` size only.  Exit code 1 if any harness failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import libfuzzer  # noqa: E402

#: Edges libFuzzer must report after a 45 s run from the seed corpus (the issue's bars).
BARS = {"fuzz_decode": 300, "fuzz_roundtrip": 300, "fuzz_ref_diff": 300,
        "fuzz_checker": 2000, "fuzz_inference": 2000}
#: The lower bars of the short form (a few seconds from a smaller seed corpus, on a loaded
#: CI machine): the checker and inference reach about 1,600 and 2,300 edges on the seeds alone.
SHORT_BARS = {**BARS, "fuzz_checker": 1000, "fuzz_inference": 1000}


@dataclass
class Verdict:
    harness: str
    ok: bool
    seeds: int
    inited_corpus: int | None
    corpus: int | None
    cov: int | None
    bar: int
    runs: int
    exec_per_s: int | None
    returncode: int
    artifacts: list
    why: str


def judge(run: libfuzzer.Run, seeds: int, short: bool) -> Verdict:
    """Whether ``run`` meets its harness's bar (`BARS`), with the reason when it does not."""
    bar = (SHORT_BARS if short else BARS)[run.harness]
    last, inited = run.last, run.inited
    problems = []
    if run.returncode != 0 or run.artifacts:
        problems.append(f"exit {run.returncode}, artifacts {run.artifacts}")
    if last is None or inited is None:
        problems.append("no libFuzzer status line")
    else:
        if last.cov < bar:
            problems.append(f"cov {last.cov} < {bar}")
        grown_past = inited.corpus if short else max(seeds, inited.corpus)
        if last.corpus <= grown_past:
            problems.append(f"corpus {last.corpus} did not grow past {grown_past}")
    return Verdict(run.harness, not problems, seeds, inited.corpus if inited else None,
                   last.corpus if last else None, last.cov if last else None, bar, run.total_runs,
                   last.exec_per_s if last else None, run.returncode, run.artifacts,
                   "; ".join(problems) or "ok")


def check(harness: str, seconds: float, work: str, seed_zip: str, *, short: bool = False) -> Verdict:
    seeds_dir = os.path.join(work, harness + "_seeds")
    new_dir = os.path.join(work, harness + "_new")
    seeds = libfuzzer.unzip_seeds(seed_zip, seeds_dir)
    os.makedirs(new_dir, exist_ok=True)
    run = libfuzzer.run_harness(libfuzzer.harness_command(harness), harness, [new_dir, seeds_dir], seconds,
                                artifact_dir=os.path.join(work, harness + "_artifacts"))
    return judge(run, seeds, short)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=45.0)
    p.add_argument("--only", nargs="*", default=list(libfuzzer.HARNESSES))
    p.add_argument("--short", action="store_true", help="CI's smoke form: growth past INITED only")
    p.add_argument("--work", help="keep the corpora here (default: a temporary directory)")
    p.add_argument("--mutants", type=int, default=64, help="wire mutants in the seed corpus")
    args = p.parse_args(argv)
    import make_seed_corpus  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        make_seed_corpus.main([work, "--mutants", str(args.mutants)])
        failed = False
        for harness in args.only:
            verdict = check(harness, args.seconds, work, os.path.join(work, f"{harness}_seed_corpus.zip"),
                            short=args.short)
            print(json.dumps(verdict.__dict__), flush=True)
            failed |= not verdict.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
