"""The ``ext_poisoning`` experiment summarised: detection and recovery per attack × oracle × ε, mean ±
standard error over its repetitions (the tables of docs/poisoning.md, "The experiment").

``--results DIR`` reads a finished run (``DIR/results.parquet`` of ``ldpopt experiment run
ext_poisoning --out ROOT``, DIR = ROOT/ext_poisoning); without it the sweep is run here into a
temporary folder (``--quick``: the config's quick version, seconds; otherwise the full config,
hours on a shared 2-core machine). The experiment itself: experiments/configs/ext_poisoning.toml and
``ldpopt.experiments.task_kinds.poisoning``.

Per cell (attack, oracle, ε): detection — the AUC of the suspect-support score, the TPR and FPR of
flagging the reports that support every suspect, the fraction of suspects that are targets, the
size-test p-value (median, min and max: a p-value's mean says little); recovery — MSE and target
gain of every method (raw f̃, Norm-Sub, LDPRecover, RSN, mixture, lift), and for the mixture the
repetitions whose check was ``optimal``.

    python benchmarks/bench_poisoning_experiment.py [--quick] [--results DIR]

Writes ``results/poisoning_experiment.json`` and prints the markdown tables.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

DETECT = ("auc", "tpr", "fpr", "suspects-hit")
RECOVER = ("raw", "norm-sub", "ldprecover", "rsn", "mixture", "lift")


def _mean_se(x) -> dict:
    x = np.asarray(x, dtype=float)
    return {"mean": float(x.mean()), "se": float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else None, "n": int(x.size)}


def summarise(table, meta: dict) -> list[dict]:
    """One row per (attack, oracle, ε): the module docstring's numbers."""
    rows = []
    order = {o: i for i, o in enumerate(meta["config"]["oracles"])}
    for (attack, oracle, eps), t in sorted(table.groupby(["attack", "oracle", "epsilon"], observed=True),
                                           key=lambda kv: (kv[0][0] != "mga", order.get(kv[0][1], 99), kv[0][2])):
        row = {"attack": attack, "oracle": oracle, "epsilon": float(eps), "reps": int(t.rep.nunique())}
        det = t[t.method == "detect"]
        for m in DETECT:
            v = det[det.metric == m].value
            if len(v):
                row[m] = _mean_se(v)
        p = det[det.metric == "size-test-p"].value
        if len(p):
            row["size-test-p"] = {"median": float(p.median()), "min": float(p.min()), "max": float(p.max()), "n": int(len(p))}
        for m in RECOVER:
            r = t[t.method == m]
            if len(r):
                row[m] = {"mse": _mean_se(r[r.metric == "mse"].value), "gain": _mean_se(r[r.metric == "gain"].value)}
                if m == "mixture":
                    row[m]["optimal"] = int((r[r.metric == "mse"].status == "optimal").sum())
        rows.append(row)
    return rows


def _pm(c, fmt="{:.3f}", se_fmt=None) -> str:
    return fmt.format(c["mean"]) + ("" if c["se"] is None else " ± " + (se_fmt or fmt.replace("+", "")).format(c["se"]))


def _e(c) -> str:
    return f"{c['mean']:.2e}" + ("" if c["se"] is None else f" ± {c['se']:.1e}")


def _bold_best(texts: list[str], keys: list[float]) -> list[str]:
    """Bold the cells whose printed value equals the best one's (ties shown as ties)."""
    best = texts[int(np.argmin(keys))].split(" ± ")[0]
    return [f"**{t}**" if t.split(" ± ")[0] == best else t for t in texts]


def markdown(rows: list[dict]) -> str:
    """The tables of docs/poisoning.md: detection, recovery MSE, target gain."""
    out = ["| attack | oracle | ε | AUC | TPR (flag: supports every suspect) | FPR | suspects that are targets | "
           "size-test p: median (min–max) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        p = r.get("size-test-p")
        ptxt = "— (fixed size)" if r["oracle"] == "grr" else f"{p['median']:.2g} ({p['min']:.2g}–{p['max']:.2g})"
        out.append(f"| {r['attack']} | {r['oracle'].upper()} | {r['epsilon']:g} | {_pm(r['auc'], '{:.4f}')} | {_pm(r['tpr'])} | "
                   f"{_pm(r['fpr'], '{:.4f}')} | {_pm(r['suspects-hit'], '{:.2f}')} | {ptxt} |")
    methods = RECOVER[1:]
    out += ["", "| attack | oracle | ε | " + " | ".join(methods) + " |", "|" + " --- |" * (3 + len(methods))]
    for r in rows:
        cells = _bold_best([_e(r[m]["mse"]) for m in methods], [r[m]["mse"]["mean"] for m in methods])
        out.append(f"| {r['attack']} | {r['oracle'].upper()} | {r['epsilon']:g} | " + " | ".join(cells) + " |")
    out += ["", "| attack | oracle | ε | raw f̃ | " + " | ".join(methods) + " |", "|" + " --- |" * (4 + len(methods))]
    for r in rows:
        cells = _bold_best([_pm(r[m]["gain"], "{:+.3f}") for m in methods], [abs(r[m]["gain"]["mean"]) for m in methods])
        out.append(f"| {r['attack']} | {r['oracle'].upper()} | {r['epsilon']:g} | {_pm(r['raw']['gain'], '{:+.3f}')} | "
                   + " | ".join(cells) + " |")
    return "\n".join(out)


def run(quick: bool = False, **opts) -> dict:
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    import pandas as pd

    if a.results:
        folder = Path(a.results)
        a.command = "python benchmarks/bench_poisoning_experiment.py --results DIR" + (" --quick" if a.quick else "")
        table, meta = pd.read_parquet(folder / "results.parquet"), json.loads((folder / "meta.json").read_text())
    else:
        from ldpopt.experiments import runner

        with tempfile.TemporaryDirectory() as tmp:
            table = runner.run("ext_poisoning", quick=a.quick, out=tmp, progress=False)
            folder = Path(tmp) / ("ext_poisoning" + ("-quick" if a.quick else ""))
            meta = json.loads((folder / "meta.json").read_text())
    rows = summarise(table, meta)
    print(markdown(rows))
    cfg = dict(meta["config"])
    if "source" in cfg:  # the config file, named relative to the repository (not this machine's path)
        src = Path(cfg["source"]).resolve()
        cfg["source"] = str(src.relative_to(HERE.parent)) if src.is_relative_to(HERE.parent) else src.name
    return H.save("poisoning_experiment", a, {"config": cfg, "created": meta.get("created"), "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--results", default=None, help="a finished run's folder (ROOT/ext_poisoning); default: run it here")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
