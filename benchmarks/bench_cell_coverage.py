"""Coverage of every released cell's interval, per band, for flat histograms, trees and marginals under
a local oracle, central Laplace and central Gaussian noise, on generated and real inputs.

Structures (truth fixed per structure, the noise re-drawn ``--reps`` times):

* flat — generated: 512 values, 25 % of them empty, the rest Zipf(1.1), n = 10⁵; real: the 244
  countries' populations of ``datasets.world_cities()`` (3.9·10⁹ people). Releases: ``base`` (exact
  SE, normal interval) and ``norm-sub`` (the parametric bootstrap through the oracle's or mechanism's
  sampler with Base's interval at the flagged cells and the hull elsewhere: ``uncertainty.intervals``).
  Table: ``uncertainty.intervals(est, release).cells()``.
* tree — generated: a range tree of 1,024 leaves, fan-out 8, the same sparse Zipf leaves (n = 10⁵);
  real: world-cities (37,051 nodes). Releases: ``gls`` (exact) and ``gls-clip-round`` (leaves rounded
  and clipped at 0, the bootstrap through the noise source's own sampler, hulled with the GLS's
  interval): ``hierarchy.tree_cells``. Local noise: users split over the levels, OUE at ε per level
  (``bench_hierarchy_gls.Measure``).
* marginal — generated: the 2-way marginals of a chain network (5 attributes of 8 values, each copying
  its parent with probability 0.95, so that some pairs are rare; n = 5·10⁴);
  real: the 2-way marginals of the 6 most frequent items of the shipped retail transactions (88,162
  users). Releases: ``linear`` (the linear consistency, exact SE) and ``calm`` (CALM's steps, the
  bootstrap through each marginal's sampler, hulled): ``multi.marginal_cells``. Local: CALM-style
  collection (each user one marginal, OUE).

Noise: local OUE at ε = ``--epsilon`` (default 1); central Laplace b = 20 and Gaussian σ = 20 (counts).
Bands: each cell's true value t against its noise σ at the truth: near zero t < σ, small σ ≤ t < 10σ,
large t ≥ 10σ. Measured: per draw, the share of the band's cells whose nominal 95 % interval holds the
truth; mean over draws, SE = SD over draws / √draws (cells within one draw are correlated; draws are
independent). Exact releases ``--reps`` draws, bootstrapped ones ``--boot-reps`` draws × ``--resamples``;
for the exact ones also the median over the band's cells of the release's SD over draws / its mean SE.

Run: ``python benchmarks/bench_cell_coverage.py [--quick] [--reps R] [--boot-reps R] [--resamples B]
[--structures flat,tree,marginal]``. Writes ``cell_coverage.json`` and ``cell_coverage.md``.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

NOISES = ("local", "laplace", "gaussian")
SCALE = 20.0
LEVEL = 0.95


def _bands(truth, sigma) -> dict:
    """The cells of each band; a cell known exactly (σ = 0: the local tree's public root) in none."""
    s = np.asarray(sigma, dtype=np.float64)
    r = np.asarray(truth, dtype=np.float64) / np.where(s > 0, s, 1.0)
    return {"near zero (t < σ)": (s > 0) & (r < 1), "small (σ ≤ t < 10σ)": (s > 0) & (r >= 1) & (r < 10),
            "large (t ≥ 10σ)": (s > 0) & (r >= 10)}


def _sparse_zipf(d: int, n: int, rng) -> np.ndarray:
    from ldpopt.datasets import zipf_probabilities

    p = rng.permutation(zipf_probabilities(d, 1.1))
    p[rng.random(d) < 0.25] = 0.0
    return rng.multinomial(n, p / p.sum())


class Tally:
    """Per release and band: the coverage share of each draw (and the widths in units of σ)."""

    def __init__(self):
        self.share: dict = {}
        self.width: dict = {}
        self.points: dict = {}

    def add(self, release, bands, lo, hi, truth, sigma, point=None, se=None):
        if point is not None:                       # the exact releases: the SE against the SD over draws
            self.points.setdefault(release, []).append((np.asarray(point, dtype=np.float64),
                                                        np.asarray(se, dtype=np.float64)))
        inside = (lo <= truth) & (truth <= hi)
        w = (hi - lo) / np.where(sigma > 0, sigma, 1.0)
        for b, mask in bands.items():
            if mask.any():
                self.share.setdefault((release, b), []).append(float(inside[mask].mean()))
                self.width.setdefault((release, b), []).append(float(np.median(w[mask])))

    def sd_over_se(self, release, mask) -> float:
        """Median over the band's cells of the SD of the release over draws / its mean SE."""
        got = self.points.get(release)
        if not got or len(got) < 3 or not mask.any():
            return math.nan
        x = np.stack([p for p, _ in got])[:, mask]
        se = np.stack([s for _, s in got])[:, mask].mean(axis=0)
        ok = se > 0
        return float(np.median(x[:, ok].std(axis=0, ddof=1) / se[ok])) if ok.any() else math.nan

    def rows(self, base: dict, bands: dict) -> list[dict]:
        out = []
        for (release, b), v in self.share.items():
            a = np.asarray(v)
            out.append({**base, "release": release, "band": b, "cells": int(bands[b].sum()), "nominal": LEVEL,
                        "measured": float(a.mean()),
                        "se": float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan,
                        "draws": int(a.size), "median_width_over_sigma": float(np.median(self.width[(release, b)])),
                        "sd_over_se": self.sd_over_se(release, bands[b])})
        return out


# --- flat -----------------------------------------------------------------------------------------

def _flat_estimate(counts, noise, eps, rng):
    import ldpopt
    from ldpopt import Estimate
    from ldpopt.privacy import central

    if noise == "local":
        return ldpopt.oracles.get("oue", eps, counts.size).simulate(counts, rng=rng)
    noisy = counts + central.get(noise).sample(counts.size, SCALE, rng)
    return Estimate.from_central(noisy, noise, SCALE, n=int(counts.sum()))


def flat(a, rng0) -> list[dict]:
    from ldpopt.datasets import world_cities
    from ldpopt.hierarchy import Tree
    from ldpopt.uncertainty import intervals

    cases = [("generated", _sparse_zipf(128 if a.quick else 512, 10**5, rng0))]
    if not a.quick:
        ds = world_cities()
        tree = Tree(ds.meta["parent"])
        c = np.zeros(tree.size)
        c[tree.leaves] = ds.counts
        tot = tree.node_totals(c)
        countries = np.flatnonzero(tree.parent == int(np.flatnonzero(tree.parent < 0)[0]))
        cases.append(("world-cities countries", tot[countries].astype(np.int64)))
    rows = []
    for source, counts in cases:
        n = int(counts.sum())
        truth = counts / n
        for noise in a.noises.split(","):
            rng = np.random.default_rng(zlib.crc32(f"flat|{source}|{noise}".encode()))
            t0 = time.perf_counter()
            tally = Tally()
            sigma = bands = None
            for r in range(a.reps):
                est = _flat_estimate(counts, noise, a.epsilon, rng)
                if sigma is None:
                    sigma = np.sqrt(est.variance(truth))
                    bands = _bands(truth, sigma)
                for release in ("base", "norm-sub"):
                    if release == "norm-sub" and r >= a.boot_reps:
                        continue
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tab = intervals(est, release, LEVEL, n_resamples=a.resamples, rng=rng).cells()
                    tally.add(release, bands, tab["ci_low"].to_numpy(), tab["ci_high"].to_numpy(), truth, sigma,
                              *((tab["estimate"].to_numpy(), tab["se"].to_numpy()) if release == "base" else ()))
            rows += tally.rows({"structure": "flat", "source": source, "cells_total": int(counts.size), "n": n,
                                "noise": noise}, bands)
            print(f"  flat {source} {noise}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


# --- tree -----------------------------------------------------------------------------------------

def tree(a, rng0) -> list[dict]:
    from bench_hierarchy_gls import Measure, _redraw

    from ldpopt.datasets import world_cities
    from ldpopt.hierarchy import Tree, central_sampler, clip_round, gls, tree_cells
    from ldpopt.problems import range_tree

    rt = Tree(range_tree(256 if a.quick else 1_024, 8).parent)
    leaves = np.zeros(rt.size, dtype=np.int64)
    leaves[rt.leaves] = _sparse_zipf(rt.leaves.size, 10**5, rng0)
    cases = [("generated range tree", rt, leaves)]
    if not a.quick:
        ds = world_cities()
        wt = Tree(ds.meta["parent"])
        wl = np.zeros(wt.size, dtype=np.int64)
        wl[wt.leaves] = ds.counts
        cases.append(("world-cities", wt, wl))
    rows = []
    for source, t, counts in cases:
        truth = t.node_totals(counts.astype(np.float64))
        for noise in a.noises.split(","):
            m = Measure(t, noise, scale=SCALE, epsilon=a.epsilon)
            rng = np.random.default_rng(zlib.crc32(f"tree|{source}|{noise}".encode()))
            t0 = time.perf_counter()
            tally = Tally()
            sigma = bands = None
            for r in range(a.reps):
                y, var = m.draw(counts, rng)
                if sigma is None:
                    sigma = np.sqrt(var)
                    bands = _bands(truth, sigma)
                tab = gls(t, y, var).cells(LEVEL)
                tally.add("gls", bands, tab["ci_low"].to_numpy(), tab["ci_high"].to_numpy(), truth, sigma,
                          tab["estimate"].to_numpy(), tab["se"].to_numpy())
                if r < a.boot_reps:
                    if noise == "local":
                        world = clip_round(t, gls(t, y, var).x)

                        def sampler(B, g, world=world, m=m):
                            return _redraw(m, world, B, g)
                    else:
                        sampler = central_sampler(noise, SCALE, t.size)
                    bt = tree_cells(t, y, var, "gls-clip-round", LEVEL, n_resamples=a.resamples, rng=rng,
                                    sampler=sampler)
                    tally.add("gls-clip-round", bands, bt["ci_low"].to_numpy(), bt["ci_high"].to_numpy(), truth,
                              sigma)
            rows += tally.rows({"structure": "tree", "source": source, "cells_total": int(t.size),
                                "n": int(truth.max()), "noise": noise}, bands)
            print(f"  tree {source} {noise}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


# --- marginals ------------------------------------------------------------------------------------

def _marginal_estimate(data, attrs, noise, eps, rng):
    from ldpopt import Estimate, multi
    from ldpopt.privacy import central

    if noise == "local":
        return multi.calm(data.domains, eps, attrs=attrs, oracle="oue").simulate(data, rng=rng)
    ms = multi.MarginalSet(data.domains, attrs)
    ests = []
    for at in ms.attrs:
        c = np.rint(data.marginal(at) * data.n)
        ests.append(Estimate.from_central(c + central.get(noise).sample(c.size, SCALE, rng), noise, SCALE, n=data.n))
    return multi.MarginalEstimates(ms, tuple(ests), "central", 1.0, 1.0, data.n)


def marginal(a, rng0) -> list[dict]:
    from ldpopt import multi

    cases = [("generated chain network", multi.chain_network(50_000, 4 if a.quick else 5, 8, strength=0.95, rng=1),
              multi.all_k_way(4 if a.quick else 5, 2))]
    if not a.quick:
        cases.append(("retail items", multi.item_presence("retail", top=6), multi.all_k_way(6, 2)))
    rows = []
    for source, data, attrs in cases:
        truth = np.concatenate([data.marginal(at) for at in attrs])
        for noise in a.noises.split(","):
            rng = np.random.default_rng(zlib.crc32(f"marginal|{source}|{noise}".encode()))
            t0 = time.perf_counter()
            tally = Tally()
            sigma = bands = None
            for r in range(a.reps):
                est = _marginal_estimate(data, attrs, noise, a.epsilon, rng)
                if sigma is None:
                    sigma = np.sqrt(np.concatenate([e.variance(f) for e, f in zip(est.estimates, est.marginals.split(truth))]))
                    bands = _bands(truth, sigma)
                tab = multi.marginal_cells(est, "linear", LEVEL)
                tally.add("linear", bands, tab["ci_low"].to_numpy(), tab["ci_high"].to_numpy(), truth, sigma,
                          tab["estimate"].to_numpy(), tab["se"].to_numpy())
                if r < a.boot_reps:
                    bt = multi.marginal_cells(est, "calm", LEVEL, n_resamples=a.resamples, rng=rng)
                    tally.add("calm", bands, bt["ci_low"].to_numpy(), bt["ci_high"].to_numpy(), truth, sigma)
            rows += tally.rows({"structure": "marginal", "source": source, "cells_total": int(truth.size),
                                "n": int(data.n), "noise": noise}, bands)
            print(f"  marginal {source} {noise}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


# --- report ---------------------------------------------------------------------------------------

def markdown(doc: dict) -> str:
    lines = ["# Coverage of every released cell's interval, per band", "",
             (f"Command: `{doc['command']}`; machine: {doc['machine'].get('cpu', '')}. Nominal {LEVEL}; measured: "
              "mean over draws of the share of the band's cells covered ± SE over draws (draws: how many; "
              "cells: how many fall in the band). Bands: true value t against the cell's noise σ."), "",
             "| structure | input | noise | release | band | cells | measured ± SE | draws | median width / σ | SD / SE (exact) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(f"| {r['structure']} | {r['source']} | {r['noise']} | {r['release']} | {r['band']} | {r['cells']} "
                     f"| {r['measured']:.3f} ± {r['se']:.3f} | {r['draws']} | {r['median_width_over_sigma']:.2f} "
                     f"| {'–' if math.isnan(r['sd_over_se']) else format(r['sd_over_se'], '.3f')} |")
    return "\n".join(lines) + "\n"


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--structures", default="flat,tree,marginal", help="comma-separated: flat, tree, marginal")
    ap.add_argument("--reps", type=int, default=100, help="draws for the exact releases (default 100)")
    ap.add_argument("--boot-reps", type=int, default=20, help="draws for the bootstrapped releases (default 20)")
    ap.add_argument("--resamples", type=int, default=100, help="bootstrap resamples per draw (default 100)")
    ap.add_argument("--epsilon", type=float, default=1.0, help="the local oracle's epsilon (default 1)")
    ap.add_argument("--noises", default=",".join(NOISES), help="comma-separated: local, laplace, gaussian")
    ap.add_argument("--name", default="cell_coverage", help="the results files' name (default cell_coverage)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_cell_coverage.py", quick, opts)
    if a.quick:
        a.reps, a.boot_reps, a.resamples = 4, 2, 20
    rng0 = np.random.default_rng(2026)
    work = {"flat": flat, "tree": tree, "marginal": marginal}
    rows = []
    for s in a.structures.split(","):
        if s not in work:
            raise SystemExit(f"--structures: unknown {s!r}; have {list(work)}")
        rows += work[s](a, rng0)
    doc = H.save(a.name, a, {"rows": rows})
    (H.results_dir(a) / f"{a.name}.md").write_text(markdown(doc))
    return doc


if __name__ == "__main__":
    H.cli(parser(), run)
