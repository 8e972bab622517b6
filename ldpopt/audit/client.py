"""Audit a client as it runs: every field of the reports the server receives, over τ rounds, from
pairs of neighbouring inputs, attacked by the model's likelihood ratio, a learned classifier and a
seed-reuse replay; an ε lower bound with exact Clopper–Pearson confidence.

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import as_generator, check_n
from ..oracles.base import FrequencyOracle
from .attacks import NaiveBayes, best_threshold, report_matrix, tokens
from .bounds import epsilon_bound

__all__ = ["ATTACKS", "ClientAudit", "audit_client"]

#: the attacks: "model" (the oracle's support likelihood ratio read from the public fields, summed over
#: rounds), "learned" (naive Bayes over hashed tokens of every field), "seed" (grey-box: every 64-bit
#: field replayed as the seed of the user's memo)
ATTACKS = ("model", "learned", "seed")
#: users per generated block (the reports of a block are made in one vectorised call)
BLOCK = 1 << 16


@dataclass(frozen=True)
class ClientAudit:
    """The audit of one client: ``epsilon_lb`` holds with confidence ``confidence`` (−inf when no
    test separates the inputs); ``violated`` when it exceeds the ``stated`` ε. ``selection``: per
    attack, the best bound on the selection half (the pair, attack, threshold and direction chosen
    there are tested once on the other half, which gives ``epsilon_lb``).

    Parameters
    ----------
    client : str
        What was audited.
    stated : float
        The ε it states for ``tau`` rounds.
    epsilon_lb : float
        The audited lower bound.
    confidence : float
        1 − α.
    attack : str
        The attack that gave it.
    pair : tuple
        The neighbouring inputs (x, x′).
    tau : int
        Rounds per user.
    samples : int
        Runs per input (both halves).
    seconds : float
        Wall time of the audit.
    selection : dict
        Attack → best bound on the selection half.

    Examples
    --------
    >>> from ldpopt.audit import ClientAudit
    >>> ClientAudit("grr", 1.0, 1.2, 0.999, "model", (0, 1), 1, 1000, 0.1).violated
    True
    """

    client: str
    stated: float
    epsilon_lb: float
    confidence: float
    attack: str
    pair: tuple
    tau: int
    samples: int
    seconds: float
    selection: dict = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        """True when the client is provably (at the confidence) less private than stated.

        Examples
        --------
        >>> from ldpopt.audit import ClientAudit
        >>> ClientAudit("grr", 1.0, 0.9, 0.999, "model", (0, 1), 1, 1000, 0.1).violated
        False
        """
        return self.epsilon_lb > self.stated

    def row(self) -> dict:
        """The audit as a plain dict (a table row, JSON).

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt.audit import ClientAudit
        >>> ClientAudit("grr", 1.0, 0.9, 0.999, "model", (0, 1), 1, 1000, 0.1).row()["audited"]
        0.9
        """
        return {"client": self.client, "tau": self.tau, "stated": self.stated, "audited": self.epsilon_lb,
                "confidence": self.confidence, "attack": self.attack, "pair": [_plain(x) for x in self.pair],
                "samples": self.samples, "seconds": round(self.seconds, 3),
                "selection": {k: float(v) for k, v in self.selection.items()}}


def _plain(x):
    a = np.asarray(x)
    v = a.item() if a.ndim == 0 else a.tolist()
    if isinstance(v, float) and math.isnan(v):
        return None  # JSON has no NaN (a key–value user's row: NaN where she holds no key)
    return [_plain(t) for t in v] if isinstance(v, list) else v


def _world(x, m: int) -> np.ndarray:
    a = np.asarray(x)
    return np.full(m, a.item(), dtype=a.dtype) if a.ndim == 0 else np.broadcast_to(a, (m, *a.shape)).copy()


class _Runner:
    """τ rounds of reports of m users on one input, from an oracle or a callable."""

    def __init__(self, client, tau: int):
        self.client, self.tau = client, tau
        self.oracle = client if isinstance(client, FrequencyOracle) else None
        self.longitudinal = self.oracle is not None and callable(getattr(client, "clients", None))

    def run(self, values: np.ndarray, gen: np.random.Generator) -> list[Any]:
        if self.longitudinal:
            users = self.client.clients(values.shape[0], gen)
            return [users.report(values, gen) for _ in range(self.tau)]
        if self.oracle is not None:
            return [self.client.perturb(values, gen)]
        if self.tau == 1:
            return [self.client(values, gen)]
        out = self.client(values, gen, self.tau)
        if not isinstance(out, (list, tuple)) or len(out) != self.tau:
            raise ValueError(f"client must return a list of tau = {self.tau} rounds of reports when called with tau")
        return list(out)


class _Scores:
    """The attacks' scores of one block of users (model and seed need no training)."""

    def __init__(self, runner: _Runner, pair, attacks, model_score, replay=None):
        self.runner, self.pair, self.attacks = runner, pair, attacks
        self.model_score = model_score
        o = runner.oracle
        self.memo = (replay or getattr(o, "_memo", None)) if "seed" in attacks else None

    def model(self, reps: list) -> np.ndarray | None:
        if "model" not in self.attacks:
            return None
        x, x2 = self.pair
        if self.model_score is not None:
            return np.asarray(self.model_score(reps, x, x2), dtype=np.float64)
        o = self.runner.oracle
        if o is None:
            return None
        s = 0.0
        for r in reps:
            try:
                S = o.support_matrix(r)
            except (ValueError, TypeError, NotImplementedError, IndexError):
                return None  # the oracle cannot say what a report supports: the attack does not apply
            s = s + S[:, int(x)].astype(np.float64) - S[:, int(x2)]
        return np.asarray(s, dtype=np.float64)

    def seed(self, mats: list[np.ndarray]) -> np.ndarray | None:
        if self.memo is None:
            return None
        x, x2 = self.pair
        m = mats[0].shape[0]
        best = None
        for c in range(mats[0].shape[1]):
            col = mats[0][:, c]
            if np.abs(col).max(initial=0) < (1 << 32):  # not a 64-bit seed-like field
                continue
            seed = col.view(np.uint64)
            m1 = report_matrix(self.memo(seed, np.full(m, int(x), dtype=np.int64), seed), m)
            m0 = report_matrix(self.memo(seed, np.full(m, int(x2), dtype=np.int64), seed), m)
            s = np.zeros(m)
            for X in mats:
                k = min(X.shape[1], m1.shape[1])
                s += (X[:, :k] == m1[:, :k]).sum(axis=1) - (X[:, :k] == m0[:, :k]).sum(axis=1)
            best = s if best is None else best + s
        return best


