"""Are two sweeps' result tables identical? For every config folder of A that B also has,
merge the two ``results.parquet`` on every non-value column and compare the values exactly; print
rows, bit-identical rows, and for the rest the largest relative difference by oracle and method.

    python benchmarks/compare_sweeps.py RESULTS_A RESULTS_B
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd


def compare(a: Path, b: Path) -> str:
    A, B = pd.read_parquet(a), pd.read_parquet(b)
    if list(A.columns) != list(B.columns):
        return f"columns differ: {list(A.columns)} vs {list(B.columns)}"
    keys = [c for c in A.columns if c != "value"]
    m = A.merge(B, on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    unmatched = int((m["_merge"] != "both").sum())
    both = m[m["_merge"] == "both"]
    va, vb = both["value_a"].to_numpy(float), both["value_b"].to_numpy(float)
    same = (va == vb) | (np.isnan(va) & np.isnan(vb))
    line = f"rows {len(A)}/{len(B)}, unmatched keys {unmatched}, bit-identical {int(same.sum())}/{len(both)}"
    if not same.all():
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(va - vb) / np.maximum(np.abs(va), np.abs(vb))
        d = both[~same].assign(rel=rel[~same])
        by = [c for c in ("oracle", "method") if c in d]
        worst = d.groupby(by)["rel"].max().sort_values(ascending=False).head(8)
        line += "; largest relative differences: " + ", ".join(f"{'/'.join(map(str, k if isinstance(k, tuple) else (k,)))} {v:.2g}"
                                                             for k, v in worst.items())
    return line


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__)
        return 2
    a_root, b_root = map(Path, argv)
    for folder in sorted(p for p in a_root.iterdir() if (p / "results.parquet").exists()):
        other = b_root / folder.name / "results.parquet"
        print(f"{folder.name}: " + (compare(folder / "results.parquet", other) if other.exists() else "not in B"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
