"""The coverage tables for docs (ldpopt.experiments.coverage_report, ``ldpopt experiment coverage-table``):
each cell is the pooled coverage Σ value·count / Σ count of the run, recomputed here from the rows, with
its Monte-Carlo SE over repetitions and the width relative to Base's; the 3-points-under target is
marked exactly where the shown number leaves it."""

import re

import numpy as np
import pandas as pd
import pytest

from _cli import ldpopt, main_in_process, one_line_error
from ldpopt.experiments import run
from ldpopt.experiments.coverage_report import BAND_ORDER, coverage_markdown, coverage_report


def _planted():
    rows = []
    for rep, count in enumerate((10, 20)):
        for method, band, level, v in [
            ("base", "2-5sigma", 0.9, (0.8, 1.0)[rep]),  # pooled (8 + 20) / 30 = 93.3 -> over
            ("norm", "2-5sigma", 0.9, 0.9),              # 90.0 -> inside
            ("norm", "zero", 0.9, 0.87),                 # 87.0: exactly 3 points under -> inside
            ("base", "2-5sigma", 0.95, 0.91),            # 91.0 -> under
            ("norm", "2-5sigma", 0.95, 0.95)]:
            rows.append(dict(dataset="zipf", oracle="oue", epsilon=1.0, rep=rep, method=method, metric="coverage",
                             level=level, band=band, value=v, count=count, width=0.1, rel_width=1.0,
                             interval="normal"))
    return pd.DataFrame(rows)


def _num(text: str) -> float:
    return float(re.sub(r"[*↑↓ ]", "", text.split("±")[0]))