def _block_seeds(gen: np.random.Generator, count: int) -> np.ndarray:
    return gen.integers(0, np.iinfo(np.int64).max, size=count, dtype=np.int64)


def _blocks(samples: int):
    for start in range(0, samples, BLOCK):
        yield min(BLOCK, samples - start)


def _generate(runner: _Runner, x, m: int, seed: int) -> tuple[list, list[np.ndarray]]:
    reps = runner.run(_world(x, m), np.random.default_rng(seed))
    return reps, [report_matrix(r, m) for r in reps]


def _half(runner, scorer, pair, samples, seeds, nb: NaiveBayes | None, fit: bool):
    """Scores of both inputs over one half (regenerated block by block from ``seeds``)."""
    out: dict[str, list[list[np.ndarray]]] = {a: [[], []] for a in ATTACKS}
    counts = [np.zeros(1 << (nb.bits if nb else 1)), np.zeros(1 << (nb.bits if nb else 1))]
    for w, x in enumerate(pair):
        for b, m in enumerate(_blocks(samples)):
            reps, mats = _generate(runner, x, m, int(seeds[w, b]))
            s = scorer.model(reps)
            if s is not None:
                out["model"][w].append(s)
            s = scorer.seed(mats)
            if s is not None:
                out["seed"][w].append(s)
            if nb is not None:
                t = tokens(mats, nb.bits)
                if fit:
                    counts[w] += np.bincount(t.ravel(), minlength=1 << nb.bits)
                else:
                    out["learned"][w].append(nb.score(t))
    return out, counts


