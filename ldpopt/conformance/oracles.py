"""``check_oracle``: the properties every frequency oracle must have, as scikit-learn's ``check_estimator``.

Run it on a small instance of an oracle (d ≈ 4–8, small parameters: the checks enumerate outputs
and simulate users) — a built-in or one of your own — and it raises ``AssertionError`` with a
one-line message naming the oracle and the property that failed, or returns what it checked.

Notes: docs/notes/extending.md, "ldpopt.conformance.oracles"."""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..oracles.base import FrequencyOracle
from ..oracles.channel import Channel

__all__ = ["CHECKS", "OracleReport", "check_oracle"]


@dataclass
class OracleReport:
    """What :func:`check_oracle` checked: the names of the checks passed, and those skipped with why.

    Parameters
    ----------
    oracle : str
        Registry name of the oracle checked.
    passed : list of str
        Names of the checks passed, in :data:`CHECKS` order.
    skipped : dict of str to str
        Checks that did not apply, with the reason.

    Examples
    --------
    >>> from ldpopt import oracles, testing
    >>> testing.check_oracle(oracles.get("grr", 1.0, 4), checks=["interface", "epsilon"], reps=200)
    OracleReport(oracle='grr', passed=['interface', 'epsilon'], skipped={})
    """

    oracle: str
    passed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


class _Skip(Exception):
    """An optional capability the oracle does not have: the check does not apply."""


def _fail(oracle: FrequencyOracle, check: str, msg: str) -> AssertionError:
    return AssertionError(f"oracle {oracle!r} fails {check}: {msg}")


def _z_bound(alpha: float, k: int) -> float:
    """The two-sided Bonferroni bound on |z| for k z-scores at family-wise false-alarm rate alpha."""
    from scipy.stats import norm

    return float(norm.isf(alpha / (2 * max(k, 1))))


def _histogram(d: int) -> np.ndarray:
    """A small population with unequal frequencies and one empty value (when d allows): 36 users."""
    w = np.arange(d, 0, -1, dtype=np.float64)
    if d > 2:
        w[-1] = 0.0
    tc = np.floor(36 * w / w.sum()).astype(np.int64)
    tc[0] += 36 - tc.sum()
    return tc


def _real_counts(oracle: FrequencyOracle, tc: np.ndarray, reps: int, gen) -> np.ndarray:
    """(reps, d) counts of the real path: every repetition's users perturbed at once, each repetition's
    reports aggregated on their own (``aggregate``, device "numpy")."""
    n = int(tc.sum())
    values = np.tile(np.repeat(np.arange(oracle.d), tc), reps)
    reports = oracle.perturb(values, gen)

    def rows(sl):
        if isinstance(reports, tuple):
            return tuple(r[sl] for r in reports)
        return reports[sl]

    if not isinstance(reports, (np.ndarray, tuple)):
        raise _fail(oracle, "joint_law", f"perturb returned {type(reports).__name__}: the check needs an array "
                                         "or a tuple of arrays with one row per user")
    return np.array([oracle.aggregate(rows(slice(r * n, (r + 1) * n)), device="numpy") for r in range(reps)],
                    dtype=np.float64)


def _moment_z(x: np.ndarray, mean: np.ndarray, cov: np.ndarray | None = None):
    """z-scores of the means and of the covariance entries (j ≤ k) of draws x (R, d) against (mean, cov)
    (cov None: the s.e. of the mean from x itself); an entry with zero spread must match (z = inf if not)."""
    R = x.shape[0]
    sd = np.sqrt(np.diag(cov)) if cov is not None else x.std(axis=0, ddof=1)
    dev = x.mean(axis=0) - mean
    zm = np.where(sd > 0, np.abs(dev) / np.where(sd > 0, sd / math.sqrt(R), 1.0),
                  np.where(np.abs(dev) > 1e-9, np.inf, 0.0))
    if cov is None:
        return zm, None
    xc = x - mean
    j, k = np.triu_indices(x.shape[1])
    prod = xc[:, j] * xc[:, k]
    se = prod.std(axis=0, ddof=1) / math.sqrt(R)
    dc = prod.mean(axis=0) - cov[j, k]
    zc = np.where(se > 0, np.abs(dc) / np.where(se > 0, se, 1.0), np.where(np.abs(dc) > 1e-9, np.inf, 0.0))
    return zm, zc


