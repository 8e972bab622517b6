"""An attacker who has read the default recovery's code: a search over the fake reports' law, the
targets and the number of fake users, under a budget β, for the attack that maximises the
default's MSE over Norm-Sub's on a genuine histogram.

Notes: docs/poisoning.md, "An attacker who has read the code"."""

from __future__ import annotations

import math

import numpy as np

from .._validation import _check_int, as_generator
from ..methods.normalize import project_simplex
from .attacks import check_beta

__all__ = ["describe_attack", "search_attack", "search_counts"]

#: the coordinates of an attack x ∈ [0, 1]^6 (:func:`search_counts`)
COORDS = ("fake users (log scale)", "first target's genuine rank", "targets", "mix", "target rate", "other rate")
#: keys an attacker searches for one hash report to copy (hash form)
COPY_KEYS = 256
#: the most targets an attack chooses
MAX_TARGETS = 10


def _decode(x, d: int, m_max: int) -> tuple[int, int, int]:
    m = max(1, min(m_max, round(m_max ** float(x[0]))))
    a = min(int(float(x[1]) ** 2 * (d - 2)), d - 2)  # squared: the search dwells on the popular ranks
    k = max(1, min(1 + int(float(x[2]) * MAX_TARGETS), d - 1 - a))
    return m, a, k


def _copy_support(oracle, targets: np.ndarray, large: bool, gen) -> np.ndarray:
    """The support of the one hash report an attacker copies: among ``COPY_KEYS`` random keys and
    every bucket, the most targets, then the largest (``large``) or smallest support."""
    from ..oracles.hashing import keyed_hash

    keys = gen.integers(-(2 ** 63), 2 ** 63 - 1, size=COPY_KEYS, dtype=np.int64)
    h = keyed_hash(keys[:, None], np.arange(oracle.d)[None, :], oracle.g)       # (keys, d)
    onehot = np.zeros((COPY_KEYS, oracle.g), dtype=np.int64)
    rows = np.repeat(np.arange(COPY_KEYS), oracle.d)
    np.add.at(onehot, (rows, h.ravel()), 1)                                      # bucket sizes
    hits = np.zeros((COPY_KEYS, oracle.g), dtype=np.int64)
    np.add.at(hits, (np.repeat(np.arange(COPY_KEYS), targets.size), h[:, targets].ravel()), 1)
    score = hits * (oracle.d + 1) + (onehot if large else oracle.d - onehot)
    i, b = np.unravel_index(int(np.argmax(score)), score.shape)
    return np.flatnonzero(h[i] == b)


