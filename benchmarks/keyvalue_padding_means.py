"""PCKV's mean estimates when users hold more keys than the padding length ℓ: each of a user's keys
is sampled with probability 1/max(|S|, ℓ), so a key's estimated mean is the mean of its holders'
values weighted by 1/max(|S|, ℓ) — users with more keys count less — not their plain mean. No
estimator can undo it: the reports carry no set size, and two populations with the same weighted
sums but different plain means give the same report law (tests/test_keyvalue_padding.py holds one
such pair).

Setting: d = 8, n = 40,000, ε = 4; every user holds key 0; half the users hold it alone with value
+0.8, the other half hold it among 4 keys with value −0.8 (their other keys uniform values): key 0's
true mean is 0, its 1/max(|S|, ℓ)-weighted mean 0.48 at ℓ = 1, 0.267 at ℓ = 2, 0 at ℓ ≥ 4.
PCKV-UE and PCKV-GRR, the paper's estimator (Eqs. 13–15) and the consistent one
(``keyvalue.solve_consistent``); 10 repetitions, mean ± SE.

Run: ``python benchmarks/keyvalue_padding_means.py``; writes benchmarks/results/keyvalue_padding_means.md.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from ldpopt import keyvalue as kv

REPS = 10
N, D, EPS, V = 40_000, 8, 4.0, 0.8


def data(rng) -> kv.KVData:
    """Half the users hold key 0 alone (value +V), half hold it among 4 keys (value −V)."""
    half = N // 2
    many = np.concatenate([np.concatenate(([0], 1 + rng.permutation(D - 1)[:3])) for _ in range(N - half)])
    keys = np.concatenate([np.zeros(half, dtype=np.int64), many])
    vals = np.concatenate([np.full(half, V), rng.uniform(-1, 1, many.size)])
    vals[half::4] = -V  # key 0 of the 4-key users
    sizes = np.concatenate([np.ones(half, dtype=np.int64), np.full(N - half, 4)])
    return kv.KVData(np.concatenate([[0], np.cumsum(sizes)]), keys, vals, D)


def weighted(ell: int) -> float:
    w1, w4 = 1.0 / max(1, ell), 1.0 / max(4, ell)
    return (w1 * V - w4 * V) / (w1 + w4)


def main() -> None:
    rows = ["| protocol | ℓ | key 0's true mean | weighted by 1/max(\\|S\\|, ℓ) | paper's estimate | consistent estimate | PaddingWarning names means |",
            "|---|---|---|---|---|---|---|"]
    d0 = data(np.random.default_rng(1))
    assert abs(d0.means()[0]) < 1e-12
    for make in (kv.pckv_ue, kv.pckv_grr):
        for ell in (1, 2, 4):
            proto = make(EPS, D, ell)
            gen = np.random.default_rng(2)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                counts = [proto.sample_counts(d0, rng=gen) for _ in range(REPS)]
            named = any(issubclass(x.category, kv.PaddingWarning) and "mean" in str(x.message) for x in w)
            a = np.array([proto.estimate(c, N).mean[0] for c in counts])
            b = np.array([kv.solve_consistent(proto, c, N).mean[0] for c in counts])
            se = lambda x: x.std(ddof=1) / np.sqrt(REPS)
            rows.append(f"| {proto.name} | {ell} | 0 | {weighted(ell):+.3f} | {a.mean():+.3f} ± {se(a):.3f} "
                        f"| {b.mean():+.3f} ± {se(b):.3f} | {'yes' if named else 'no (no user above ℓ)'} |")
    text = ("# PCKV's means when users hold more keys than ℓ\n\n`python benchmarks/keyvalue_padding_means.py`: "
            f"d = {D}, n = {N:,}, ε = {EPS:g}; half the users hold key 0 alone (value +{V}), half among 4 keys "
            f"(value −{V}); {REPS} repetitions, mean ± SE.\n\n" + "\n".join(rows) + "\n")
    out = Path(__file__).resolve().parent / "results" / "keyvalue_padding_means.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
