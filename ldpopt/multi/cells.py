"""Every released marginal cell with its uncertainty: exact for the linear consistency, bootstrapped
through each marginal's own sampler (oracle or central mechanism) for CALM's non-linear steps.

Notes: docs/multi.md, "Every marginal cell with its error bar"."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._blas import one_thread
from .._validation import as_generator
from ..uncertainty.analytic import covariance
from ..uncertainty.bootstrap import check_level, check_resamples, interval_from
from ..uncertainty.celltable import FLAG_SIGMAS, cell_frame
from ..uncertainty.fit import population
from ..uncertainty.resample import draw_counts, oracle_of
from .calm_consistency import calm_consistency
from .marginals import MarginalEstimates

__all__ = ["MAX_EXACT_CELLS", "POSTS", "linear_consistency", "marginal_cells"]

#: the named post-processings of :func:`marginal_cells`
POSTS = ("linear", "calm")
#: the largest vector (cells over all marginals) whose exact table is computed: the projection is dense
MAX_EXACT_CELLS = 6_000


def _check(est) -> MarginalEstimates:
    if not isinstance(est, MarginalEstimates):
        raise TypeError(f"est must be an ldpopt.multi.MarginalEstimates, got {type(est).__name__}")
    return est


def _projection(est: MarginalEstimates):
    """(P, c): the linear consistency is x̂ = P f̃ + c (dense P)."""
    ms = est.marginals
    N = int(ms.size)
    if N > MAX_EXACT_CELLS:
        raise ValueError(f"est: {N} cells over all marginals, more than MAX_EXACT_CELLS = {MAX_EXACT_CELLS} "
                         f"(the exact table is dense in the cells)")
    rows = np.repeat(np.arange(ms.m), ms.sizes)
    S = sp.csr_matrix((np.ones(N), (rows, np.arange(N))), shape=(ms.m, N))
    M = sp.vstack([ms.agreement(), S], format="csr").toarray()
    b = np.r_[np.zeros(M.shape[0] - ms.m), np.ones(ms.m)]
    v = est.sigma2
    VMt = v[:, None] * M.T
    with one_thread(N):                            # small dense algebra: BLAS threads spin on a loaded machine
        G = VMt @ np.linalg.pinv(M @ VMt)          # rank-deficient rows are harmless under the pseudo-inverse
        return np.eye(N) - G @ M, G @ b


def linear_consistency(est: MarginalEstimates) -> np.ndarray:
    r"""The weighted least-squares projection of the concatenated f̃ onto the consistent marginals
    (every two marginals agree on the attributes they share, each sums to one; negative cells
    allowed): :math:`\hat x = \tilde f − V M^T (M V M^T)^+ (M \tilde f − b)`, V = diag of each marginal's Eq. 7 :math:`σ^2` (fixed
    weights, so x̂ is linear in f̃ and unbiased). The equality-constrained ``"weighted"`` problem of
    :func:`~.problem.consistency_problem` without its non-negativity.

    Parameters
    ----------
    est : MarginalEstimates

    Returns
    -------
    ndarray, shape (marginals.size,)

    Raises
    ------
    TypeError
        ``est`` is not a MarginalEstimates.
    ValueError
        More than :data:`MAX_EXACT_CELLS` cells.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(20000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> x = multi.linear_consistency(est)
    >>> [round(float(b.sum()), 12) for b in est.marginals.split(x)]
    [1.0, 1.0, 1.0]
    >>> float(np.abs(est.marginals.agreement() @ x).max()) < 1e-12
    True
    """
    P, c = _projection(_check(est))
    return P @ est.f_tilde + c


def _raw_covariance(est: MarginalEstimates) -> list[np.ndarray]:
    """Each marginal's Cov(f̃_i − f_i) at its plug-in truth: the oracle's exact covariance given the
    group's users, plus — where users were split into groups (not central noise) — the group's own
    sampling covariance about the whole population's marginal, n_i of n drawn without replacement:
    (n − n_i)/((n − 1) n_i) · (diag(f) − ffᵀ). Across marginals the groups' covariance (of order
    1/n, needing the joint of the two marginals) is left out."""
    out = []
    for e in est.estimates:
        c = covariance(e)
        if _split(est, e):
            f = np.clip(e.f_tilde, 0.0, None)
            f = f / max(float(f.sum()), 1e-300)
            c = c + (est.n - e.n) / ((est.n - 1) * e.n) * (np.diag(f) - np.outer(f, f))
        out.append(c)
    return out


def _labels(est: MarginalEstimates):
    import pandas as pd

    ms = est.marginals
    return pd.MultiIndex.from_arrays([np.repeat([ms.name(i) for i in range(ms.m)], ms.sizes),
                                      np.concatenate([np.arange(s) for s in ms.sizes])], names=["marginal", "cell"])


def _floor(est: MarginalEstimates) -> np.ndarray:
    """One count of each marginal's reports (1/n_i), per cell."""
    return np.repeat([1.0 / e.n for e in est.estimates], est.marginals.sizes)