def search_counts(oracle, true_counts, x, beta: float, rng) -> tuple[np.ndarray, int, np.ndarray]:
    r"""The support counts of the fake users of attack ``x`` (exact in law), their number m and
    the targets.

    ``x`` ∈ :math:`[0, 1]^6` (``COORDS``): :math:`m = m_{\max}^{x_0}` fake users (:math:`m_{\max} = ⌊βn/(1 - β)⌋`, n genuine
    users); targets the genuine ranks a … a + k − 1 (a = x₁²(d − 2), k = 1 + ⌊10x₂⌋: the attacker
    knows the genuine histogram); and by report form: *value* (GRR) — a share x₃ of the fake users
    report a uniform target, the others a uniform value; *unary* (OUE, SUE) — each bit set
    independently, at rate x₄ on the targets and x₅ elsewhere (x₄ = x₅ = 1: every bit set; 0: none);
    *hash* (OLH, BLH) — a share x₃ copy one report (the key among 256 whose bucket holds the most
    targets, then the most values if x₅ > ½, else the fewest), the others run MGA on the targets;
    any other form — a share x₃ run MGA on the targets, the others report a uniform value through
    the oracle.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    true_counts : array_like of int, shape (d,)
        The genuine histogram (ranks are read from it).
    x : array_like, shape (6,)
        The attack, in [0, 1]^6.
    beta : float
        The budget: fake users at most a fraction β of all users, in (0, 1).
    rng : int, numpy.random.Generator or "secure"

    Returns
    -------
    counts : ndarray of int64, shape (d,)
    m : int
    targets : ndarray of int

    Raises
    ------
    ValueError
        A bad histogram, x or β.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=8)
    >>> c, m, t = robust.search_counts(oue, [500, 300, 100, 50, 20, 20, 5, 5], [1, 0, 0, 0, 1, 1], 0.01, 0)
    >>> m, t.tolist(), c.tolist()  # every bit set on 10 reports
    (10, [0], [10, 10, 10, 10, 10, 10, 10, 10])
    """
    from .attack_counts import fake_counts
    from .forms import form_of

    tc = np.asarray(true_counts)
    d = oracle.d
    if tc.shape != (d,) or not np.issubdtype(tc.dtype, np.integer) or (tc < 0).any() or tc.sum() == 0:
        raise ValueError(f"true_counts must be {d} non-negative integers, not all zero")
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (len(COORDS),) or not np.all((x >= 0) & (x <= 1)):
        raise ValueError(f"x must be {len(COORDS)} numbers in [0, 1]")
    beta = check_beta(beta)
    if beta == 0.0:
        raise ValueError("beta must be positive")
    gen = as_generator(rng)
    n = int(tc.sum())
    m_max = max(1, int(beta * n / (1.0 - beta)))
    m, a, k = _decode(x, d, m_max)
    order = np.argsort(-tc, kind="stable")
    t = np.sort(order[a:a + k])
    others = np.setdiff1d(np.arange(d), t)
    out = np.zeros(d, dtype=np.int64)
    form = getattr(oracle, "report_form", None)
    if form == "unary":
        out[t] = gen.binomial(m, x[4], size=t.size)
        out[others] = gen.binomial(m, x[5], size=others.size)
    elif form == "value":
        mt = int(gen.binomial(m, x[3]))
        out[t] += gen.multinomial(mt, np.full(t.size, 1.0 / t.size))
        out += gen.multinomial(m - mt, np.full(d, 1.0 / d))
    elif form == "hash":
        mc = int(gen.binomial(m, x[3]))
        if mc:
            out[_copy_support(oracle, t, x[5] > 0.5, gen)] += mc
        if m - mc:
            out += form_of(oracle).mga_counts(oracle, t, others, m - mc, gen, 1000)
    else:
        mt = int(gen.binomial(m, x[3]))
        if mt:
            out += fake_counts(oracle, "mga", t, mt, gen)
        if m - mt:
            out += oracle.sample_counts(gen.multinomial(m - mt, np.full(d, 1.0 / d)), gen)
    return out, m, t


def describe_attack(oracle, true_counts, x, beta: float) -> str:
    """One line saying what attack ``x`` does (:func:`search_counts`).

    Parameters
    ----------
    oracle, true_counts, x, beta
        As :func:`search_counts`.

    Returns
    -------
    str

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=8)
    >>> robust.adversary.describe_attack(oue, [500, 300, 100, 50, 20, 20, 5, 5], [1, 0, 0, 0, 1, 1], 0.01)
    '10 fake users (β = 0.0099), targets: genuine rank 1; bits set at rate 1.00 on targets, 1.00 elsewhere'
    """
    tc = np.asarray(true_counts)
    n = int(tc.sum())
    beta = check_beta(beta)
    m, a, k = _decode(np.asarray(x, dtype=np.float64), oracle.d, max(1, int(beta * n / (1.0 - beta))))
    ranks = f"genuine rank {a + 1}" if k == 1 else f"genuine ranks {a + 1}-{a + k}"
    form = getattr(oracle, "report_form", None)
    if form == "unary":
        law = f"bits set at rate {x[4]:.2f} on targets, {x[5]:.2f} elsewhere"
    elif form == "value":
        law = f"{x[3]:.2f} of them report a target, the rest a uniform value"
    elif form == "hash":
        law = (f"{x[3]:.2f} of them copy one report (the bucket with the most targets and the "
               f"{'most' if x[5] > 0.5 else 'fewest'} values), the rest MGA")
    else:
        law = f"{x[3]:.2f} of them MGA, the rest a uniform value"
    return f"{m} fake users (β = {m / (n + m):.2g}), targets: {ranks}; {law}"


