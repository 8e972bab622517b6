"""``ldpopt.choose`` over rounds returns the safe choice: on generated drift patterns its pick's
expected MSE is within 1.2× of the best candidate's, or it says it cannot tell; the plausible drifts
it re-simulates cover the real drift; the upper bound of the worst ratio against a direct computation.
The larger run: benchmarks/bench_choose_patterns.py."""

import math
import warnings

import numpy as np
from conftest import examples

import ldpopt
from ldpopt import methods
from ldpopt.multi.drift import Z_PLAUSIBLE, drift_rounds, plausible_weights, rounds_drift, sample_drift_rounds
from ldpopt.multi.rounds import ACROSS, rounds_problem
from ldpopt.oracles.longitudinal import LGRR, LOSUE
from ldpopt.recommend import TELL_RATIO, _worst_upper


def _values(f, tau, n, direction, rho, gen):
    """Users' values over τ rounds: the movers go to the rarest value (rising), leave the top value
    (falling), or are re-drawn from f (permuted)."""
    d = f.size
    V = np.empty((tau, n), dtype=np.int64)
    V[0] = gen.choice(d, size=n, p=f)
    for t in range(1, tau):
        V[t] = V[t - 1]
        if direction == "rising":
            V[t, gen.random(n) < rho] = int(np.argmin(f))
        elif direction == "falling":
            moved = (V[t] == int(np.argmax(f))) & (gen.random(n) < rho)
            V[t, moved] = gen.integers(0, d, size=int(moved.sum()))
        elif direction == "permuted":
            moved = gen.random(n) < rho
            V[t, moved] = gen.choice(gen.permutation(d), size=int(moved.sum()), p=f)
    return V


def _mse_all(ests, truths, o, names):
    out = []
    for m in names:
        if m in ACROSS:
            coupling, lam = ACROSS[m]
            F = rounds_problem(ests, o, coupling=coupling, smooth=lam).solve().f.reshape(len(ests), -1)
        else:
            F = np.stack([methods.postprocess(e, m) for e in ests])
        out.append(float(np.mean((F - truths) ** 2)))
    return np.array(out)


def test_pick_within_tolerance_or_cannot_tell_on_generated_patterns():
    """Generated patterns (shape Dirichlet(α), α drawn; direction, drift share, oracle drawn): over 3
    collections of each, every candidate's expected MSE is its mean real MSE; each pick is within
    1.2× of the best (up to 2 paired SEs of the estimate) or ``cannot_tell`` is set, the warning says
    so, and the pick is the candidate with the smallest worst ratio in the table."""
    gen = np.random.default_rng(2024)
    tau, d, n, K = 3, 6, 3000, 3
    for case in range(examples(2)):
        f = gen.dirichlet(np.full(d, gen.choice([0.3, 1.0, 5.0])))
        direction = str(gen.choice(["none", "rising", "falling", "permuted"]))
        rho = float(gen.choice([0.05, 0.1, 0.3]))
        o = (LGRR if gen.random() < 0.5 else LOSUE)(4.0, d, eps_1=2.0)
        rows, picks, flags = [], [], []
        for k in range(K):
            V = _values(f, tau, n, direction, rho, gen)
            C = o.clients(n, gen).rounds(V, gen)
            truths = np.stack([np.bincount(v, minlength=d) / n for v in V])
            ests = [o.estimate(c, n) for c in C]
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                ch = ldpopt.choose(ests, longitudinal=o, n_repeats=2, rng=k)
            names = list(ch.table.index)
            rows.append(_mse_all(ests, truths, o, sorted(names)))
            picks.append(sorted(names).index(ch.best))
            flags.append(ch.cannot_tell)
            assert ch.best == ch.table["worst"].idxmin() and ch.table["worst"].iloc[0] >= 1.0
            assert ch.cannot_tell == (ch.table["worst_upper"].iloc[0] > TELL_RATIO)
            assert ch.cannot_tell == any("cannot tell which candidate" in str(x.message) for x in w)
        M = np.array(rows)  # (K, methods)
        risk = M.mean(axis=0)
        b = int(risk.argmin())
        for p, flag in zip(picks, flags):
            diff = M[:, p] - TELL_RATIO * M[:, b]
            se = diff.std(ddof=1) / math.sqrt(K)
            assert flag or diff.mean() <= 2.0 * se, (case, direction, rho, o.label, p, risk[p] / risk[b])


def _deviation(G):
    return float(np.sum((G - G.mean(axis=0)) ** 2))


