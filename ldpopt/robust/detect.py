"""Detecting fake reports: an aggregate support-size test and a report-level suspect-support score.

Both read only what the aggregator holds (the reports) and the oracle's parameters.

Notes: docs/notes/poisoning.md, "ldpopt.robust.detect"."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._validation import _check_int
from ..oracles.base import FrequencyOracle
from .crafting import _BLOCK_CELLS, _blocks, _n_reports, report_device  # noqa: F401  (re-exported)
from .forms import form_of

__all__ = ["genuine_size_pmf", "roc", "size_test", "support_sizes", "suspect_scores", "suspects"]









def support_sizes(oracle: FrequencyOracle, reports, device=None) -> np.ndarray:
    """|S(y)| per report (int64): a popcount of the packed bits for OUE/SUE, 1 for GRR, otherwise the row sums
    of ``oracle.support_matrix`` in blocks of reports (the reference). For OLH/BLH, whose n·d hashes
    are the cost, ``device`` as in ``oracle.aggregate``: "cpu" (the default "auto" from
    ``kernels.AUTO_CELLS`` cells on) counts them with ``kernels.hash_row_counts``, the same numbers.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    reports
        Reports in the oracle's format.
    device : str, optional
        ``"numpy"``, ``"cpu"`` or ``"auto"`` (OLH/BLH).

    Returns
    -------
    ndarray of int64
        One support size per report.

    Raises
    ------
    ValueError
        An unknown device.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> values = np.repeat(np.arange(16), [400, 300, 200, 100] + [50] * 12)
    >>> reports = np.concatenate([oue.perturb(values, rng=0), robust.craft_reports(oue, "mga", [13, 14, 15], 100, rng=1)])
    >>> sizes = robust.support_sizes(oue, reports)
    >>> sizes[-3:]  # MGA: the 3 target bits, padded to about a genuine report's p + (d - 1)q ones
    array([4, 4, 4])
    """
    report_device(device, 0)
    return form_of(oracle).support_sizes(oracle, reports, device)


def genuine_size_pmf(oracle: FrequencyOracle) -> np.ndarray:
    """Pr[|S(y)| = s], s = 0 … d, of a genuine report (module notes), as the oracle states it
    (``oracle.support_size_pmf()``): a point mass for GRR and SS; none for HR.

    Parameters
    ----------
    oracle : FrequencyOracle
        The oracle.

    Returns
    -------
    ndarray, shape (d + 1,)

    Raises
    ------
    ValueError
        The oracle states no such law (HR).

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> robust.genuine_size_pmf(oue)[:4].round(3)
    array([0.005, 0.03 , 0.09 , 0.168])
    """
    return oracle.support_size_pmf()


def _pool(observed: np.ndarray, expected: np.ndarray, minimum: float = 5.0):
    """Bins with expected count ≥ ``minimum`` kept; each tail beyond them (the law is unimodal, so
    they are contiguous) added to its neighbouring kept bin. With no such bin, one bin."""
    keep = np.flatnonzero(expected >= minimum)
    if keep.size == 0:
        return np.array([observed.sum()]), np.array([expected.sum()])
    lo, hi = keep[0], keep[-1] + 1
    o, e = observed[lo:hi].copy(), expected[lo:hi].copy()
    o[0] += observed[:lo].sum()
    e[0] += expected[:lo].sum()
    o[-1] += observed[hi:].sum()
    e[-1] += expected[hi:].sum()
    return o, e


def size_test(oracle: FrequencyOracle, sizes) -> tuple[float, float]:
    """(:math:`χ^2`, p-value) of the support-size histogram against the genuine law (module notes).

    Pearson's :math:`χ^2` test, bins with expected count below 5 pooled into their neighbours.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    sizes : array_like of int
        Support sizes (:func:`support_sizes`), in [0, d].

    Returns
    -------
    tuple of float
        (:math:`χ^2`, p-value).

    Raises
    ------
    ValueError
        ``sizes`` empty or out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> values = np.repeat(np.arange(16), [400, 300, 200, 100] + [50] * 12)
    >>> reports = np.concatenate([oue.perturb(values, rng=0), robust.craft_reports(oue, "mga", [13, 14, 15], 100, rng=1)])
    >>> chi2, pvalue = robust.size_test(oue, robust.support_sizes(oue, reports))
    >>> bool(pvalue < 0.01)
    True
    """
    s = np.asarray(sizes, dtype=np.int64)
    if s.ndim != 1 or s.size == 0 or s.min() < 0 or s.max() > oracle.d:
        raise ValueError(f"sizes must be a non-empty 1-D array of integers in [0, {oracle.d}]")
    pmf = genuine_size_pmf(oracle)
    observed = np.bincount(s, minlength=oracle.d + 1).astype(float)
    if np.count_nonzero(pmf) == 1:  # fixed size: any other size is impossible for a genuine report
        bad = observed.sum() - observed[np.flatnonzero(pmf)[0]]
        return (np.inf, 0.0) if bad else (0.0, 1.0)
    o, e = _pool(observed, pmf * s.size)
    chi2 = float(((o - e) ** 2 / e).sum())
    return chi2, float(stats.chi2.sf(chi2, max(o.size - 1, 1)))


def suspects(f_tilde, k: int) -> np.ndarray:
    """The k values with the largest estimate (sorted by value).

    Parameters
    ----------
    f_tilde : array_like, shape (d,)
        Estimates.
    k : int
        How many, below d.

    Returns
    -------
    ndarray of int

    Raises
    ------
    ValueError
        ``k`` not below d.

    Examples
    --------
    >>> from ldpopt import robust
    >>> robust.suspects([0.1, 0.4, 0.05, 0.3], 2)
    array([1, 3])
    """
    f = np.asarray(f_tilde, dtype=np.float64)
    k = _check_int(k, "k", 1)
    if k >= f.size:
        raise ValueError(f"k must be below d = {f.size}, got {k}")
    return np.sort(np.argpartition(-f, k - 1)[:k])


def suspect_scores(oracle: FrequencyOracle, reports, suspect, device=None) -> np.ndarray:
    """Per report, the number of ``suspect`` values its support set contains (int64). For OLH/BLH,
    ``device`` as in :func:`support_sizes` (one ``keyed_hash`` per suspect is the reference).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    reports
        Reports in the oracle's format.
    suspect : array_like of int
        The suspect values, non-empty, in [0, d).
    device : str, optional
        As in :func:`support_sizes`.

    Returns
    -------
    ndarray of int64

    Raises
    ------
    ValueError
        An empty or out-of-range ``suspect``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> values = np.repeat(np.arange(16), [400, 300, 200, 100] + [50] * 12)
    >>> reports = np.concatenate([oue.perturb(values, rng=0), robust.craft_reports(oue, "mga", [13, 14, 15], 100, rng=1)])
    >>> robust.suspect_scores(oue, reports, [13, 14, 15])[-3:]
    array([3, 3, 3])
    """
    report_device(device, 0)
    c = np.unique(np.asarray(suspect, dtype=np.int64))
    if c.size == 0 or c.min() < 0 or c.max() >= oracle.d:
        raise ValueError(f"suspect must be a non-empty set of values in [0, {oracle.d})")
    return form_of(oracle).suspect_scores(oracle, reports, c, device)


def roc(scores, is_fake) -> tuple[np.ndarray, np.ndarray, float]:
    """(FPR, TPR, AUC) of flagging reports with score ≥ j, for every distinct score j (descending),
    plus the (0, 0) and (1, 1) ends; AUC by the trapezoid rule.

    Parameters
    ----------
    scores : array_like
        One score per report.
    is_fake : array_like of bool
        Which reports are fake; at least one of each kind.

    Returns
    -------
    fpr, tpr : ndarray
    auc : float

    Raises
    ------
    ValueError
        Lengths that differ, or no fake or no genuine report.

    Examples
    --------
    >>> from ldpopt import robust
    >>> fpr, tpr, auc = robust.roc([3, 2, 1, 0], [True, True, False, False])
    >>> auc
    1.0
    """
    sc = np.asarray(scores, dtype=np.float64)
    y = np.asarray(is_fake, dtype=bool)
    if sc.shape != y.shape or sc.ndim != 1:
        raise ValueError("scores and is_fake must be 1-D arrays of one length")
    if y.all() or not y.any():
        raise ValueError("is_fake must mark at least one fake and one genuine report")
    levels, idx = np.unique(-sc, return_inverse=True)  # descending scores
    fake_hist = np.bincount(idx[y], minlength=levels.size)
    real_hist = np.bincount(idx[~y], minlength=levels.size)
    tpr = np.concatenate([[0.0], np.cumsum(fake_hist) / y.sum()])
    fpr = np.concatenate([[0.0], np.cumsum(real_hist) / (~y).sum()])
    return fpr, tpr, float(np.trapezoid(tpr, fpr))
