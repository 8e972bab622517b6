"""benchmarks/compare_sweeps.py: the identical-tables check of issue 16 reports exact equality and
finds a single changed value."""

import importlib.util
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("compare_sweeps", ROOT / "benchmarks" / "compare_sweeps.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write(root: Path, name: str, df: pd.DataFrame) -> None:
    (root / name).mkdir(parents=True)
    df.to_parquet(root / name / "results.parquet")


def test_identical_and_changed_tables(tmp_path, capsys):
    cs = _load()
    df = pd.DataFrame({"oracle": ["oue", "hr", "hr"], "rep": [0, 0, 1], "method": ["base", "base", "power"],
                       "value": [0.5, 1.0, float("nan")]})
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, "same", df)
    _write(b, "same", df.iloc[::-1])                      # row order does not matter
    changed = df.copy()
    changed.loc[1, "value"] = 1.0 + 1e-12
    _write(a, "moved", df)
    _write(b, "moved", changed)
    _write(a, "only_a", df)
    assert cs.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "same: rows 3/3, unmatched keys 0, bit-identical 3/3\n" in out  # NaN = NaN counts as equal
    assert "moved: rows 3/3, unmatched keys 0, bit-identical 2/3; largest relative differences: hr/base 1e-12" in out
    assert "only_a: not in B" in out
