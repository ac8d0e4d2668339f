"""The benchmark scripts run end to end at a tiny size (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repo_paths import REPO as ROOT  # noqa: E402


def _table_rows(stdout: str) -> list:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_external_data_benchmark_runs_tiny(tmp_path):
    out = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_external_data.py"),
         "--size-gb", "0.001", "--out", str(out), "--repeat", "1"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = _table_rows(proc.stdout)
    header, rule, body = rows[0], rows[1], rows[2:]
    assert header[:4] == ["side", "what", "wall (s)", "peak RSS (MiB)"]
    assert set(rule) <= {"---", "---:"}
    assert [r[0] for r in body] == ["irmodel", "onnx", "onnx-lazy"]
    for r in body:
        wall, peak, above = float(r[2]), float(r[3]), float(r[4])
        assert wall > 0 and peak > 0 and above >= 0
        assert r[5].endswith("x") and r[6].endswith("x")
    # every side read the same tensor (the script also checks it against the generator)
    assert len({r[7] for r in body}) == 1
    assert body[0][5] == "1.0x" and body[0][6] == "1.00x"
    assert "machine:" in proc.stdout and "onnx 1." in proc.stdout
    assert not out.exists()  # the generated files are removed unless --keep


# -- run_all.py: the whole suite, and the RESULTS.md block it writes ---------------------------

def _bench_module(name: str):
    """benchmarks/NAME.py (standard library only), imported by path."""
    bench = os.path.join(ROOT, "benchmarks")
    sys.path.insert(0, bench)
    try:
        return __import__(name)
    finally:
        sys.path.remove(bench)


def _section_tables(text: str) -> dict:
    """``{heading: [rows]}`` for the first table under each ``### `` heading."""
    tables, heading, rows = {}, None, None
    for line in text.splitlines():
        if line.startswith("### "):
            heading, rows = line[4:], None
        elif line.startswith("|") and heading is not None and heading not in tables:
            rows = [] if rows is None else rows
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows is not None and heading not in tables:
            tables[heading] = rows
    if rows is not None and heading not in tables:
        tables[heading] = rows
    return tables


def _number(cell: str) -> float:
    return float(cell)  # raises on anything but a plain number


@pytest.mark.slow
def test_run_all_tiny_regenerates_only_the_generated_block(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmarks\n\nintro, hand-written\n\n<!-- generated:start -->\nstale\n"
                       "<!-- generated:end -->\n\n## Decoder tuning\n\nnotes, hand-written\n")
    models = tmp_path / "models"
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "run_all.py"), "--out", str(models),
         "--scale", "0.0001", "--repeat", "1", "--results", str(results)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = results.read_text()
    assert text.startswith("# Benchmarks\n\nintro, hand-written\n\n<!-- generated:start -->\n")
    assert text.endswith("<!-- generated:end -->\n\n## Decoder tuning\n\nnotes, hand-written\n")
    assert "stale" not in text and text.count("<!-- generated:start -->") == 1
    for key in ("| date |", "| machine |", "| OS |", "| Python |", "| reference | onnx 1.", "| irmodel | commit",
                "| command | `python ", "run_all.py --out"):
        assert key in text, key

    tables = _section_tables(text)
    by_case = {h[:2]: rows for h, rows in tables.items() if h[:2] in ("a.", "b.", "c.", "d.", "e.")}
    assert sorted(by_case) == ["a.", "b.", "c.", "d.", "e."]
    for case, rows in by_case.items():
        header, rule, body = rows[0], rows[1], rows[2:]
        assert "ours" in header and "target" in header and "met" in header, case
        assert all(c.strip(":") == "---" for c in rule)
        ours = header.index("ours")
        ratio = next(i for i, h in enumerate(header) if h.startswith("ours / "))
        measured = [r for r in body if r[ours - 1].endswith(("(s)", "(MiB)"))]
        assert len(measured) >= 3, case
        for r in measured:  # ours, every other side, and the ratios are numbers
            for cell in r[ours:ratio]:
                assert _number(cell) >= 0, (case, r)
            if r[ratio] != "—":
                assert _number(r[ratio]) >= 0, (case, r)
            assert r[-1] in ("yes", "**no**", "—"), (case, r)

    identity = [r for r in by_case["c."] if r[1] == "output byte-identical to the input"]
    assert len(identity) == 2 and all(r[2:4] == ["yes", "yes"] and r[-1] == "yes" for r in identity)
    assert "summaries agree on every field both compute" in text and "compute (16 nodes" in text
    assert "Both sides walked 8 nodes: yes." in text
    assert "ours ok, reference ok; copies of the right size: ok, ok" in text
    assert "Ours' output is byte-identical to the reference's: yes." in text
    assert "(SHA1 checked against the generator's): yes." in text
    assert "Targets at a glance" in text and "Scaled run (`--scale 0.0001`)" in text

    # the models carry stamps; a stamp that no longer describes its file is not reused
    run_all = _bench_module("run_all")
    stamp = models / "weights.onnx.stamp.json"
    params = __import__("json").loads(stamp.read_text())["params"]
    assert run_all._reusable(str(models / "weights.onnx"), params) is not None
    assert run_all._reusable(str(models / "weights.onnx"), {**params, "seed": 1}) is None
    with open(models / "weights.onnx", "ab") as fh:
        fh.write(b"\0")
    assert run_all._reusable(str(models / "weights.onnx"), params) is None
    assert not (models / "scratch").exists()


def test_results_file_created_with_markers_and_a_hand_written_section(tmp_path):
    report = _bench_module("report")
    path = tmp_path / "RESULTS.md"
    report.update_results(str(path), "## Results\n\nfirst\n")
    text = path.read_text()
    start, end = text.index("<!-- generated:start -->"), text.index("<!-- generated:end -->")
    assert start < text.index("first") < end < text.index("## Decoder tuning")
    report.update_results(str(path), "## Results\n\nsecond\n")
    assert "first" not in path.read_text() and path.read_text().count("## Decoder tuning") == 1

    plain = tmp_path / "PLAIN.md"  # a file without markers keeps all its text after the block
    plain.write_text("# Title\n\nprose\n")
    report.update_results(str(plain), "block\n")
    assert plain.read_text() == "# Title\n\n<!-- generated:start -->\nblock\n<!-- generated:end -->\n\nprose\n"


def test_generator_benchmark_runs_tiny():
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_generator.py"), "--count", "5", "--mutants", "5"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = dict((r[0], r[1]) for r in _table_rows(proc.stdout)[2:])
    assert rows["onnx check_model(full_check=True) passes"].split("/")[1].startswith("5 ")
    assert float(rows["models generated per CPU second"]) > 0
    assert float(rows["structure mutants per CPU second (sample model)"]) > 0