def audit_client(client: FrequencyOracle | Callable, *, stated: float | None = None, tau: int = 1,
                 pairs=None, d: int | None = None, extra_pairs: int = 2, samples: int = 20_000,
                 alpha: float = 1e-3, delta: float = 0.0, attacks=ATTACKS, model_score=None,
                 replay=None, name: str | None = None, rng=0) -> ClientAudit:
    """Lower-bound the ε of a client from the exact reports it sends (module notes).

    Each pair (x, x′) — the model's worst pair (0, 1) first for an oracle or a domain ``d``, then
    ``extra_pairs`` drawn at random — is run ``samples`` times per input: users on x and users on x′,
    each sending ``tau`` rounds (a longitudinal oracle's users keep their state over the rounds).
    Every field of every report is read. On a quarter of the runs the attacks score each user — "model":
    the oracle's support likelihood ratio (:math:`Σ` over rounds of :math:`S(y)[x] - S(y)[x']`, the exact ratio of a
    pure (p, q) oracle) or ``model_score``; "learned": naive Bayes over hashed tokens of every field,
    fitted on a quarter of the runs of its own; "seed": each 64-bit field taken as the seed of the memo and the memo
    replayed (an oracle with a grey-box ``_memo``) — and the pair, attack, threshold and direction
    of the largest Clopper–Pearson bound there are chosen; the last half tests that one event,
    whose bound (:func:`~ldpopt.audit.bounds.epsilon_bound`) is the result.

    Parameters
    ----------
    client : FrequencyOracle or callable
        An oracle (its ``perturb``, or ``clients(n, rng).report`` τ times when it has ``clients``),
        or ``client(values, rng)`` returning one round's reports for ``len(values)`` users (an array
        or a tuple of arrays, one row per user); with ``tau`` > 1, ``client(values, rng, tau)``
        returning a list of τ rounds.
    stated : float, optional
        The ε the client states over ``tau`` rounds (an oracle's ``epsilon_rounds(tau)`` or
        ``epsilon`` by default; required for a callable).
    tau : int
        Rounds per user, >= 1 (> 1 needs a longitudinal oracle or a callable taking ``tau``).
    pairs : list of (x, x′), optional
        Neighbouring inputs (each x what the client takes for one user: an int, or a row). Default:
        (0, 1) and ``extra_pairs`` random distinct pairs of [0, d).
    d : int, optional
        Domain of a callable's values (default pairs); an oracle's own ``d`` by default.
    extra_pairs : int
        Random pairs added to the default, >= 0.
    samples : int
        Runs per input, >= 200 (a quarter fits the classifier, a quarter selects, half tests).
    alpha : float
        1 − confidence, in (0, 1).
    delta : float
        δ of the statement (0 for pure ε), in [0, 1).
    attacks : sequence of str
        A subset of :data:`ATTACKS`.
    model_score : callable, optional
        ``model_score(rounds, x, x2)`` → per-user score (large: x), replacing the oracle's support
        likelihood ratio (the central samplers: the noisy value).
    replay : callable, optional
        ``replay(secret, values, public)`` → what a user whose private seed were ``secret`` (uint64,
        one per user) would report for ``values`` without fresh noise (the seed attack's hypothesis:
        a reported 64-bit field seeds the private randomness). Default: an oracle's grey-box
        ``_memo`` (the longitudinal clients'); a client with neither gets no seed attack.
    name : str, optional
        The client's name in the result.
    rng : int, Generator or "secure"
        Seeds every block (the same seed gives the same audit).

    Returns
    -------
    ClientAudit

    Raises
    ------
    ValueError
        On a bad argument (named), before any run.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.audit import audit_client
    >>> r = audit_client(oracles.get("grr", 1.0, 4), samples=20_000, extra_pairs=0, rng=0)
    >>> 0.7 < r.epsilon_lb <= r.stated, r.attack
    (True, 'model')
    """
    tau = check_n(tau, "tau")
    samples = check_n(samples, "samples")
    if samples < 200:
        raise ValueError(f"samples must be >= 200 (fit, select and test runs), got {samples}")
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    dl = float(delta)
    if not 0.0 <= dl < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    attacks = tuple(attacks)
    if not attacks or any(x not in ATTACKS for x in attacks):
        raise ValueError(f"attacks must be a non-empty subset of {ATTACKS}, got {attacks!r}")
    if replay is not None and not callable(replay):
        raise ValueError(f"replay must be a callable (secret, values, public) or None, got {type(replay).__name__}")
    if isinstance(extra_pairs, bool) or not isinstance(extra_pairs, (int, np.integer)) or extra_pairs < 0:
        raise ValueError(f"extra_pairs must be an integer >= 0, got {extra_pairs!r}")
    oracle: Any = client if isinstance(client, FrequencyOracle) else None
    if oracle is None and not callable(client):
        raise TypeError(f"client must be a FrequencyOracle or a callable, got {type(client).__name__}")
    if oracle is not None:
        d = oracle.d
        if tau > 1 and not callable(getattr(oracle, "clients", None)):
            raise ValueError(f"tau must be 1 for {oracle.name!r}: it keeps no state over rounds (no clients)")
        if stated is None:
            stated = oracle.epsilon_rounds(tau) if callable(getattr(oracle, "epsilon_rounds", None)) else oracle.epsilon
    if stated is None:
        raise ValueError("stated must be given for a callable client (the ε it claims over tau rounds)")
    stated = float(stated)
    gen = as_generator(rng)
    if pairs is None:
        if d is None or int(d) < 2:
            raise ValueError(f"pairs must be given, or d >= 2 for the default pairs, got d = {d!r}")
        d = int(d)
        pairs = [(0, 1)]
        for _ in range(int(extra_pairs)):
            u, w = gen.choice(d, size=2, replace=False)
            pairs.append((int(u), int(w)))
    pairs = [tuple(p) for p in pairs]
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError(f"pairs must be a non-empty list of (x, x') pairs, got {pairs!r}")
    label = str(name or (oracle.name if oracle is not None else getattr(client, "__name__", type(client).__name__)))
    runner = _Runner(client, tau)
    half = samples // 2
    quarter = half // 2
    t0 = time.perf_counter()
    best: tuple = (-math.inf, None, None, 0.0, 1, None)  # bound, pair index, attack, threshold, direction, model
    selection: dict[str, float] = {}
    plans = []
    for i, pair in enumerate(pairs):
        nq, nh = len(list(_blocks(quarter))), len(list(_blocks(half)))
        seeds_fit = _block_seeds(gen, 2 * nq).reshape(2, nq)
        seeds_sel = _block_seeds(gen, 2 * nq).reshape(2, nq)
        plans.append(_block_seeds(gen, 2 * nh).reshape(2, nh))
        scorer = _Scores(runner, pair, attacks, model_score, replay)
        nb = NaiveBayes() if "learned" in attacks else None
        if nb is not None:  # fitted on its own quarter, so the selection quarter scores unseen runs
            counts = _half(runner, _Scores(runner, pair, (), None), pair, quarter, seeds_fit, nb, fit=True)[1]
            c1, c0 = counts[0] + 0.5, counts[1] + 0.5
            nb.weights = np.log(c1 / c1.sum()) - np.log(c0 / c0.sum())
        sc = _half(runner, scorer, pair, quarter, seeds_sel, nb, fit=False)[0]
        for att in attacks:
            s1, s0 = sc[att]
            if not s1:
                continue
            t, sign, bound = best_threshold(np.concatenate(s1), np.concatenate(s0), a, dl)
            selection[att] = max(selection.get(att, -math.inf), bound)
            if bound > best[0] or best[1] is None:
                best = (bound, i, att, t, sign, nb)
    if best[1] is None:
        raise ValueError(f"no attack of {attacks} applies to {label!r} (give model_score, or add 'learned')")
    _, i, att, t, sign, nb = best
    pair = pairs[i]
    scorer = _Scores(runner, pair, (att,), model_score, replay)
    sc, _ = _half(runner, scorer, pair, half, plans[i], nb if att == "learned" else None, fit=False)
    s1, s0 = np.concatenate(sc[att][0]), np.concatenate(sc[att][1])
    if sign > 0:
        x1, x0 = np.count_nonzero(s1 >= t), np.count_nonzero(s0 >= t)
    else:
        x1, x0 = np.count_nonzero(s1 <= t), np.count_nonzero(s0 <= t)
    lb = float(epsilon_bound(x1, s1.size, x0, s0.size, a, dl))
    return ClientAudit(label, stated, lb, 1.0 - a, att, pair, tau, 2 * quarter + half, time.perf_counter() - t0, selection)
