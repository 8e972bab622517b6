"""What privacy an estimate's numbers were produced under, in one value: :class:`PrivacyStatement`,
read from and written to ``meta["privacy"]`` (one plain-JSON dict, the form every sidecar carries),
and the accountants that fill it for several rounds of reports (:func:`compose`).

Three models (``meta["privacy"]["model"]``):

- ``"local"``: ε per report under the ``replace`` relation (one user's value changed); over τ rounds
  of fresh reports composed by :func:`compose` (exact optimal composition by default), or, for a
  memoised longitudinal oracle, the oracle's own ε over the horizon (``composition`` says which);
- ``"shuffled"``: n users' ε₀-LDP reports shuffled, a central (ε, δ) from :mod:`.shuffle`;
- ``"central"``: a central noise mechanism on the counts (:mod:`.central`), its scale and (ε, δ).

Notes: docs/notes/privacy.md, section ``ldpopt.privacy.statement``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from . import DEFAULT_DELTA

__all__ = ["ACCOUNTANTS", "DEFAULT_DELTA", "MODELS", "PrivacyStatement", "compose", "local", "statement_of"]

#: the privacy models a statement names
MODELS = ("local", "shuffled", "central")

#: composition accountants of :func:`compose`: name → what a statement prints
ACCOUNTANTS: dict[str, str] = {
    "exact": "exact optimal composition (Kairouz, Oh & Viswanath 2015, Thm 3.3)",
    "advanced": "advanced composition (Dwork, Rothblum & Vadhan 2010, Thm III.3)",
    "basic": "basic composition (τε)",
}


def _real(value, name: str, *, low: float, low_open: bool, high: float = math.inf, high_open: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    bad_low = v <= low if low_open else v < low
    bad_high = v >= high if high_open else v > high
    if not math.isfinite(v) or bad_low or bad_high:
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {lo}{low:g}, {high:g}{hi}, got {value!r}")
    return v


def _rounds(rounds) -> int:
    if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or int(rounds) < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    return int(rounds)


def _exact_delta(eps_g: float, epsilon: float, rounds: int) -> float:
    # τ-fold randomised response at ε (the worst case of τ ε-DP mechanisms, KOV 2015 Thm 3.3):
    # i ~ Bin(τ, 1/(1 + e^ε)) flips, privacy loss ε(τ − 2i); δ(ε_g) = E[(1 − e^{ε_g − L})₊]
    import numpy as np
    from scipy import stats

    i = np.arange(rounds + 1, dtype=np.float64)
    loss = epsilon * (rounds - 2.0 * i)
    from scipy.special import expit

    w = stats.binom.pmf(i, rounds, expit(-epsilon))  # 1/(1 + e^ε), without overflow
    return float(np.dot(w, -np.expm1(np.minimum(eps_g - loss, 0.0))))


def compose(epsilon, rounds, delta=DEFAULT_DELTA, accountant: str = "exact") -> float:
    r"""ε over ``rounds`` reports of one user, each ε-LDP with fresh randomness, at δ.

    Parameters
    ----------
    epsilon : float
        ε of one report, > 0.
    rounds : int
        Number of reports τ, >= 1.
    delta : float, default 1e-6
        δ of the composed guarantee, in [0, 1) (``"basic"`` ignores it; ``"advanced"`` needs > 0).
    accountant : {"exact", "advanced", "basic"}, default "exact"
        ``"exact"``: the optimal composition of τ ε-DP mechanisms (Kairouz, Oh & Viswanath 2015,
        Thm 3.3): the smallest :math:`ε_g` with :math:`Σ_i \mathrm{Bin}(i; τ, 1/(1 + e^ε)) (1 - e^{ε_g - ε(τ - 2i)})_+ ≤ δ`,
        the hockey-stick divergence of τ-fold randomised response (their worst case), solved by
        Brent's method to 1e-10 relative and rounded up; never above the other two.
        ``"advanced"``: :math:`ε \sqrt{2τ \ln(1/δ)} + τε(e^ε - 1)`, capped at τε. ``"basic"``: τε.

    Returns
    -------
    float
        The composed ε (δ as given). It holds for any two sequences of the user's values (each
        round under the ``replace`` relation), adaptively chosen mechanisms included.

    Raises
    ------
    ValueError
        ``epsilon`` not > 0, ``rounds`` not an integer >= 1, ``delta`` outside [0, 1) (or 0 with
        ``"advanced"``), or an unknown ``accountant``.
    TypeError
        ``epsilon`` or ``delta`` not a real number.

    References
    ----------
    Kairouz, Oh & Viswanath, *The composition theorem for differential privacy*, ICML 2015, Thm 3.3
    (the exact region); Dwork, Rothblum & Vadhan, *Boosting and differential privacy*, FOCS 2010,
    Thm III.3 (advanced composition); Dwork & Roth 2014, Thm 3.16 (basic). Cross-checked in the tests
    against dp-accounting's privacy-loss-distribution accountant where it is installed.

    Examples
    --------
    >>> from ldpopt.privacy.statement import compose
    >>> [round(compose(0.1, 100, 1e-6, a), 3) for a in ("exact", "advanced", "basic")]
    [4.775, 6.308, 10.0]
    >>> round(compose(0.5, 10, 1e-6), 4)  # few rounds, small δ: little to gain over τε
    4.9999
    """
    epsilon = _real(epsilon, "epsilon", low=0.0, low_open=True)
    rounds = _rounds(rounds)
    delta = _real(delta, "delta", low=0.0, low_open=False, high=1.0)
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {sorted(ACCOUNTANTS)}, got {accountant!r}")
    basic = rounds * epsilon
    if accountant == "basic" or rounds == 1 and accountant != "exact":
        return basic
    if accountant == "advanced":
        if delta == 0.0:
            raise ValueError("delta must be > 0 for the advanced composition theorem, got 0.0")
        grow = math.expm1(epsilon) if epsilon < 700.0 else math.inf  # past 700 it overflows: basic is smaller
        adv = epsilon * math.sqrt(2.0 * rounds * math.log(1.0 / delta)) + rounds * epsilon * grow
        return min(adv, basic)
    from scipy import optimize

    if _exact_delta(0.0, epsilon, rounds) <= delta:
        return 0.0
    if delta == 0.0 or _exact_delta(basic * (1 - 1e-12), epsilon, rounds) > delta:
        return basic
    root = optimize.brentq(lambda e: _exact_delta(e, epsilon, rounds) - delta, 0.0, basic, xtol=1e-12,
                           rtol=1e-10, maxiter=300)
    eps = min(root * (1 + 4e-10) + 1e-12, basic)
    while _exact_delta(eps, epsilon, rounds) > delta:  # kept so that the value returned always holds
        eps = min(eps * (1 + 1e-8) + 1e-12, basic)
    return eps


def local(epsilon, rounds=1, delta=DEFAULT_DELTA, accountant: str = "exact") -> dict:
    """The ``meta["privacy"]`` dict of local reports: ε per report, composed over ``rounds``.

    Parameters
    ----------
    epsilon : float
        ε of one report, > 0.
    rounds : int, default 1
        Fresh reports per user (no memoisation), >= 1.
    delta : float, default 1e-6
        δ of the composed guarantee (unused at one round).
    accountant : str, default "exact"
        As :func:`compose`.

    Returns
    -------
    dict
        ``{"model": "local", "relation": "replace", "epsilon", "rounds", "composition"}``, plus
        ``"epsilon_total"`` and ``"delta"`` over more than one round.

    Examples
    --------
    >>> from ldpopt.privacy.statement import local
    >>> round(local(0.2, rounds=50)["epsilon_total"], 3)
    6.884
    """
    epsilon = _real(epsilon, "epsilon", low=0.0, low_open=True)
    rounds = _rounds(rounds)
    if rounds == 1:
        return {"model": "local", "relation": "replace", "epsilon": epsilon, "rounds": 1, "composition": "one report"}
    total = compose(epsilon, rounds, delta, accountant)
    return {"model": "local", "relation": "replace", "epsilon": epsilon, "rounds": rounds,
            "composition": accountant, "epsilon_total": total, "delta": 0.0 if accountant == "basic" else float(delta)}


# the neighbouring relations over a user's value sequence (ldpopt.oracles.horizon), as printed
_HORIZONS = {"any": "any two value sequences", "memo-pattern": "which rounds share a memo public"}


def _num(x) -> str:
    return f"{x:.4g}"


def _get(d: dict, key: str, kind: str, *, required: bool = True):
    if key not in d:
        if required:
            raise ValueError(f"privacy[{key!r}] is required for the {kind} model; the record has {sorted(d)}")
        return None
    return d[key]


@dataclass(frozen=True)
class PrivacyStatement:
    """The privacy an estimate's numbers were produced under (immutable), read from the
    ``meta["privacy"]`` dict (:meth:`from_dict`, the constructor to use: it checks the record and
    fills these fields); ``str`` gives one readable line.

    Parameters
    ----------
    model : str
        ``"local"``, ``"shuffled"`` or ``"central"``.
    epsilon : float
        The guarantee's ε: per report (local, one round), over every round (local, composed or
        memoised), central (shuffled, central).
    delta : float
        The guarantee's δ (0 for pure ones).
    relation : str
        The neighbouring relation (``"replace"``: one user's value changed; ``"add-remove"``).
    record : dict
        The ``meta["privacy"]`` dict it was read from (plain JSON), written back by :meth:`as_dict`.

    Examples
    --------
    >>> from ldpopt.privacy.statement import PrivacyStatement
    >>> s = PrivacyStatement.from_dict({"model": "shuffled", "epsilon0": 1.0, "n": 10**6, "epsilon": 0.004335,
    ...                                 "delta": 1e-6, "accountant": "fmt-numerical"})
    >>> s.model, s.epsilon, s.delta, s.relation
    ('shuffled', 0.004335, 1e-06, 'replace')
    """

    model: str
    epsilon: float
    delta: float
    relation: str
    record: dict = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, privacy: dict) -> PrivacyStatement:
        """Read a ``meta["privacy"]`` dict (the shared schema: docs/notes/privacy.md).

        Parameters
        ----------
        privacy : dict
            ``model`` and its fields: local ``epsilon`` (per report), ``rounds``, ``composition``,
            optionally ``epsilon_total`` and ``delta``; shuffled ``epsilon0``, ``n``, ``epsilon``,
            ``delta``, ``accountant``; central ``mechanism``, ``scale``, ``epsilon``, ``delta``,
            ``n_known``, optionally ``contributions`` (cells one record is counted in, >= 1). ``relation`` defaults to ``"replace"`` (local, shuffled) or
            ``"add-remove"`` (central).

        Returns
        -------
        PrivacyStatement

        Raises
        ------
        ValueError
            Not a dict, an unknown model, or a required field missing or out of range (the message
            names the field).

        Examples
        --------
        >>> from ldpopt.privacy.statement import PrivacyStatement
        >>> print(PrivacyStatement.from_dict({"model": "local", "epsilon": 1.0}))
        local ε = 1 per report (replace), 1 round
        """
        if not isinstance(privacy, dict):
            raise ValueError(f"privacy must be a dict, got {type(privacy).__name__}")
        model = privacy.get("model")
        if model not in MODELS:
            raise ValueError(f"privacy['model'] must be one of {list(MODELS)}, got {model!r}")
        record = dict(privacy)
        eps = _real(_get(record, "epsilon", model), "privacy['epsilon']", low=0.0, low_open=False)
        delta = _real(record.get("delta", 0.0), "privacy['delta']", low=0.0, low_open=False, high=1.0)
        relation = record.get("relation", "add-remove" if model == "central" else "replace")
        if not isinstance(relation, str) or not relation:
            raise ValueError(f"privacy['relation'] must be a non-empty string, got {relation!r}")
        record["relation"] = relation
        if model == "local":
            rounds = record.get("rounds", 1)
            if rounds is not None:
                record["rounds"] = _rounds(rounds)
            total = record.get("epsilon_total")
            if total is not None:
                eps = _real(total, "privacy['epsilon_total']", low=0.0, low_open=False)
        elif model == "shuffled":
            _real(_get(record, "epsilon0", model), "privacy['epsilon0']", low=0.0, low_open=True)
            n = _get(record, "n", model)
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
                raise ValueError(f"privacy['n'] must be an integer >= 1, got {n!r}")
        else:
            _get(record, "mechanism", model)
            _real(_get(record, "scale", model), "privacy['scale']", low=0.0, low_open=True)
            if "contributions" in record:
                from .central import check_contributions

                check_contributions(record["contributions"], "privacy['contributions']")
        return cls(model=model, epsilon=eps, delta=delta, relation=relation, record=record)

    def as_dict(self) -> dict:
        """The ``meta["privacy"]`` dict (plain JSON values), as every sidecar writes it.

        Returns
        -------
        dict
            A copy of :attr:`record`.

        Examples
        --------
        >>> from ldpopt.privacy.statement import PrivacyStatement, local
        >>> PrivacyStatement.from_dict(local(1.0)).as_dict()["model"]
        'local'
        """
        return dict(self.record)

    def __str__(self) -> str:
        r = self.record
        if self.model == "local":
            per = r["epsilon"]
            rounds = r.get("rounds")
            comp = r.get("composition", "")
            if str(comp).startswith("memoised"):
                span = f"{rounds} rounds" if rounds else "any number of rounds"
                values = r.get("distinct_values", 1)
                of = "one value" if values == 1 else f"{values} values"
                horizon = f" ({_HORIZONS.get(r['horizon'], r['horizon'])})" if r.get("horizon") else ""
                return (f"local ε₁ = {_num(per)} per report ({self.relation}), memoised: ε = {_num(self.epsilon)} "
                        f"over {span} of {of}{horizon}")
            if not rounds or rounds == 1:
                return f"local ε = {_num(per)} per report ({self.relation}), 1 round"
            how = ACCOUNTANTS.get(comp, comp or "composed")
            delta = f", δ = {self.delta:.3g}" if self.delta else ""
            return (f"local ε = {_num(per)} per report ({self.relation}), {rounds} rounds: "
                    f"ε = {_num(self.epsilon)}{delta} over all rounds [{how}]")
        if self.model == "shuffled":
            from .shuffle import METHODS

            names = {acc: name for acc, name in METHODS.values()}
            acc = r.get("accountant", "")
            clamp = " (no amplification: ε = ε₀)" if r.get("clamped") else ""
            return (f"shuffled among n = {r['n']}: central (ε = {_num(self.epsilon)}, δ = {self.delta:.3g}) from "
                    f"ε₀ = {_num(r['epsilon0'])} per report ({self.relation}) [{names.get(acc, acc)}]{clamp}")
        from .central import MECHANISMS

        mech = MECHANISMS.get(r["mechanism"])
        label = r["mechanism"].replace("-", " ").capitalize() if mech is None else mech.name.replace("-", " ").title()
        scale_name = "σ" if (mech is not None and mech.scale_name == "sigma") else "b"
        guarantee = f"ε = {_num(self.epsilon)}" if not self.delta else f"(ε = {_num(self.epsilon)}, δ = {self.delta:.3g})"
        known = r.get("n_known")
        n_part = "" if known is None else (", n known" if known else ", n estimated from the noisy total")
        cells = r.get("contributions", 1)
        each = "" if cells == 1 else f", each record in {cells} counts"
        return f"central: {label} {scale_name} = {_num(r['scale'])} → {guarantee} ({self.relation}{each}){n_part}"


def statement_of(meta: dict, epsilon: float) -> PrivacyStatement:
    """The statement of an estimate: ``meta["privacy"]`` if recorded, else derived from its ε.

    Derived: local, one round, ε per report = ``epsilon``; where ``meta`` holds ``eps_1`` below
    ``epsilon`` (a memoised longitudinal oracle: :math:`ε_1` per report, :math:`ε_∞` = ``epsilon`` over any number of
    rounds of one value), that memoised statement.

    Parameters
    ----------
    meta : dict
        The estimate's meta.
    epsilon : float
        The estimate's ε.

    Returns
    -------
    PrivacyStatement

    Examples
    --------
    >>> from ldpopt.privacy.statement import statement_of
    >>> print(statement_of({"eps_1": 0.5}, 1.0))
    local ε₁ = 0.5 per report (replace), memoised: ε = 1 over any number of rounds of one value
    """
    if "privacy" in meta:
        return PrivacyStatement.from_dict(meta["privacy"])
    eps_1 = meta.get("eps_1")
    if isinstance(eps_1, numbers.Real) and not isinstance(eps_1, bool) and 0 < float(eps_1) < epsilon:
        return PrivacyStatement.from_dict({"model": "local", "relation": "replace", "epsilon": float(eps_1),
                                           "rounds": None, "composition": "memoised: ε∞ bounds every round of one value",
                                           "epsilon_total": float(epsilon)})
    return PrivacyStatement.from_dict(local(epsilon))