def _split(est: MarginalEstimates, e) -> bool:
    """Whether marginal ``e``'s reports came from a group of the users (SMP, CALM), not all of them."""
    return not e.noise.additive and e.n < est.n


def _redraw(est: MarginalEstimates, world: np.ndarray, B: int, gen) -> np.ndarray:
    """(B, N) raw estimates re-drawn around ``world`` through each marginal's own sampler; where the
    users were split into groups, each resample's group first re-drawn from the world's population
    (n_i of n without replacement: multivariate hypergeometric)."""
    parts = []
    for e, w in zip(est.estimates, est.marginals.split(world)):
        w = np.clip(w, 0.0, None)
        w = w / max(float(w.sum()), 1e-300)
        orc = oracle_of(e)
        if _split(est, e):
            groups = gen.multivariate_hypergeometric(population(w, est.n), e.n, size=B)
            C = np.stack([draw_counts(orc, g, 1, gen)[0] for g in groups])   # one truth per resample
        else:
            C = draw_counts(orc, population(w, e.n), B, gen)
        parts.append((C / e.n - e.q) / (e.p - e.q))
    return np.concatenate(parts, axis=1)


def _with(est: MarginalEstimates, F: np.ndarray) -> MarginalEstimates:
    """``est`` with the concatenated f̃ replaced by ``F``."""
    return MarginalEstimates(est.marginals, tuple(e.with_f_tilde(f) for e, f in zip(est.estimates, est.marginals.split(F))),
                             est.protocol, est.epsilon, est.exact_epsilon, est.n, est.meta)