def _cells(md: str, level: float) -> dict:
    """{(row key, band): cell text} of the table for ``level``."""
    block = md.split(f"Nominal {100 * level:g} %")[1].split("\n\n")[1].strip().splitlines()
    head = [h.strip() for h in block[0].strip("|").split("|")]
    out = {}
    for line in block[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for h, c in zip(head[1:], cells[1:]):
            out[(cells[0], h)] = c
    return out


def test_planted_cells_and_marks():
    md = coverage_markdown(_planted())
    c90, c95 = _cells(md, 0.9), _cells(md, 0.95)
    # base 2-5sigma at 90 %: reps 0.8 (10 values) and 1.0 (20): pooled 28/30; cluster SE
    # sqrt(10²(0.8 − 0.9333)² + 20²(1 − 0.9333)²)/30 = 0.0629
    assert c90[("base", "2-5sigma")] == "93.3 ↑ ± 6.3 (1.00×)"
    assert c90[("norm", "2-5sigma")] == "90.0 ± 0.0 (1.00×)" and c90[("norm", "zero")] == "87.0 ± 0.0 (1.00×)"
    assert c90[("base", "zero")] == "–"  # no rows for that cell
    assert c95[("base", "2-5sigma")] == "**91.0** ↓ ± 0.0 (1.00×)" and _num(c95[("norm", "2-5sigma")]) == 95.0
    assert list(_cells(coverage_markdown(_planted(), levels=[0.95]), 0.95)) == list(c95)
    assert "Nominal 90 %" not in coverage_markdown(_planted(), levels=[0.95])


def test_bad_input_names_the_argument():
    t = _planted()
    with pytest.raises(ValueError, match="by: columns"):
        coverage_markdown(t, by=("nope",))
    with pytest.raises(ValueError, match="levels"):
        coverage_markdown(t, levels=[0.8])
    with pytest.raises(ValueError, match="no coverage rows"):
        coverage_markdown(t.assign(metric="mse"))
    with pytest.raises(ValueError, match="table must be"):
        coverage_markdown(t.drop(columns="count"))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("cov")
    table = run("ext_uncertainty_coverage", quick=True, out=root, progress=False)
    return root, table


def test_quick_run_table_is_the_pooled_coverage(quick_run):
    root, t = quick_run
    md = coverage_report("ext_uncertainty_coverage", quick=True, root=root)
    reps = t[t.metric == "coverage"].groupby(["rep", "batch_rep"]).ngroups
    assert "zipf" in md and "oue" in md and f"{reps} repetitions" in md and "Top 10 per rank" in md
    t = t[t.metric == "coverage"]
    for level in (0.9, 0.95):
        cells = _cells(md, level)
        assert {b for _, b in cells} == set(t["band"]) and set(t["band"]) <= set(BAND_ORDER)
        assert {m for m, _ in cells} == set(t["method"])
        for (method, band), text in cells.items():
            s = t[(t.method == method) & (t.band == band) & (t.level == level)]
            if s.empty:
                assert text == "–"
                continue
            want = 100 * np.average(s["value"], weights=s["count"])
            assert _num(text) == pytest.approx(round(want, 1), abs=1e-9), (method, band, level)
            under = round(want, 1) - 100 * level < -3 - 1e-9
            assert ("**" in text) == under == ("↓" in text)
            assert "±" in text  # every cell of a multi-repetition run has its Monte-Carlo SE


def test_cli_prints_the_same_tables(quick_run):
    root, t = quick_run
    p = ldpopt("experiment", "coverage-table", "ext_uncertainty_coverage", "--quick", "--out", root,
               "--by", "oracle,method", "--level", "0.95")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == coverage_report("ext_uncertainty_coverage", quick=True, root=root,
                                               by=("oracle", "method"), levels=[0.95]).strip()
    assert "| oracle | method |" in p.stdout and "Nominal 90 %" not in p.stdout
    # the refusal in this process (the same exit status and line, without a fresh interpreter's imports)
    assert "by: columns" in one_line_error(main_in_process("experiment", "coverage-table", "ext_uncertainty_coverage",
                                                           "--quick", "--out", root, "--by", "nope"))


def test_band_summary_names_the_worst_cell():
    """Two cells (OUE ε = 1 as planted, and a copy at ε = 4 with base's 2-5sigma coverage lowered):
    the summary gives per band the least–greatest cell coverage, the worst cell with its
    Monte-Carlo SE (recomputed here), and the repetitions per cell."""
    from ldpopt.experiments.coverage_report import band_summary_markdown

    a = _planted()
    b = a.assign(epsilon=4.0)
    b.loc[(b.method == "base") & (b.band == "2-5sigma") & (b.level == 0.9), "value"] = 0.5
    md = band_summary_markdown(pd.concat([a, b]), levels=[0.9])
    row = [ln for ln in md.splitlines() if ln.startswith("| base | 2-5sigma |")]
    assert len(row) == 1, md
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert cells[2] == "50.0–93.3"
    assert cells[3] == "zipf OUE ε=4: **50.0** ↓ ± 0.0" and cells[5] == "2–2"
    assert "| norm | zero | 87.0–87.0 |" in md
    assert band_summary_markdown(a.drop(columns=["dataset", "oracle", "epsilon"])) == ""


def _planted_flags():
    """A bootstrapped method in two cells (ε = 1, 4), two repetitions each, one band: ``coverage``
    rows counting flagged entries, and the unflagged entries' rows for the user's and the own interval."""
    rows = []
    for eps, reps in ((1.0, [(10, 8, 0.9, 2, 1.0, 0.5), (10, 10, 0.8, 0, None, None)]),
                      (4.0, [(20, 5, 0.95, 15, 0.8, 0.6), (20, 4, 0.85, 16, 0.75, 0.75)])):
        for rep, (count, flagged, cov, nfree, cfree, craw) in enumerate(reps):
            common = dict(dataset="zipf", oracle="oue", epsilon=eps, rep=0, batch_rep=rep, method="power",
                          level=0.9, band="ge5sigma", width=0.1, rel_width=1.0, interval="basic+base")
            rows.append({**common, "metric": "coverage", "value": cov, "count": count, "flagged": flagged})
            if nfree:
                rows.append({**common, "metric": "coverage_unflagged", "value": cfree, "count": nfree})
                rows.append({**common, "metric": "coverage_unflagged_raw", "value": craw, "count": nfree,
                             "rel_width": 0.9})
                rows.append({**common, "metric": "coverage_unflagged_base", "value": 0.7, "count": nfree})
    return pd.DataFrame(rows)


def test_flag_summary_recomputed_from_the_rows():
    """Share flagged per cell, and the unflagged entries' coverage pooled over the cells with the
    SE of independent cells of repetition clusters — recomputed here by hand from the planted rows."""
    from ldpopt.experiments.coverage_report import cell_stats, flag_summary_markdown

    st = cell_stats(_planted_flags())
    assert sorted(100 * st["flagged"]) == [22.5, 90.0]              # (8 + 10)/20 and (5 + 4)/40
    md = flag_summary_markdown(st, min_count=10)
    row = [ln for ln in md.splitlines() if ln.startswith("| power | ge5sigma |")]
    assert len(row) == 1, md
    c = [x.strip() for x in row[0].strip("|").split("|")]
    assert c[2] == "22.5–90.0"
    # every entry: ε=1 (9 + 8)/20 = 85.0, ε=4 (19 + 17)/40 = 90.0; worst ε=1 with its cluster SE
    se1 = np.sqrt(10 ** 2 * (0.9 - 0.85) ** 2 + 10 ** 2 * (0.8 - 0.85) ** 2) / 20
    assert c[3] == "85.0–90.0" and c[4] == f"zipf OUE ε=1: **85.0** ↓ ± {100 * se1:.1f}"
    assert c[5] == "33"                                                # 2 + 15 + 16 unflagged entries
    # pooled unflagged, user's: (2·1 + 15·0.8 + 16·0.75)/33; SE: ε=1 one cluster (0), ε=4 two
    pooled = (2 * 1.0 + 15 * 0.8 + 16 * 0.75) / 33
    m4 = (15 * 0.8 + 16 * 0.75) / 31
    se = np.sqrt(15 ** 2 * (0.8 - m4) ** 2 + 16 ** 2 * (0.75 - m4) ** 2) / 33
    assert round(100 * pooled, 1) == 78.8 and c[6] == f"**78.8** ↓ ± {100 * se:.1f}"
    rpool = (2 * 0.5 + 15 * 0.6 + 16 * 0.75) / 33
    assert c[7].startswith(f"**{100 * rpool:.1f}** ↓")
    assert c[8] == "**70.0** ↓ ± 0.0"                                 # Base's on the same entries: 0.7 each
    # the least cell needs unflagged entries in >= 2 repetitions: only ε=4 qualifies
    assert c[9].startswith("zipf OUE ε=4: ") and c[9].endswith("(31)")
    assert c[10] == "1.00" and c[11] == "0.90" and c[12] == "2–2"
    strict = [ln for ln in flag_summary_markdown(st, min_count=32).splitlines() if ln.startswith("| power |")]
    assert strict[0].strip("|").split("|")[9].strip() == "–"          # 31 entries < 32: no least cell
    assert flag_summary_markdown(cell_stats(_planted())) == ""       # nothing flags: no table


def _stats():
    """Per-cell statistics of two methods in two cells, one band at two levels."""
    rows = []
    for eps, cov90, cov95 in ((1.0, 0.86, 0.93), (4.0, 0.91, 0.95)):
        for method in ("base-pos", "norm-sub"):
            for level, cov in ((0.9, cov90), (0.95, cov95)):
                rows.append(dict(experiment="x", dataset="zipf", oracle="oue", epsilon=eps, method=method,
                                 level=level, band="ge5sigma", coverage=cov + (0.01 if method == "norm-sub" and eps == 4
                                                                                  else 0.0),
                                 mcse=0.02, count=300, reps=100 if eps == 1 else 50,
                                 rel_width=1.0 if eps == 1 else 1.2))
    return pd.DataFrame(rows)


def test_failures_list_the_bands_under_the_bound_with_their_noise():
    from ldpopt.experiments.coverage_report import failures_markdown

    md = failures_markdown(_stats())
    lines = [ln for ln in md.splitlines() if ln.startswith("| x |")]
    # only ε=1 at 90 % is under 87 % (86.0); both methods share it; (0.86 − 0.87)/0.02 = 0.5 SE
    assert lines == ["| x | zipf OUE ε=1 | base-pos, norm-sub | ge5sigma | 90 | 86.0 ± 2.0 | 0.5 SE | 300 | 100 |"]
    assert failures_markdown(_stats(), min_reps=101) == ""            # 100 repetitions < 101
    s = _stats()
    assert failures_markdown(s.assign(coverage=s["level"] - 0.03)) == ""          # exactly 3 under: inside


def test_group_ranges_pool_cells_and_methods_never_bands():
    from ldpopt.experiments.coverage_report import group_summary_markdown

    st = pd.concat([_stats(), _stats().assign(band="sub-head", coverage=0.5)])
    md = group_summary_markdown(st, {"clipped": ["base-pos", "norm-sub"]})
    row = {ln.split("|")[1].strip(): [c.strip() for c in ln.strip("|").split("|")] for ln in md.splitlines()[2:]}
    assert row["ge5sigma"][2:5] == ["86.0–92.0", "93.0–96.0", "1.00–1.20"]
    assert row["ge5sigma"][5] == "zipf OUE ε=1 base-pos: **86.0** ↓ ± 2.0" and row["ge5sigma"][6] == "50–100"
    assert row["sub-head"][2] == "50.0–50.0"                            # its own row: bands never pooled
    with pytest.raises(ValueError, match="levels"):
        group_summary_markdown(st, {"clipped": ["base-pos"]}, levels=(0.8,))
