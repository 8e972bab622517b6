"""Do two trees give the same answers? Solve a grid of problems (objective × constraint family × d,
and the support certificate's large-d path) and keep every number: f, status, solver and duals of
``Problem.solve``, f, iterations, message and KKT residual of ``solve_structured``, and every
number of ``certificate``; Norm-Mul and the bootstrap / top-k intervals on it; then compare two such files with ``np.array_equal`` (NaN equal to NaN).
Run it under each tree, side by side:

    PYTHONPATH=OLD python benchmarks/same_answers.py dump old.pkl
    PYTHONPATH=NEW python benchmarks/same_answers.py dump new.pkl
    python benchmarks/same_answers.py compare old.pkl new.pkl
"""
import pickle
import sys
import warnings

import numpy as np

from ldpopt.estimate import Estimate
from ldpopt.problems import (
    Box,
    Fixed,
    Monotone,
    NonNegative,
    PartitionTotals,
    Problem,
    Simplex,
    SubsetSum,
    SumTo,
    range_tree,
)
from ldpopt.problems.check.certificate import certificate
from ldpopt.problems.solvers.structured import solve_structured


def oue(d, n, seed, eps=1.0, alpha=0.2):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    t = rng.dirichlet(np.full(d, alpha))
    return Estimate.from_counts(rng.binomial(n, q + (p - q) * t).astype(float), n, eps, p, q)


def grr(d, n, seed, eps=2.0, alpha=0.2):
    rng = np.random.default_rng(seed)
    p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    t = rng.dirichlet(np.full(d, alpha))
    return Estimate.from_counts(rng.multinomial(n, q + (p - q) * t).astype(float), n, eps, p, q)


def families(d):
    h = d // 2
    yield "simplex", None
    yield "box", [Simplex(), Box(upper=0.3)]
    yield "subset_eq", [Simplex(), SubsetSum(np.arange(h), 0.6)]
    yield "subset_le", [Simplex(), SubsetSum(np.arange(h), 0.2, "<=")]
    yield "subset_ge", [Simplex(), SubsetSum(np.arange(h), 0.9, ">=")]
    yield "two_disjoint", [Simplex(), SubsetSum(np.arange(5), 0.3), SubsetSum(np.arange(5, h), 0.5)]
    yield "partition", [Simplex(), PartitionTotals({"a": list(range(3)), "b": list(range(3, h))}, {"a": 0.2, "b": 0.5})]
    yield "overlap", [Simplex(), SubsetSum(np.arange(h), 0.6), SubsetSum(np.arange(h // 2, d), 0.7)]
    yield "fixed", [Simplex(), Fixed([0, 1], [0.1, 0.05])]
    yield "monotone", [Simplex(), Monotone()]
    yield "sumto", [NonNegative(), SumTo(2.0)]


def dump(path):
    out = {}
    warnings.simplefilter("ignore")
    for d in [12, 300, 5000]:
        for make in (oue, grr):
            est = make(d, 20000, d)
            for obj in ["cls", "weighted-mle", "binomial", "multinomial"]:
                if (obj == "binomial") != (make is oue) and obj in ("binomial", "multinomial"):
                    continue
                for name, cons in families(d):
                    key = (d, make.__name__, obj, name)
                    try:
                        s = Problem(est, obj, cons).solve()
                        rec = {"f": s.f, "status": s.status, "solver": s.solver,
                               "duals": {k: np.asarray(v) for k, v in sorted((s.duals or {}).items())}}
                        try:
                            r = solve_structured(est, obj, cons)
                            rec["structured"] = {"f": r.f, "it": dict(r.iterations), "msg": r.message, "kkt": r.kkt_residual,
                                                 "status": r.status}
                        except Exception as e:
                            rec["structured"] = repr(e)
                        try:
                            c = certificate(obj, cons, est, s.f)
                            rec["cert"] = {k: v for k, v in c.as_dict().items() if k != "violations"}
                        except Exception as e:
                            rec["cert"] = repr(e)
                    except Exception as e:
                        rec = {"error": repr(e)}
                    out[key] = rec
    # large d: the support certificate and its count grouping
    for make, obj in [(oue, "binomial"), (oue, "weighted-mle"), (grr, "multinomial"), (oue, "cls")]:
        d = 140000
        est = make(d, 10**6, 7)
        for name, cons in [("simplex", None), ("subset_eq", [Simplex(), SubsetSum(np.arange(100), 0.3)])]:
            s = Problem(est, obj, cons).solve()
            c = certificate(obj, cons, est, s.f)
            out[(d, make.__name__, obj, name)] = {"f": s.f, "status": s.status, "solver": s.solver,
                "duals": {k: np.asarray(v) for k, v in sorted((s.duals or {}).items())},
                "cert": {k: v for k, v in c.as_dict().items() if k != "violations"}}
    # a range tree
    t = range_tree(40, 3)
    est = oue(t.size, 20000, 3)
    for obj in ["cls", "weighted-mle", "binomial"]:
        s = Problem(est, obj, t.constraints()).solve()
        r = solve_structured(est, obj, t.constraints())
        out[(t.size, "oue", obj, "range_tree")] = {"f": s.f, "status": s.status, "solver": s.solver,
            "duals": {k: np.asarray(v) for k, v in sorted((s.duals or {}).items())},
            "structured": {"f": r.f, "it": dict(r.iterations), "msg": r.message, "kkt": r.kkt_residual}}
    # Norm-Mul (one row and a batch) and the bootstrap / top-k intervals built on its ratio pivot
    from ldpopt import methods
    from ldpopt.uncertainty import intervals
    from ldpopt.uncertainty.resample import apply_batch
    from ldpopt.uncertainty.topk import topk_query
    rng = np.random.default_rng(3)
    for d in [20, 500]:
        est = oue(d, 5000, d, eps=1.0, alpha=0.3)
        est = Estimate.from_counts(est.counts, est.n, est.epsilon, est.p, est.q, oracle="oue")
        F = rng.normal(0, 0.05, (7, d))
        F[0] = -1.0
        out[(d, "norm-mul")] = {"f": methods.get("norm-mul").func(est), "batch": apply_batch(est, "norm-mul", F)}
        for m in ["norm-mul", "base", "norm-sub"]:
            r = intervals(est, m, 0.9, n_resamples=50, rng=1)
            out[(d, "interval", m)] = {"lo": r.lo, "hi": r.hi, "se": r.se}
            for sel in ["calibrated", "hull"]:
                r = topk_query(est, m, 0.9, 5, n_resamples=50, rng=2, selection=sel)
                out[(d, "topk", m, sel)] = {"lo": r.lo, "hi": r.hi, "se": r.se,
                                            "level": float(r.extra.get("calibrated_level", -1))}
    pickle.dump(out, open(path, "wb"))
    return len(out)


def same(x, y):
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, (np.ndarray, float, np.floating)):
        return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)
    return x == y


def compare(pa, pb):
    a, b = (pickle.load(open(p, "rb")) for p in (pa, pb))
    assert a.keys() == b.keys()
    bad = [k for k in a if not same(a[k], b[k])]
    print(f"{len(a)} cases, {len(a) - len(bad)} bit-identical, {len(bad)} differ")
    for k in bad:
        for f in a[k]:
            if not same(a[k][f], b[k].get(f)):
                print("  ", k, f)
    print("cases that raised (the same in both):", sum(1 for k in a if "error" in a[k]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["dump"] and len(sys.argv) == 3:
        print(dump(sys.argv[2]), "cases")
    elif sys.argv[1:2] == ["compare"] and len(sys.argv) == 4:
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: same_answers.py dump OUT.pkl | compare A.pkl B.pkl")
