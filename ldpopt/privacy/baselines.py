"""What deployments do to central-noise counts, as functions on an :class:`~ldpopt.Estimate` from
:meth:`~ldpopt.Estimate.from_central`: Presto's clip-and-round and the Census-style non-negative least
squares (with the total when it is known, then rounded to integers keeping the total), the baselines
ldpopt's post-processing is measured against (benchmarks/bench_central.py).

Placed above the foundation folder it sits in (tests/test_layers.py's ``PLACED``): it solves its
least squares through :class:`ldpopt.problems.Problem`; nothing below imports it.

Notes: docs/notes/privacy.md, section ``ldpopt.privacy.baselines``.
"""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate, central_noise, check_estimate

__all__ = ["clip_round", "nnls", "nnls_round", "round_to_total"]


def _central(estimate, name: str) -> Estimate:
    est = check_estimate(estimate, name)
    if central_noise(est) is None:
        raise ValueError(f"{name} must be a central-noise estimate (Estimate.from_central), got oracle {est.oracle!r}")
    return est


def clip_round(estimate) -> np.ndarray:
    """Presto's release of a noisy count: round to the nearest integer and clip at zero,
    max(0, round(c̃_v)), returned as frequencies (divided by n; they need not sum to one).

    Parameters
    ----------
    estimate : Estimate
        A central-noise estimate.

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    ValueError
        ``estimate`` did not come from :meth:`~ldpopt.Estimate.from_central`.

    References
    ----------
    Meta's Presto noisy aggregation functions (``noisy_count_gaussian``: Gaussian noise added to the
    exact count, the result rounded and clipped at zero). Ties are rounded half to even (numpy's
    ``round``); the documentation does not say which rounding it uses.

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.privacy.baselines import clip_round
    >>> clip_round(Estimate.from_central([60.4, -3.2, 42.6], "gaussian", 2.0, n=100))
    array([0.6 , 0.  , 0.43])
    """
    est = _central(estimate, "estimate")
    return np.maximum(np.round(est.counts), 0.0) / est.n


def nnls(estimate, total: bool | None = None, solver: str | None = None) -> np.ndarray:
    """The Census-style non-negative least squares fit to the noisy counts: min Σ_v (c_v − c̃_v)² over
    c ≥ 0, with Σ_v c_v = n when the total is known, as frequencies c/n, solved and certified by
    :class:`ldpopt.problems.Problem` (objective ``"cls"``).

    With the total this is the Euclidean projection onto the simplex, the same point as Norm-Sub;
    without it, max(c̃_v, 0) (Base-Pos). The function states the deployment's problem as it is
    written, so the benchmark measures the claim rather than assuming it.

    Parameters
    ----------
    estimate : Estimate
        A central-noise estimate.
    total : bool, optional
        Impose Σ c_v = n. None: when n is known (``meta["privacy"]["n_known"]``).
    solver : str, optional
        Passed to ``Problem.solve`` (None: ldpopt's policy, the structured solver here).

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    ValueError
        ``estimate`` not central, the solve not certified optimal.

    References
    ----------
    Abowd et al., *The 2020 Census Disclosure Avoidance System TopDown Algorithm*, Harvard Data
    Science Review (2022), §5 (the L2 non-negative least squares step, its total constraint, then an
    L1 rounding step: :func:`nnls_round`).

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.privacy.baselines import nnls
    >>> nnls(Estimate.from_central([60.4, -3.2, 42.6], "gaussian", 2.0, n=100)).round(3)
    array([0.589, 0.   , 0.411])
    """
    from ..problems import NonNegative, Problem, SumTo

    est = _central(estimate, "estimate")
    if total is None:
        total = bool(est.meta["privacy"].get("n_known", False))
    if not isinstance(total, bool):
        raise TypeError(f"total must be True, False or None, got {total!r}")
    cons = [NonNegative(), SumTo(1.0)] if total else [NonNegative()]
    if not total:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the simplex dropped on purpose: no total is known
            sol = Problem(est, "cls", cons).solve(solver=solver) if solver else Problem(est, "cls", cons).solve()
    else:
        sol = Problem(est, "cls", cons).solve(solver=solver) if solver else Problem(est, "cls", cons).solve()
    if sol.status != "optimal":
        raise ValueError(f"nnls: the solve ended {sol.status!r} ({sol.message})")
    return np.maximum(sol.f, 0.0)


def round_to_total(counts, total: int) -> np.ndarray:
    """The integer vector nearest ``counts`` (in L1 and in L2) among those summing to ``total``:
    floor every entry, then add one to the entries with the largest remainders (ties to the lower
    index); ``counts`` must be ≥ 0 with Σ floor(counts) ≤ total ≤ Σ ceil(counts).

    Parameters
    ----------
    counts : array_like, shape (d,)
        Non-negative reals (a least-squares fit in counts).
    total : int
        The sum to keep.

    Returns
    -------
    ndarray of float64, shape (d,)

    Raises
    ------
    ValueError
        A negative entry, or ``total`` out of [Σ floor, Σ ceil].

    References
    ----------
    Abowd et al. (Harvard Data Science Review, 2022), §5: TopDown's rounding step solves this
    problem as an L1 program; on one level with one total its solution is this largest-remainder
    rule (exchange argument: moving a unit from a larger to a smaller remainder never lowers the
    distance).

    Examples
    --------
    >>> from ldpopt.privacy.baselines import round_to_total
    >>> round_to_total([1.6, 2.3, 0.1], 4)
    array([2., 2., 0.])
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be a 1-D array of finite values >= 0")
    base = np.floor(c)
    short = int(total) - int(base.sum())
    if short < 0 or short > int(np.count_nonzero(c > base)):
        raise ValueError(f"total must lie in [{int(base.sum())}, {int(np.ceil(c).sum())}], got {total!r}")
    if short:
        rem = c - base
        top = np.argsort(-rem, kind="stable")[:short]
        base[top] += 1.0
    return base


def nnls_round(estimate) -> np.ndarray:
    """:func:`nnls`, then rounded to integer counts keeping the total (:func:`round_to_total`; the total
    is n when known, else the rounded sum of the fit), as frequencies: the Census-style release.

    Parameters
    ----------
    estimate : Estimate
        A central-noise estimate.

    Returns
    -------
    ndarray, shape (d,)

    References
    ----------
    Abowd et al. (Harvard Data Science Review, 2022), §5.

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.privacy.baselines import nnls_round
    >>> nnls_round(Estimate.from_central([60.4, -3.2, 42.6], "gaussian", 2.0, n=100))
    array([0.59, 0.  , 0.41])
    """
    est = _central(estimate, "estimate")
    c = nnls(est) * est.n
    return round_to_total(c, round(float(c.sum()))) / est.n
