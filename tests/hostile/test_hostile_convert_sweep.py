"""benchmarks/hostile_sweep.py runs end to end at a tiny size, and judges runs as the
issue's promise says (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import os
import sys

import hostile_models as hm
from repo_paths import REPO

_spec = importlib.util.spec_from_file_location("hostile_sweep", os.path.join(REPO, "benchmarks", "hostile_sweep.py"))
sweep = importlib.util.module_from_spec(_spec)
sys.modules["hostile_sweep"] = sweep  # (its dataclass looks its module up there)
_spec.loader.exec_module(sweep)


def test_a_small_sweep_gives_a_row_per_case_and_a_cell_per_run(tmp_path, monkeypatch):
    cases = [hm.CASES_BY_NAME["range_extremes"], hm.CASES_BY_NAME["sparse_hole_model"]]
    runs = ["check --json", "convert", "api load + save"]
    results = sweep.sweep(cases, runs, small=True, log=lambda s: None, jobs=2)
    assert list(results) == ["range_extremes", "sparse_hole_model"]
    for outcomes in results.values():
        assert list(outcomes) == runs
        for o in outcomes.values():
            assert o.passed, o
            assert o.cpu > 0 and o.rss_mib > 0
    text = sweep.report(results, runs, small=True)
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    assert rows[0] == "| case | check --json | convert | api load + save |"
    assert [r.split(" | ")[0] for r in rows[1:]] == ["| range_extremes", "| sparse_hole_model"]
    assert "6 of 6 runs pass" in text

    results_md = tmp_path / "RESULTS.md"
    results_md.write_text("# Benchmarks\n\nhand-written\n", encoding="utf-8")
    monkeypatch.setattr(sweep, "RESULTS", str(results_md))
    sweep.write_results(text, "now")
    sweep.write_results(text, "later")  # replaced between the markers, not appended twice
    doc = results_md.read_text(encoding="utf-8")
    assert doc.count(sweep.BEGIN) == 1 and doc.count(sweep.END) == 1 and "(later)" in doc
    assert doc.startswith("# Benchmarks\n\nhand-written\n")


def test_a_child_over_the_memory_limit_or_with_a_raw_control_character_fails(tmp_path):
    big = sweep.run_child([sys.executable, "-c", "b = bytearray(3 << 30)"], str(tmp_path))
    assert big.status == 1 and big.traceback and big.oom and not big.passed  # MemoryError under RLIMIT_AS
    ctl = sweep.run_child([sys.executable, "-c", "print('a\\x1b[2Jb')"], str(tmp_path))
    assert ctl.status == 0 and ctl.control and not ctl.passed
    internal = sweep.run_child([sys.executable, "-c", "import sys; sys.exit('irmodel: internal error (a bug)')"],
                               str(tmp_path))
    assert internal.internal and not internal.passed
    ok = sweep.run_child([sys.executable, "-c", "print('fine')"], str(tmp_path))
    assert ok.passed and "ctl" not in ok.cell()
