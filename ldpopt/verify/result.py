"""One row of ``ldpopt verify``: a claim, the instance actually run, one named metric against one
tolerance, and a verdict.

Details: docs/experiments.md, section `ldpopt.verify.result`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np

HOLDS, FAILS, NOT_REFEREED = "holds", "fails", "not refereed"
VERDICTS = (HOLDS, FAILS, NOT_REFEREED)
#: comparison of ``value`` against ``tolerance`` that makes a row hold
OPS = {"<=": lambda v, t: v <= t, ">": lambda v, t: v > t, ">=": lambda v, t: v >= t,
       "==": lambda v, t: v == t}


def decide(value: float, op: str, tolerance: float | None) -> str:
    """``holds`` iff ``value op tolerance`` (NaN never holds); ``fails`` otherwise.

    Parameters
    ----------
    value : float
        The measured number.
    op : str
        The comparison, one of ``OPS`` (e.g. ``"<="``).
    tolerance : float or None
        The bound; None never holds.

    Returns
    -------
    str
        ``"holds"`` or ``"fails"``.

    Raises
    ------
    ValueError
        ``op`` unknown.

    Examples
    --------
    >>> from ldpopt import verify
    >>> verify.decide(1e-9, "<=", 1e-6), verify.decide(float("nan"), "<=", 1.0)
    ('holds', 'fails')
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {list(OPS)}, got {op!r}")
    if tolerance is None or value is None or math.isnan(float(value)) or math.isnan(float(tolerance)):
        return FAILS
    return HOLDS if OPS[op](float(value), float(tolerance)) else FAILS


@dataclass
class ClaimResult:
    """One checked claim on one instance.

    ``claim`` / ``statement``: id and words (with the paper's section); ``kind``: ``"equivalence"``,
    ``"monte-carlo"`` or ``"finding"``; the instance as run: ``oracle``, ``epsilon``, ``n``, ``d``,
    ``seed`` (``reps`` for Monte-Carlo rows); ``referee``: what decided (``"certificate"``, a solver
    name, ``"monte-carlo"``, ``"exact"``); ``metric`` (with ``unit``) ``op`` ``tolerance``: the
    deciding comparison, ``tolerance_basis`` how the tolerance was derived; ``verdict`` ∈
    :data:`VERDICTS` (``why`` says why a row was not refereed); ``expected``: True for a claim that
    should hold, None for a finding reported either way; ``metrics``: every other measured number.

    Parameters
    ----------
    claim, statement, kind : str
        The claim's id, words and kind.
    oracle, epsilon, n, d, seed
        The instance as run (None where not applicable).
    metric, unit : str
        The deciding number's name and unit.
    value : float
        Its value (None is stored as NaN).
    op : str
        The comparison.
    tolerance : float or None
        The bound.
    expected : bool or None
        True for a claim that should hold, None for a finding.
    referee, tolerance_basis, verdict, why : str, optional
        Who decided, how the tolerance was derived, the verdict (decided from value, op and
        tolerance when empty) and, for ``"not refereed"``, why.
    reps : int, optional
        Monte-Carlo repetitions.
    metrics : dict, optional
        Every other measured number.
    note : str, optional
        Free text.
    seconds : float, default 0.0
        Time taken.

    Raises
    ------
    ValueError
        A ``"not refereed"`` row without ``why``, or an unknown verdict or op.

    Examples
    --------
    >>> from ldpopt import verify
    >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
    >>> from ldpopt.methods.normalize import norm_sub
    >>> row = verify.check_equivalence(est, norm_sub, "cls", claim="norm-sub=cls")
    >>> row.verdict, row.referee
    ('holds', 'certificate')
    """

    claim: str
    statement: str
    kind: str
    oracle: str | None
    epsilon: float | None
    n: int | None
    d: int | None
    seed: int | None
    metric: str
    unit: str
    value: float
    op: str
    tolerance: float | None
    expected: bool | None
    referee: str = ""
    tolerance_basis: str = ""
    verdict: str = ""
    why: str = ""
    reps: int | None = None
    metrics: dict = field(default_factory=dict)
    note: str = ""
    seconds: float = 0.0

    def __post_init__(self):
        self.value = float(self.value) if self.value is not None else math.nan
        self.tolerance = None if self.tolerance is None else float(self.tolerance)
        if self.verdict == NOT_REFEREED:
            if not self.why:
                raise ValueError("a row that is not refereed must say why")
        elif self.verdict == "":
            self.verdict = decide(self.value, self.op, self.tolerance)
        elif self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def holds(self) -> bool:
        """Whether the verdict is ``"holds"``.

        Examples
        --------
        >>> from ldpopt import verify
        >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
        >>> from ldpopt.methods.normalize import norm_sub
        >>> verify.check_equivalence(est, norm_sub, "cls").holds
        True
        """
        return self.verdict == HOLDS

    def as_row(self) -> dict:
        """A flat dict; ``metrics`` as a JSON string with full-precision floats.

        Returns
        -------
        dict
            One entry per field (a row of :func:`run`'s DataFrame).

        Examples
        --------
        >>> from ldpopt import verify
        >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
        >>> from ldpopt.methods.normalize import norm_sub
        >>> row = verify.check_equivalence(est, norm_sub, "cls").as_row()
        >>> row["claim"], isinstance(row["metrics"], str)
        ('custom', True)
        """
        row = asdict(self)
        row["metrics"] = dumps(self.metrics, sort_keys=True)
        return row


def not_refereed(why: str, **kw) -> ClaimResult:
    """A row whose referee could not decide (solver failure, size limit, …): never a failure."""
    kw.setdefault("value", math.nan)
    kw.setdefault("tolerance", None)
    return ClaimResult(verdict=NOT_REFEREED, why=why, **kw)


def jsonable(obj):
    """Plain Python types; non-finite floats as the strings 'nan', 'inf', '-inf' (valid JSON).
    Finite floats stay floats: ``json`` writes them with ``repr`` (shortest round-trip), so
    6.25e-14 stays 6.25e-14."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else str(v)
    return obj


def dumps(obj, **kw) -> str:
    return json.dumps(jsonable(obj), allow_nan=False, **kw)
