"""Each harness under atheris from its seed corpus: does libFuzzer see enough, and keep inputs?

    python fuzz/check_coverage.py [--seconds 45] [--short] [--only fuzz_decode ...] [--work DIR]

For every harness: the seed corpus (`make_seed_corpus.py`) unzipped, then
``python fuzz/<harness>.py NEW SEEDS -max_total_time=S``; the run passes when libFuzzer's
``cov`` reaches the harness's bar (`BARS`, the issue's: 300 edges for decode, roundtrip
and ref_diff, 2,000 for the checker and inference), the corpus it kept grew past its seeds
(and past what it kept of them, ``INITED``), and it exited without a crash.

``--short`` is CI's smoke form (tests/fuzz/test_fuzz_atheris.py): the same bars, and the
corpus growing past ``INITED``; each run is stopped as soon as it has shown both (SIGTERM,
`libfuzzer.run_harness`'s ``stop``), ``--seconds`` being only the most it may take.  So the
check costs what reaching the bars costs on the machine at hand (a few seconds each but
the checker's, which climbs from about 1,650 edges at its seeds) instead of a fixed time
that a loaded machine could make too short.  Exit code 1 if any harness failed.
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

#: Edges libFuzzer must report from the seed corpus (the issue's bars).
BARS = {"fuzz_decode": 300, "fuzz_roundtrip": 300, "fuzz_ref_diff": 300,
        "fuzz_checker": 2000, "fuzz_inference": 2000}


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
    seconds: float = 0.0


def judge(run: libfuzzer.Run, seeds: int, short: bool) -> Verdict:
    """Whether ``run`` meets its harness's bar (`BARS`), with the reason when it does not."""
    bar = BARS[run.harness]
    last, inited = run.last, run.inited
    problems = []
    if (run.returncode != 0 and not run.stopped) or run.artifacts:
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
                   "; ".join(problems) or "ok", run.seconds)


def check(harness: str, seconds: float, work: str, seed_zip: str, *, short: bool = False) -> Verdict:
    seeds_dir = os.path.join(work, harness + "_seeds")
    new_dir = os.path.join(work, harness + "_new")
    seeds = libfuzzer.unzip_seeds(seed_zip, seeds_dir)
    os.makedirs(new_dir, exist_ok=True)
    bar = BARS[harness]

    def shown(status, inited) -> bool:  # --short: the bar reached and the corpus grown
        return inited is not None and status.cov >= bar and status.corpus > inited.corpus

    run = libfuzzer.run_harness(libfuzzer.harness_command(harness), harness, [new_dir, seeds_dir], seconds,
                                artifact_dir=os.path.join(work, harness + "_artifacts"),
                                stop=shown if short else None)
    return judge(run, seeds, short)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=45.0)
    p.add_argument("--only", nargs="*", default=list(libfuzzer.HARNESSES))
    p.add_argument("--short", action="store_true",
                   help="CI's smoke form: stop once the bar is reached and the corpus grew past INITED")
    p.add_argument("--work", help="keep the corpora here (default: a temporary directory)")
    p.add_argument("--mutants", type=int, default=64, help="wire mutants in the seed corpus")
    args = p.parse_args(argv)
    import make_seed_corpus  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        if not all(os.path.exists(os.path.join(work, f"{h}_seed_corpus.zip")) for h in args.only):
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