def marginal_cells(est: MarginalEstimates, post="linear", level: float = 0.95, *, n_resamples: int = 200, rng=0,
                   interval: str = "basic", hull: bool = True, sigmas: float = FLAG_SIGMAS, engine: str = "pandas",
                   like=None):
    r"""One row per released marginal cell (index: marginal name, cell): estimate, se, ci_low, ci_high,
    correction_sigma, flagged.

    ``post="linear"`` (:func:`linear_consistency`): the exact SE :math:`\sqrt{\operatorname{diag}(P C P^T)}`, C each marginal's
    exact covariance of f̃ (:func:`ldpopt.uncertainty.analytic.covariance` at the plug-in truth; the
    marginals independent, as when each user reports one marginal — SMP, CALM — or under central
    noise), and the normal interval. For SMP and CALM the users' random split into groups adds each
    group's own sampling variance about the population's marginal, :math:`(n − n_i)/((n − 1) n_i)·(\operatorname{diag}(f) −
    f f^T)`, which both the SE and the bootstrap's re-drawn groups hold; the groups' (negative)
    covariance across marginals is left out (measured: the SD over draws is 0.98–1.01 of the SE at
    ε = 1 and 4; docs/multi.md, "Every marginal cell with its error bar"). Otherwise the parametric bootstrap: the world is the release,
    each marginal's counts re-drawn through its own oracle's or central mechanism's sampler
    (:func:`ldpopt.uncertainty.resample.oracle_of`), the release recomputed, the ``interval``
    construction of :func:`ldpopt.uncertainty.intervals` clipped to [0, 1]; ``post="calm"`` is
    :func:`~.calm_consistency.calm_consistency`, a callable ``post(est)`` → the concatenated release
    is the caller's own. With ``hull`` each bootstrap interval is joined with the linear
    consistency's exact one (CALM's non-negativity biases the small cells, where the bootstrap
    alone under-covers: docs/multi.md).

    Corrections are against the raw f̃ in units of each cell's raw σ (:math:`\sqrt{\cdot}` of C's diagonal), the flag
    floor one count of the marginal's reports (:math:`1/n_i`).

    Parameters
    ----------
    est : MarginalEstimates
    post : "linear", "calm" or callable
    level : float, default 0.95
    n_resamples : int, default 200
        Bootstrap resamples (≥ 10; non-linear ``post`` only).
    rng : int, Generator or "secure"
    interval : "basic", "percentile" or "normal"
    hull : bool, default True
    sigmas : float, default 7
        The flag rule's multiple of σ.
    engine, like
        The table's dataframe engine (:func:`ldpopt.aggregate.frames.to_engine`; outside pandas the
        index is the leading ``marginal`` and ``cell`` columns).

    Returns
    -------
    pandas.DataFrame, or a frame of ``engine``

    Raises
    ------
    TypeError
        ``est`` is not a MarginalEstimates.
    ValueError
        An unknown ``post``, ``level`` outside (0, 1), ``n_resamples`` < 10, an unknown ``interval``,
        more than :data:`MAX_EXACT_CELLS` cells (for the exact table or the hull), or a protocol whose
        users report every attribute (SPL, RS+FD, RS+RFD: its marginals are not independent).

    Examples
    --------
    >>> from ldpopt import multi
    >>> data = multi.chain_network(20000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> t = multi.marginal_cells(est)
    >>> t.columns.tolist(), t.index.names
    (['estimate', 'se', 'ci_low', 'ci_high', 'correction_sigma', 'flagged'], FrozenList(['marginal', 'cell']))
    >>> bool((multi.marginal_cells(est, "calm", n_resamples=50)["ci_low"] >= 0).all())
    True
    """
    from ..aggregate.frames import to_engine  # pyarrow, loaded only when a table is asked for

    est = _check(est)
    lv = check_level(level)
    if not (post in POSTS or callable(post)):
        raise ValueError(f"post must be one of {POSTS} or a callable, got {post!r}")
    if est.protocol.startswith(("spl", "rsfd", "rsrfd")):
        raise ValueError(f"est: protocol {est.protocol!r} has every user report every attribute, so its marginals "
                         f"are not independent; marginal_cells needs one marginal per user (smp, calm) or central noise")
    raw = est.f_tilde
    C = _raw_covariance(est)
    sigma = np.sqrt(np.maximum(np.concatenate([np.diag(c) for c in C]), 0.0))
    labels = _labels(est)
    exact = None
    if post == "linear" or hull:
        P, c = _projection(est)
        with one_thread(P.shape[0]):
            PC = np.concatenate([P[:, est.marginals.block(i)] @ C[i] for i in range(est.marginals.m)], axis=1)
            se = np.sqrt(np.maximum(np.einsum("ij,ij->i", PC, P), 0.0))
        exact = cell_frame(P @ raw + c, se, raw, sigma, level=lv, labels=labels, sigmas=sigmas, floor=_floor(est))
        if post == "linear":
            return to_engine(exact, engine, like=like)
    B = check_resamples(n_resamples)
    gen = as_generator(rng)
    fn = (lambda e: calm_consistency(e).f) if post == "calm" else post
    point = np.asarray(fn(est), dtype=np.float64)
    F = _redraw(est, point, B, gen)
    boot = np.stack([np.asarray(fn(_with(est, f)), dtype=np.float64) for f in F])
    se, _bias, lo, hi = interval_from(point, point, boot, lv, interval)
    if exact is not None:
        lo = np.minimum(lo, np.clip(exact["ci_low"].to_numpy(), 0.0, 1.0))
        hi = np.maximum(hi, np.clip(exact["ci_high"].to_numpy(), 0.0, 1.0))
    return to_engine(cell_frame(point, se, raw, sigma, level=lv, ci_low=lo, ci_high=hi, labels=labels,
                                sigmas=sigmas, floor=_floor(est)), engine, like=like)
