"""The per-report hash kernels (ldpopt.kernels.cpu_reports) against their numpy references, bit for
bit: OLH/BLH support sizes and suspect scores (``robust.support_sizes`` / ``robust.suspect_scores``
with device="numpy") and the maximal gain attack's key search (``robust.craft_reports`` with
device="numpy", the same key draws); g a power of two and not, g = 2, d not a multiple of the tile,
one candidate key, many; and the search against a brute force written here from the definition.
Small cases only: the kernels compile once per environment (cached on disk)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles, robust
from ldpopt.oracles.hashing import keyed_hash

pytest.importorskip("numba", reason="the per-report kernels need numba (the 'kernels' extra)")
from ldpopt import kernels  # noqa: E402

CASES = [("olh", 0.5, 300), ("olh", 1.0, 1), ("olh", 4.0, 1025), ("olh", 9.0, 70), ("blh", 1.0, 129)]


@pytest.mark.parametrize("name,eps,d", [c for c in CASES if c[2] > 1])
@pytest.mark.parametrize("seed", [0, 1])
def test_sizes_and_suspect_scores_equal_numpy(name, eps, d, seed):
    o = oracles.get(name, epsilon=eps, d=d)
    gen = np.random.default_rng(seed)
    rep = np.concatenate([o.perturb(gen.integers(0, d, 2500), gen),
                          robust.craft_reports(o, "mga", [0, 5, 9, d - 1], 300, gen)])
    ref = robust.support_sizes(o, rep, device="numpy")
    got = robust.support_sizes(o, rep, device="cpu")
    assert got.dtype == np.int64 and np.array_equal(got, ref)
    assert np.array_equal(ref, o.support_matrix(rep).sum(axis=1))
    sus = np.array([0, 3, 9, d - 1])
    assert np.array_equal(robust.suspect_scores(o, rep, sus, device="cpu"),
                          robust.suspect_scores(o, rep, sus, device="numpy"))


def test_row_counts_every_g_against_keyed_hash():
    gen = np.random.default_rng(5)
    keys = gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=1500, dtype=np.int64, endpoint=True)
    values = np.array([0, 1, 7, 7, 63, 1000, 2**40])  # a repeated value counts twice
    for g in (2, 3, 4, 56, 57, 1 << 20, (1 << 30) - 1):
        h = keyed_hash(keys[:, None], values[None, :], g)
        r = h[:, 2]  # every report supports value 7 (twice), others by collision
        want = (h == r[:, None]).sum(axis=1)
        got = kernels.hash_row_counts(keys, r, values, g, "cpu")
        assert np.array_equal(got, want), g
        assert np.all(got >= 2)


def _brute_search(keys, targets, g):
    """The definition, one user and key at a time: the first key with the largest bucket, the
    smallest bucket of that size."""
    out = []
    for row in keys:
        best = (-1, None, None)
        for s in row:
            h = keyed_hash(np.int64(s), targets, g)
            sizes = {b: int((h == b).sum()) for b in set(h.tolist())}
            top = max(sizes.values())
            if top > best[0]:
                best = (top, s, min(b for b, c in sizes.items() if c == top))
        out.append(best[1:])
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("g", [2, 3, 4, 56])
def test_key_search_equals_brute_force(g):
    gen = np.random.default_rng(g)
    keys = gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(40, 25), dtype=np.int64, endpoint=True)
    targets = np.array([2, 3, 11, 40, 41])
    k, b = kernels.best_bucket_keys(keys, targets, g, "cpu")
    assert np.array_equal(np.c_[k, b], _brute_search(keys, targets, g))


@pytest.mark.parametrize("name,eps,d", CASES[:1] + CASES[2:])
@pytest.mark.parametrize("candidates", [1, 9, 1000])
def test_mga_reports_equal_numpy(name, eps, d, candidates):
    o = oracles.get(name, epsilon=eps, d=d)
    t = np.arange(0, 60, 6)
    ref = robust.craft_reports(o, "mga", t, 250, np.random.default_rng(9), candidates=candidates, device="numpy")
    got = robust.craft_reports(o, "mga", t, 250, np.random.default_rng(9), candidates=candidates, device="cpu")
    assert np.array_equal(got, ref)


def test_bad_device_is_an_error_naming_it():
    o = oracles.get("olh", epsilon=1.0, d=16)
    rep = o.perturb(np.arange(16), 0)
    for call in (lambda: robust.support_sizes(o, rep, device="cuda"),
                 lambda: robust.suspect_scores(o, rep, [1], device="gpu"),
                 lambda: robust.craft_reports(oracles.get("oue", epsilon=1.0, d=16), "mga", [1], 5, 0, device="cuda")):
        with pytest.raises(ValueError, match="device"):
            call()