def _two_sample_z(a: np.ndarray, b: np.ndarray):
    """z-scores of mean and covariance-entry differences between two independent samples (R, d)."""
    def parts(x):
        xc = x - x.mean(axis=0)
        j, k = np.triu_indices(x.shape[1])
        prod = xc[:, j] * xc[:, k]
        return x.mean(axis=0), x.var(axis=0, ddof=1) / x.shape[0], prod.mean(axis=0), prod.var(axis=0, ddof=1) / x.shape[0]

    ma, va, ca, sa = parts(a)
    mb, vb, cb, sb = parts(b)

    def z(d, v):
        s = np.sqrt(v)
        return np.where(s > 0, np.abs(d) / np.where(s > 0, s, 1.0), np.where(np.abs(d) > 1e-9, np.inf, 0.0))

    return z(ma - mb, va + vb), z(ca - cb, sa + sb)


def _enumerated(oracle: FrequencyOracle):
    """(P, S) = (output_distribution, output_supports) as float arrays, or _Skip if not enumerable."""
    try:
        P = np.asarray(oracle.output_distribution(), dtype=np.float64)
        S = np.asarray(oracle.output_supports(), dtype=np.float64)
    except (ValueError, NotImplementedError) as exc:
        raise _Skip(f"no output enumeration ({exc})") from None
    return P, S


