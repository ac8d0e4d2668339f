"""The coverage-guided campaign: every harness under atheris (libFuzzer), one at a time.

    python fuzz/campaign_atheris.py --seconds 600 --out /tmp/atheris-campaign [--nice 10]
        [--only fuzz_decode ...] [--write-results]

`campaign.py` is the differential campaign (wire mutants through the reference parsers,
no coverage feedback); this one runs the harnesses as OSS-Fuzz and ClusterFuzzLite do:
``python fuzz/<harness>.py CORPUS SEEDS`` under libFuzzer for ``--seconds`` each, from the
seed corpus (`make_seed_corpus.py`), one after the other (``nice``: the machine is shared).
For each harness it records libFuzzer's edges and corpus over time (`libfuzzer.run_harness`),
the corpus kept, execs per second and every crash, timeout or out-of-memory artifact; each
artifact is minimized with libFuzzer's ``-minimize_crash=1`` and kept with the exception
its harness raised.  ``OUT/campaign_atheris.json`` holds it all; ``--write-results`` puts
the tables into fuzz/RESULTS.md between the ``atheris-campaign`` markers (replacing the
previous run's).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import libfuzzer  # noqa: E402

BEGIN, END = "<!-- atheris-campaign -->", "<!-- /atheris-campaign -->"
#: Seconds since libFuzzer started at which the edges-over-time table samples its runs.
SAMPLES = (15, 30, 60, 120, 300, 600, 900, 1200)


def minimize(harness: str, artifact: str, out_dir: str, seconds: int = 60) -> dict:
    """libFuzzer's ``-minimize_crash=1`` on one artifact; the smallest input that still
    fails, and the last line of what the harness raised on it."""
    os.makedirs(out_dir, exist_ok=True)
    with open(artifact, "rb") as f:
        data = f.read()
    target = os.path.join(out_dir, f"{harness}-{hashlib.sha1(data).hexdigest()[:12]}.bin")
    cmd = [*libfuzzer.harness_command(harness), "-minimize_crash=1", f"-max_total_time={seconds}",
           "-runs=100000", f"-exact_artifact_path={target}", artifact]
    env = {k: v for k, v in os.environ.items() if k != "IRMODEL_FUZZ_PLAIN"}
    subprocess.run(cmd, capture_output=True, env=env, timeout=seconds + 300)
    if not os.path.exists(target):
        shutil.copyfile(artifact, target)
    with open(target, "rb") as f:
        small = f.read()
    check = subprocess.run([*libfuzzer.harness_command(harness), target], capture_output=True, text=True,
                           errors="replace", env=env, timeout=300)
    lines = check.stderr.splitlines()
    marker = next((i for i, line in enumerate(lines) if "Uncaught Python exception" in line), None)
    raised = lines[marker + 1] if marker is not None and marker + 1 < len(lines) else check.stderr[-300:]
    return {"artifact": os.path.basename(artifact), "reproducer": target, "size": len(small),
            "hex": small.hex() if len(small) <= 64 else None, "raised": raised}


def campaign(harness: str, seconds: float, out: str, seed_zip: str, nice: int) -> dict:
    base = os.path.join(out, harness)
    seeds_dir, corpus_dir = os.path.join(base, "seeds"), os.path.join(base, "corpus")
    seeds = libfuzzer.unzip_seeds(seed_zip, seeds_dir)
    os.makedirs(corpus_dir, exist_ok=True)
    with open(os.path.join(base, "libfuzzer.log"), "w", encoding="utf-8") as log:
        run = libfuzzer.run_harness(libfuzzer.harness_command(harness), harness, [corpus_dir, seeds_dir], seconds,
                                    artifact_dir=os.path.join(base, "artifacts"), nice=nice, log=log)
    findings = [minimize(harness, a, os.path.join(base, "reproducers")) for a in run.artifacts]
    timeline = []
    for t in SAMPLES:
        before = [s for s in run.statuses if s.at <= t]
        if before and t <= run.seconds + 1:
            timeline.append({"t": t, "cov": before[-1].cov, "corpus": before[-1].corpus})
    last, inited = run.last, run.inited
    return {"harness": harness, "seconds": run.seconds, "startup": run.startup, "returncode": run.returncode, "seeds": seeds,
            "inited": inited and {"cov": inited.cov, "corpus": inited.corpus, "at": inited.at},
            "final": last and {"cov": last.cov, "ft": last.features, "corpus": last.corpus, "at": last.at},
            "runs": run.total_runs, "exec_per_s": last.exec_per_s if last else None,
            "timeline": timeline, "findings": findings, "tail": run.tail[-2000:]}


def render(report: dict) -> str:
    """The RESULTS.md section for one campaign."""
    rows = report["harnesses"]
    lines = [BEGIN, "", "## Coverage-guided campaign under atheris (libFuzzer)", "",
             f"Run {report['date']} on the shared 2-core machine ({report['machine']}), "
             f"`python fuzz/campaign_atheris.py --seconds {report['seconds']:g} --nice {report['nice']}`: "
             "each harness under atheris 3.0.0 from the seed corpus of `make_seed_corpus.py` "
             f"({rows[0]['seeds'] if rows else 0} inputs), one at a time.  {report['note']}", "",
             "| harness | run (s) | edges at seeds (INITED) | edges at end | corpus: seeds / INITED / end | "
             "inputs run | exec/s | findings |", "|---|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        i, f = r["inited"] or {}, r["final"] or {}
        lines.append(f"| `{r['harness']}` | {r['seconds']:.0f} | {i.get('cov', '-')} | {f.get('cov', '-')} | "
                     f"{r['seeds']} / {i.get('corpus', '-')} / {f.get('corpus', '-')} | {r['runs']:,} | "
                     f"{r['exec_per_s']} | {len(r['findings']) or 'none'} |")
    lines += ["", "Edges (corpus kept) over time, in seconds since libFuzzer started (after the "
              "start-up, which instruments ~130 modules: " +
              ", ".join(f"{r['startup']:.0f} s" for r in rows) + " here, in the order above):", ""]
    times = sorted({p["t"] for r in rows for p in r["timeline"]})
    lines.append("| harness | " + " | ".join(f"{t} s" for t in times) + " |")
    lines.append("|---|" + "---:|" * len(times))
    for r in rows:
        at = {p["t"]: f"{p['cov']} ({p['corpus']})" for p in r["timeline"]}
        lines.append(f"| `{r['harness']}` | " + " | ".join(at.get(t, "") for t in times) + " |")
    found = [(r["harness"], x) for r in rows for x in r["findings"]]
    lines += [""]
    if found:
        lines += ["Findings (minimized with `-minimize_crash=1`):", ""]
        for harness, x in found:
            what = f"`{x['hex']}`" if x["hex"] else f"{x['size']} bytes, `{os.path.basename(x['reproducer'])}`"
            lines.append(f"- `{harness}`: {what}: {x['raised']}")
    else:
        lines.append("No crash, timeout or out-of-memory input in any harness.")
    lines += ["", END]
    return "\n".join(lines)


def write_results(section: str, path: str = os.path.join(HERE, "RESULTS.md")) -> None:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=600.0, help="per harness (default 600)")
    p.add_argument("--out", required=True)
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--only", nargs="*", default=list(libfuzzer.HARNESSES))
    p.add_argument("--note", default="", help="a sentence for RESULTS.md (why shorter, what else ran)")
    p.add_argument("--write-results", action="store_true")
    args = p.parse_args(argv)
    import make_seed_corpus  # noqa: PLC0415

    os.makedirs(args.out, exist_ok=True)
    make_seed_corpus.main([args.out])
    path = os.path.join(args.out, "campaign_atheris.json")
    report = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"Python {platform.python_version()}, {os.cpu_count()} cores", "seconds": args.seconds,
              "nice": args.nice, "note": args.note, "harnesses": []}
    for harness in args.only:
        result = campaign(harness, args.seconds, args.out, os.path.join(args.out, f"{harness}_seed_corpus.zip"),
                          args.nice)
        report["harnesses"].append(result)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        print(json.dumps({k: result[k] for k in ("harness", "seconds", "final", "runs", "exec_per_s")}), flush=True)
    if args.write_results:
        write_results(render(report))
    return 1 if any(r["findings"] for r in report["harnesses"]) else 0


if __name__ == "__main__":
    sys.exit(main())