def _ratio(oracle, tc, x, beta, reps, gen, defence) -> np.ndarray:
    n = int(tc.sum())
    truth = tc / n
    out = np.empty(reps)
    for i in range(reps):  # a few repetitions per candidate attack
        c, m, _ = search_counts(oracle, tc, x, beta, gen)
        est = oracle.estimate(oracle.sample_counts(tc, gen) + c, n + m)
        f = defence(est, oracle)
        ns = project_simplex(est.f_tilde)
        out[i] = float(np.mean((f - truth) ** 2) / max(np.mean((ns - truth) ** 2), 1e-300))
    return out


def search_attack(oracle, true_counts, beta: float, budget: int = 40, reps: int = 2, rng=0,
                  defence=None, final_reps: int = 10, start=None) -> dict:
    """Random search, then a (1+1) evolution strategy, over attacks x ∈ [0, 1]^6
    (:func:`search_counts`) for the largest mean of MSE(defence) ÷ MSE(Norm-Sub) against the
    genuine frequencies.

    The first half of ``budget`` candidates are uniform draws (and ``start``, if given); the rest
    perturb the best so far (Gaussian steps, σ = 0.2 halved after 5 failures in a row). Each
    candidate is scored over ``reps`` fresh draws of the genuine and fake counts; the best is
    re-scored over ``final_reps`` new draws (the number reported: a search's best score is biased up).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    true_counts : array_like of int, shape (d,)
        The genuine histogram.
    beta : float
        The budget on the fake users' fraction, in (0, 1).
    budget : int, default 40
        Candidate attacks scored.
    reps : int, default 2
        Draws per candidate.
    rng : int, numpy.random.Generator or "secure"
    defence : callable, optional
        ``defence(estimate, oracle) → f``; default :func:`~.guarded.guarded_lift` with β estimated.
    final_reps : int, default 10
        Draws re-scoring the best attack.
    start : sequence of array_like, optional
        Attacks scored first (known bad cases).

    Returns
    -------
    dict
        ``x`` (the best attack), ``attack`` (:func:`describe_attack`), ``ratio`` and ``se`` (its
        re-scored mean and standard error), ``search_ratio`` (its score in the search),
        ``evaluations``.

    Raises
    ------
    ValueError
        Bad arguments.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> grr = oracles.get("grr", epsilon=2.0, d=16)
    >>> tc = np.random.default_rng(0).multinomial(20_000, np.full(16, 1 / 16))
    >>> out = robust.search_attack(grr, tc, 0.01, budget=4, reps=1, final_reps=2, rng=0)
    >>> out["evaluations"], out["ratio"] > 0
    (4, True)
    """
    from .guarded import guarded_lift

    budget = _check_int(budget, "budget", 1)
    reps = _check_int(reps, "reps", 1)
    final_reps = _check_int(final_reps, "final_reps", 1)
    beta = check_beta(beta)
    if beta == 0.0:
        raise ValueError("beta must be positive")
    tc = np.asarray(true_counts)
    gen = as_generator(rng)
    if defence is None:
        def defence(est, o):
            return guarded_lift(est, oracle=o)
    P = len(COORDS)
    queue = [np.clip(np.asarray(s, dtype=np.float64), 0, 1) for s in (start or [])]
    best_x, best = None, -math.inf
    sigma, fails = 0.2, 0
    for i in range(budget):
        if queue:
            x = queue.pop(0)
        elif i < budget // 2 or best_x is None:
            x = gen.random(P)
        else:
            x = np.clip(best_x + sigma * gen.standard_normal(P), 0.0, 1.0)
        score = float(_ratio(oracle, tc, x, beta, reps, gen, defence).mean())
        if score > best:
            best_x, best, fails = x, score, 0
        elif i >= budget // 2:
            fails += 1
            if fails >= 5:
                sigma, fails = sigma / 2, 0
    final = _ratio(oracle, tc, best_x, beta, final_reps, gen, defence)
    return {"x": best_x, "attack": describe_attack(oracle, tc, best_x, beta), "ratio": float(final.mean()),
            "se": float(final.std(ddof=1) / math.sqrt(final_reps)) if final_reps > 1 else 0.0,
            "search_ratio": best, "evaluations": budget}