# -- the checks ----------------------------------------------------------------------------------------
def check_interface(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    from ..oracles import available, oracle_class

    p, q = float(oracle.p), float(oracle.q)
    if not (0.0 <= q < p <= 1.0):
        raise _fail(oracle, "interface", f"needs 0 <= q < p <= 1, got p = {p!r}, q = {q!r}")
    cls = oracle_class(oracle.name) if oracle.name in available(sketches=True, longitudinal=True) else None
    if cls is not None and not isinstance(oracle, cls):
        raise _fail(oracle, "interface", f"the name {oracle.name!r} is registered to {cls.__name__}")
    tc = _histogram(oracle.d)
    reports = oracle.perturb(np.repeat(np.arange(oracle.d), tc), gen)
    counts = oracle.aggregate(reports, device="numpy")
    if np.shape(counts) != (oracle.d,):
        raise _fail(oracle, "interface", f"aggregate returned shape {np.shape(counts)}, not ({oracle.d},)")
    sums = np.asarray(oracle.support_matrix(reports)).sum(axis=0)
    if not np.allclose(sums, counts, rtol=0, atol=1e-9):
        raise _fail(oracle, "interface", "support_matrix(r).sum(axis=0) differs from aggregate(r)")
    est = oracle.estimate(counts, int(tc.sum()))
    again = type(oracle).from_estimate(est)
    if (again.p, again.q, again.structural_params()) != (oracle.p, oracle.q, oracle.structural_params()):
        raise _fail(oracle, "interface", _rebuilt_differs(oracle, again, est))


def _rebuilt_differs(oracle: FrequencyOracle, again: FrequencyOracle, est) -> str:
    """What differs between an oracle and the one ``from_estimate`` rebuilt from its estimate, and what
    to do: each structural parameter that differs (this oracle's value, the rebuilt one's, what the
    estimate's meta recorded), and the fix, since the usual cause is a ``params()`` that does not
    return them (the estimate then records nothing and the rebuild takes the defaults)."""
    mine, theirs = oracle.structural_params(), again.structural_params()
    diff = [f"{k} = {mine.get(k)!r} here, {theirs.get(k)!r} rebuilt (the estimate records "
            f"{est.meta[k]!r})" if k in est.meta else f"{k} = {mine.get(k)!r} here, {theirs.get(k)!r} rebuilt (the "
            f"estimate does not record {k})" for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    if not diff:
        diff = [f"p, q = {oracle.p!r}, {oracle.q!r} here, {again.p!r}, {again.q!r} rebuilt"]
    missing = [k for k in type(oracle).structural if k not in oracle.params()]
    fix = (f"; return {', '.join(missing)} from params() (the estimate records what params() returns), e.g. def params(self): return {{**super().params(), "
           + ", ".join(f"{k!r}: self.{k}" for k in missing) + "}" if missing else
           "; list every constructor parameter that changes p, q or the counts in structural, and return it "
           "from params()")
    return "from_estimate rebuilt another configuration: " + "; ".join(diff) + fix


def check_epsilon(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    P, S = _enumerated(oracle)
    d = oracle.d
    if P.shape[0] != d or S.shape != P.shape:
        raise _fail(oracle, "epsilon", f"output_distribution {P.shape} and output_supports {S.shape} must be (d, |Y|)")
    if np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise _fail(oracle, "epsilon", "a row of output_distribution is not a probability distribution")
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = P.min(axis=0), P.max(axis=0)
        ratio = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)
    worst = float(np.max(ratio))
    if worst > oracle.epsilon * (1 + 1e-9) + 1e-12:
        raise _fail(oracle, "epsilon", f"max log P[y|x]/P[y|x'] = {worst:.6g} > ε = {oracle.epsilon:g}")
    support = P @ S.T  # (x, v): Pr[a report of a user with value x supports v]
    want = np.where(np.eye(d, dtype=bool), oracle.p, oracle.q)
    if oracle.pure and not np.allclose(support, want, rtol=1e-9, atol=1e-12):
        raise _fail(oracle, "epsilon", "Pr[report supports v | x] is not p (v = x) and q (v ≠ x) by enumeration")
    sizes = S.sum(axis=0).astype(np.int64)
    law = np.stack([np.bincount(sizes, weights=P[x], minlength=d + 1) for x in range(d)])
    try:
        pmf = np.asarray(oracle.support_size_pmf(), dtype=np.float64)
    except ValueError:
        pmf = None
    if pmf is not None and not np.allclose(law, pmf[None, :], rtol=1e-9, atol=1e-12):
        raise _fail(oracle, "epsilon", "support_size_pmf differs from the enumerated support-size law")
    from ..oracles.jointlaw import count_moments

    tc = _histogram(d)
    _, cov = count_moments(oracle, tc)
    ab = type(oracle).pair_covariance(oracle.p, oracle.q, d, {**oracle.params(), **oracle.structural_params()})
    if ab is not None:
        f = tc / tc.sum()
        want_cov = tc.sum() * (ab[0] + ab[1] * (f[:, None] + f[None, :]))
        off = ~np.eye(d, dtype=bool)
        if not np.allclose(cov[off], want_cov[off], rtol=1e-8, atol=1e-10):
            raise _fail(oracle, "epsilon", "pair_covariance's (a, b) differ from the enumerated covariance")


def check_joint_law(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    tc = _histogram(oracle.d)
    fast = np.array([oracle.sample_counts(tc, gen) for _ in range(reps)], dtype=np.float64)
    batch = np.asarray(oracle.sample_counts_batch(tc, reps, gen), dtype=np.float64)
    real = _real_counts(oracle, tc, reps, gen)
    if batch.shape != fast.shape:
        raise _fail(oracle, "joint_law", f"sample_counts_batch returned shape {batch.shape}, not {fast.shape}")
    from ..oracles.jointlaw import count_moments

    try:
        _enumerated(oracle)  # raises _Skip when the outputs do not enumerate
        mean, cov = count_moments(oracle, tc)
    except _Skip:
        pairs = {"fast vs real": _two_sample_z(fast, real), "batch vs fast": _two_sample_z(batch, fast)}
    else:
        pairs = {f"{path} vs the enumerated law": _moment_z(x, mean, cov)
                 for path, x in (("fast path", fast), ("real path", real), ("sample_counts_batch", batch))}
    from scipy.stats import chi2

    k = len(pairs) * 2
    for what, (zm, zc) in pairs.items():
        bound = _z_bound(alpha / k, zm.size + zc.size)
        finite = zm[np.isfinite(zm)]
        chi = float(np.sum(finite ** 2))
        if not np.all(np.isfinite(zm)) or not np.all(np.isfinite(zc)):
            raise _fail(oracle, "joint_law", f"{what}: a moment with zero spread differs")
        if max(zm.max(), zc.max()) > bound:
            raise _fail(oracle, "joint_law", f"{what}: max |z| = {max(zm.max(), zc.max()):.2f} > {bound:.2f} "
                                             f"(Bonferroni, α = {alpha:g})")
        if chi > chi2.isf(alpha / k, finite.size):
            raise _fail(oracle, "joint_law", f"{what}: χ² of the means {chi:.1f} > its {1 - alpha / k:.6f} quantile")


def check_variance(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    tc = _histogram(oracle.d)
    n = int(tc.sum())
    f = tc / n
    if oracle.pure:
        want = np.asarray(oracle.variance(f, n), dtype=np.float64)
    elif hasattr(oracle, "variance_given_hashes"):
        want = np.asarray(oracle.variance_given_hashes(f, n), dtype=np.float64)
    else:
        raise _Skip("not pure and no variance_given_hashes: its variance is over hash families, not one instance")
    est = np.array([oracle.estimate(oracle.sample_counts(tc, gen), n).f_tilde for _ in range(reps)])
    xc = est - est.mean(axis=0)
    var = (xc ** 2).sum(axis=0) / (reps - 1)
    se = (xc ** 2).std(axis=0, ddof=1) / math.sqrt(reps)
    z = np.abs(var - want) / np.where(se > 0, se, 1.0)
    bound = _z_bound(alpha, oracle.d)
    if z.max() > bound:
        v = int(z.argmax())
        raise _fail(oracle, "variance", f"Monte-Carlo Var f̃_{v} = {var[v]:.6g}, the oracle states {want[v]:.6g} "
                                        f"(|z| = {z[v]:.1f} > {bound:.2f})")


def check_estimate(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    tc = _histogram(oracle.d)
    n = int(tc.sum())
    c = oracle.sample_counts(tc, gen)
    est = oracle.estimate(c, n)
    want = (np.asarray(c, dtype=np.float64) / n - oracle.q) / (oracle.p - oracle.q)
    if not np.allclose(est.f_tilde, want, rtol=1e-12, atol=1e-12):
        raise _fail(oracle, "estimate", "estimate(c, n).f_tilde is not (c/n − q)/(p − q)")
    if est.oracle != oracle.name or any(est.meta.get(k) != v for k, v in oracle.params().items()):
        raise _fail(oracle, "estimate", "the estimate does not record the oracle's name and parameters")


def check_channel(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    ch = Channel.from_oracle(oracle)
    if ch.d != oracle.d:
        raise _fail(oracle, "channel", f"channel_blocks() has d = {ch.d}, not {oracle.d}")


def check_kernel(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    from .. import kernels

    if "cpu" not in oracle.kernel_devices:
        raise _Skip("aggregate counts with numpy only (kernel_devices declares no 'cpu')")
    if not kernels.numba_available():
        raise _Skip("Numba is not installed: the numpy path is the only one")
    tc = _histogram(oracle.d) * 30
    reports = oracle.perturb(np.repeat(np.arange(oracle.d), tc), gen)
    ref = oracle.aggregate(reports, device="numpy")
    got = oracle.aggregate(reports, device="cpu")
    if np.asarray(got).dtype != np.asarray(ref).dtype or not np.array_equal(got, ref):
        raise _fail(oracle, "kernel", "aggregate(device='cpu') differs from the numpy path")


def check_shards(oracle: FrequencyOracle, gen, reps: int, alpha: float) -> None:
    try:
        oracle.report_columns()
    except ValueError as exc:
        raise _Skip(str(exc)) from None
    from ..aggregate.shards import from_batch, shard_partial, to_table, write_shard

    tc = _histogram(oracle.d)
    reports = oracle.perturb(np.repeat(np.arange(oracle.d), tc), gen)
    ref = oracle.aggregate(reports, device="numpy")
    back = from_batch(oracle, to_table(oracle, reports).to_batches()[0])
    if not np.array_equal(oracle.aggregate(back, device="numpy"), ref):
        raise _fail(oracle, "shards", "reports read back from a table count differently")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_shard(Path(tmp) / "shard.parquet", oracle, reports, row_group_rows=7)
        part = shard_partial(path, batch_rows=5, device="numpy")
    if part.n != int(tc.sum()) or not np.allclose(part.support_counts(oracle), ref, rtol=0, atol=1e-9):
        raise _fail(oracle, "shards", "the shard's partial (n, counts) differs from aggregate of its reports")


#: runs per input of the audit check (bounded: 4·reps, between 4000 and 20000)
AUDIT_SAMPLES = (4_000, 20_000)


def check_audit(oracle: FrequencyOracle, gen: np.random.Generator, reps: int, alpha: float) -> None:
    """The client as it runs, audited (:func:`ldpopt.audit.audit_client`): every field of its reports
    — over 1 and 5 rounds of users who keep their state, when it has ``clients`` — from the pair (0, 1)
    and one random pair, attacked by its support likelihood ratio, a learned classifier and a replay
    of reported seeds; fails when the Clopper–Pearson lower bound (confidence 1 − α) exceeds its
    stated ε (``epsilon_rounds(τ)``, or ``epsilon``)."""
    from ..audit import audit_client

    samples = int(min(AUDIT_SAMPLES[1], max(AUDIT_SAMPLES[0], 4 * reps)))
    rounds = (1, 5) if callable(getattr(oracle, "clients", None)) else (1,)
    for tau in rounds:
        r = audit_client(oracle, tau=tau, samples=samples, alpha=alpha, extra_pairs=1, rng=gen)
        if r.violated:
            raise _fail(oracle, "audit", f"its reports prove ε >= {r.epsilon_lb:.4g} > the stated {r.stated:.4g} "
                                         f"over {tau} round(s) (attack {r.attack!r}, pair {r.pair}, {r.samples} "
                                         f"runs per input, confidence {r.confidence:g})")


#: the checks, in the order run
CHECKS = {"interface": check_interface, "epsilon": check_epsilon, "joint_law": check_joint_law,
          "variance": check_variance, "estimate": check_estimate, "channel": check_channel,
          "kernel": check_kernel, "shards": check_shards, "audit": check_audit}


def check_oracle(oracle: FrequencyOracle, checks=None, reps: int = 2000, alpha: float = 1e-4,
                 seed: int = 0) -> OracleReport:
    """Run the conformance checks (module notes) on ``oracle``, a small instance.

    Parameters
    ----------
    oracle : FrequencyOracle
        The oracle instance (keep d small, 4–8: the checks enumerate its outputs).
    checks : iterable of str, optional
        Names from :data:`CHECKS` (default: all).
    reps : int
        Monte-Carlo draws per path for ``joint_law`` and ``variance`` (≥ 200).
    alpha : float
        Family-wise false-alarm rate of each statistical check, in (0, 0.5).
    seed : int
        Seed of the draws (fixed: a given oracle passes or fails deterministically).

    Returns
    -------
    OracleReport

    Raises
    ------
    AssertionError
        Naming the oracle and the property that fails.
    TypeError
        If ``oracle`` is not a :class:`~ldpopt.oracles.FrequencyOracle`.
    ValueError
        If a check name is unknown, ``reps`` < 200 or ``alpha`` is not in (0, 0.5).

    Examples
    --------
    >>> from ldpopt import oracles, testing
    >>> report = testing.check_oracle(oracles.get("oue", 1.0, 4), checks=["epsilon", "estimate", "channel"], reps=200)
    >>> report.passed
    ['epsilon', 'estimate', 'channel']
    >>> testing.check_oracle(oracles.get("oue", 1.0, 4), checks=["speed"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: checks must be among [...], got 'speed'
    """
    if not isinstance(oracle, FrequencyOracle):
        raise TypeError(f"oracle must be a FrequencyOracle, got {type(oracle).__name__}")
    names = list(CHECKS) if checks is None else list(checks)
    for c in names:
        if c not in CHECKS:
            raise ValueError(f"checks must be among {list(CHECKS)}, got {c!r}")
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 200:
        raise ValueError(f"reps must be an integer >= 200, got {reps!r}")
    if not 0.0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    report = OracleReport(oracle.name)
    for i, c in enumerate(names):
        gen = np.random.default_rng([int(seed), i])
        try:
            CHECKS[c](oracle, gen, reps, float(alpha))
        except _Skip as why:
            report.skipped[c] = str(why)
        else:
            report.passed.append(c)
    return report