def test_most_drift_world_covers_the_real_drift():
    """Rounds drawn with a drift (a linear trend or random moves between values, users keeping their
    value otherwise): the most-drift bound, deviation_excess + Z·deviation_se, is at least the true
    Σ_t‖g_t − ḡ‖² in ≥ 90 % of 150 collections (nominal 97.7 %); the least and the most drift worlds'
    rounds (on the simplex) deviate from their mean by the excess ∓ Z·se (0 below 0)."""
    o = LOSUE(2.0, 8, eps_1=1.0)
    gen = np.random.default_rng(7)
    n, tau = 20_000, 4
    base = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])
    covered = 0
    for i in range(150):
        if i % 2:
            step = np.zeros(8)
            step[0], step[7] = -0.004, 0.004
            g = np.stack([base + t * step for t in range(tau)])
        else:
            g = np.stack([base] + [gen.dirichlet(base * 2000) for _ in range(tau - 1)])
        pops = np.floor(g * n).astype(np.int64)
        pops[:, 0] += n - pops.sum(axis=1)
        true = _deviation(pops / n)
        ests = [o.estimate(c, n) for c in sample_drift_rounds(o, pops, gen)]
        dr = rounds_drift(ests, o)
        bound = dr["deviation_excess"] + Z_PLAUSIBLE * dr["deviation_se"]
        covered += bound >= true
        if i < 20:
            for w, e in zip(plausible_weights(ests, dr), (dr["deviation_excess"] - Z_PLAUSIBLE * dr["deviation_se"],
                                                        bound)):
                G = drift_rounds(ests, w)
                assert np.allclose(G.sum(axis=1), 1.0) and (G >= 0).all()
                assert math.isclose(_deviation(G), max(e, 0.0), rel_tol=1e-6, abs_tol=1e-12)
    assert covered >= 135


def test_plausible_weights_on_generated_rounds():
    """Generated rounds and deviation statistics (any excess and se): the weights are ordered, 0 for a
    target ≤ 0, and the projected rounds deviate by the target, or w is at its cap 2⁸ below it; a bad
    ``z`` or statistic is refused."""
    o = LGRR(2.0, 6, eps_1=1.0)
    gen = np.random.default_rng(3)
    for _ in range(60):
        pop = gen.multinomial(3000, gen.dirichlet(np.ones(6)))
        ests = [o.estimate(c, 3000) for c in o.sample_rounds(pop, int(gen.integers(2, 5)), gen)]
        dev = _deviation(np.stack([e.f_tilde for e in ests]))
        stat = {"deviation_excess": gen.uniform(-1.0, 2.0) * dev, "deviation_se": gen.uniform(0.0, 0.5) * dev}
        lo, hi = plausible_weights(ests, stat)
        assert 0.0 <= lo <= hi <= 2.0 ** 8
        for w, e in ((lo, stat["deviation_excess"] - 2 * stat["deviation_se"]),
                     (hi, stat["deviation_excess"] + 2 * stat["deviation_se"])):
            if e <= 0:
                assert w == 0.0
            elif w < 2.0 ** 8:
                assert math.isclose(_deviation(drift_rounds(ests, w)), e, rel_tol=1e-6)
            else:
                assert _deviation(drift_rounds(ests, w)) < e
    for bad in (-1.0, float("nan"), True):
        try:
            plausible_weights(ests, stat, bad)
        except ValueError as err:
            assert "z must be" in str(err)
        else:
            raise AssertionError(bad)
    try:
        plausible_weights(ests, {"deviation_se": 1.0})
    except ValueError as err:
        assert "deviation_excess" in str(err)
    else:
        raise AssertionError("a statistic without deviation_excess was taken")


def test_worst_upper_against_a_direct_computation():
    """Generated losses (methods, worlds, R): the bound is ≥ the plain worst ratio, 1 for a method
    best in every world, and equals a loop-by-loop delta-method computation."""
    gen = np.random.default_rng(5)
    for _ in range(50):
        m, w, R = gen.integers(2, 6), gen.integers(1, 4), gen.integers(3, 9)
        L = gen.gamma(2.0, 1.0, size=(m, w, R)) * gen.uniform(0.5, 2.0, size=(m, 1, 1))
        up = _worst_upper(L)
        M = L.mean(axis=2)
        ref = np.empty(m)
        for i in range(m):
            vals = []
            for j in range(w):
                bj = int(np.argmin(M[:, j]))
                x = [L[i, j, r] / M[i, j] - L[bj, j, r] / M[bj, j] for r in range(R)]
                vals.append(M[i, j] / M[bj, j] * math.exp(2.0 * np.std(x, ddof=1) / math.sqrt(R)))
            ref[i] = max(vals)
        assert np.allclose(up, ref, rtol=1e-12)
        assert (up >= (M / M.min(axis=0)).max(axis=1) - 1e-12).all()
    L = np.ones((2, 2, 4))
    L[1] += 1.0
    assert _worst_upper(L)[0] == 1.0


