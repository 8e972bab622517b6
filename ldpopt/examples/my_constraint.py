"""A constraint type of your own: the first k values together hold at most a share cap (docs/extending.md).

    sum_{v < k} f_v <= cap

e.g. "the k most popular items (listed first in the counts file) hold at most 60 % of the mass", a
known upper bound from a public source. One linear row, so ldpopt knows everything about it: its
residual, g(f) = sum_{v<k} f_v - cap (the form cvxpy writes for "<="), its Jacobian (ones on the first
k values), its row for the structured solver, and its problem-file entry:

    [[constraints]]
    type = "head_share"
    k = 3
    cap = 0.6

Use it as ``Problem(est, "cls", [Simplex(), HeadShare(3, 0.6)])``, or in a problem file with
``modules = ["my_constraint.py"]`` (or ``type = "my_constraint.py:HeadShare"``).
"""

import numbers
from typing import ClassVar

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ldpopt.problems import Constraint, register_constraint
from ldpopt.problems.registry import Kind


@register_constraint
class HeadShare(Constraint):
    """sum of the first k values <= cap (the module docstring)."""

    default_name = "head_share"
    file_type = "head_share"
    file_kind = Kind("the first k values (rows of the counts file) hold at most cap", ("k", "cap"))
    file_example: ClassVar[dict] = {"type": "head_share", "k": 2, "cap": 0.3}  # for a domain of 6 values

    def __init__(self, k: int, cap: float, name=None):
        super().__init__(name)
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if isinstance(cap, bool) or not isinstance(cap, numbers.Real) or not np.isfinite(cap):
            raise ValueError(f"cap must be a finite number, got {cap!r}")
        self.k, self.cap = int(k), float(cap)

    @classmethod
    def from_file(cls, entry):
        k = entry.get("k")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= entry.d:
            raise entry.error(f"k must be an integer in [1, {entry.d}], got {k!r}")
        return [cls(k, entry.number("cap"))]

    def _rows(self, d):
        if self.k > d:
            raise ValueError(f"k = {self.k} exceeds the number of values d = {d}")
        return slice(0, self.k)

    def build(self, f, estimate):
        return [(self.name, cp.sum(f[self._rows(estimate.d)]) <= self.cap)]

    def residuals(self, f, estimate):
        return [max(float(np.sum(f[self._rows(estimate.d)])) - self.cap, 0.0)]

    def g(self, k, f, d):
        return np.array([float(np.sum(f[self._rows(d)])) - self.cap]), False

    def jacobian_t(self, k, y, d):
        out = np.zeros(d)
        out[self._rows(d)] = float(np.asarray(y).reshape(-1)[0])
        return out

    def compile_into(self, rows, keys, d):
        ones = sp.csr_matrix((np.ones(self.k), (np.zeros(self.k, int), np.arange(self.k))), shape=(1, d))
        self._rows(d)
        rows.add_rows(ones, self.cap, True, keys[0], scalar=True)  # one "<=" row, its dual a number
        rows.others += 1

    def __repr__(self):
        return f"HeadShare(k={self.k}, cap={self.cap}, name={self.name!r})"