def test_constant_users_still_smooth_without_a_flag():
    """Users keeping their value (exact joint law), a drift too small to matter: the λ = 10 smoothing
    is the safe choice in every plausible world and nothing is flagged."""
    o = LOSUE(4.0, 16, eps_1=2.0)
    w = 1.0 / np.arange(1, 17) ** 1.2
    pop = np.random.default_rng(0).multinomial(20_000, w / w.sum())
    ests = [o.estimate(c, 20_000) for c in o.sample_rounds(pop, 4, rng=1)]
    assert rounds_drift(ests, o)["status"] == "none"
    ch = ldpopt.choose(ests, longitudinal=o, n_repeats=4, rng=0)
    assert ch.best == "rounds-shared-smooth" and not ch.cannot_tell and ch.drift["worlds"] >= 2


def test_sparse_support_on_generated_rounds():
    """Rounds of users keeping their value (exact joint law) on generated laws: where the mass sits on
    k values well above the noise and nobody holds the rest, the support is those k values in at
    least 34 of 40 draws (nominal about 95 %: α = 0.05 zeros pass, and the sum's 3-SD margin; 37–38
    of 40 on five other seeds; 34 is 3 binomial SDs under 38); a law whose
    smallest values hold a visible share of the mass (flat, or a heavy tail) rules the sparse world
    out in at least 38 of 40; the sparse world's rounds sum to 1 on the support, 0 elsewhere; bad
    ``alpha`` and ``z`` are refused."""
    from ldpopt.multi.drift import sparse_support

    gen = np.random.default_rng(0)
    hits = misses = 0
    for _ in range(40):
        d, k = int(gen.integers(6, 20)), int(gen.integers(1, 4))
        o = (LGRR if gen.random() < 0.5 else LOSUE)(4.0, d, eps_1=2.0)
        heads = gen.choice(d, size=k, replace=False)
        pop = np.zeros(d, dtype=np.int64)
        pop[heads] = gen.multinomial(20_000, gen.dirichlet(np.full(k, 5.0)) if k > 1 else [1.0])
        ests = [o.estimate(c, 20_000) for c in o.sample_rounds(pop, int(gen.integers(2, 5)), gen)]
        H = sparse_support(ests, o)
        hits += H is not None and set(np.flatnonzero(H)) == set(heads.tolist())
        if H is not None:
            G = drift_rounds(ests, 0.5, support=H)
            assert np.allclose(G.sum(axis=1), 1.0) and (G >= 0).all() and not G[:, ~H].any()
        flat = gen.multinomial(20_000, gen.dirichlet(np.full(d, gen.choice([0.5, 5.0]))) * 0.5 + 0.5 / d)
        misses += sparse_support([o.estimate(c, 20_000) for c in o.sample_rounds(flat, 3, gen)], o) is None
    assert hits >= 34 and misses >= 38, (hits, misses)
    for bad in ({"alpha": 0.0}, {"alpha": float(d)}, {"alpha": True}, {"z": -1.0}, {"z": float("nan")}):
        try:
            sparse_support(ests, o, **bad)
        except ValueError as err:
            assert ("alpha" if "alpha" in bad else "z") + " must be" in str(err)
        else:
            raise AssertionError(bad)


def test_sparse_world_and_more_draws_in_the_table():
    """Near-two-point rounds (the mass on two values, a little spread over the rest): the sparse world
    is among the worlds scored; ``world_losses`` (methods in the table's order, worlds, draws) gives
    the table's worst ratio, the fitted world's loss and the bound; draws are R, 2R or 3R per world,
    more than R only where the pick's worst ratio is within 1.2 and the bound of its first R draws is
    not."""
    from ldpopt.recommend import TELL_DRAWS, worst_regret
    from ldpopt.uncertainty import parse_query

    o = LOSUE(4.0, 16, eps_1=2.0)
    gen = np.random.default_rng(4)
    for k in range(2):
        pop = np.r_[10_000 - 60 * k, 9_800, np.full(14, 14)]
        ests = [o.estimate(c, int(pop.sum())) for c in o.sample_rounds(pop, 3, gen)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ch = ldpopt.choose(ests, longitudinal=o, methods=["norm-sub", "norm-hyb"], n_repeats=3, rng=k)
        W = ch.world_losses
        assert ch.drift["sparse"] and W.shape[:2] == (len(ch.table), ch.drift["worlds"])
        assert W.shape[2] == ch.n_repeats and ch.n_repeats in [3 * j for j in range(1, TELL_DRAWS + 1)]
        assert np.allclose(ch.table["worst"], worst_regret(parse_query("full"), W.mean(axis=2)))
        assert np.allclose(ch.table["loss"], W[:, 0].mean(axis=1))
        assert np.allclose(ch.table["worst_upper"], _worst_upper(W))
        if ch.n_repeats > 3:  # the first draws' pick: within 1.2 by its worst ratio, beyond by its bound
            M = W[:, :, :3].mean(axis=2)
            worst = worst_regret(parse_query("full"), M)
            p = int(np.lexsort((M[:, 0], worst))[0])
            assert worst[p] <= TELL_RATIO < _worst_upper(W[:, :, :3])[p]
