"""A constraint type of your own: the first k values together hold at most a share cap (docs/extending.md).

Notes: docs/notes/extending.md, "ldpopt.examples.my_constraint".
"""

import numbers
from typing import ClassVar

import numpy as np

from ldpopt.problems import LinearConstraint, register_constraint
from ldpopt.problems.registry import Kind


@register_constraint
class HeadShare(LinearConstraint):
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

    def rows(self, d):
        """sum_{v < k} f_v <= cap as one row (ldpopt derives everything else from it)."""
        if self.k > d:
            raise ValueError(f"k = {self.k} exceeds the number of values d = {d}")
        return np.r_[np.ones(self.k), np.zeros(d - self.k)], self.cap, "<="

    def __repr__(self):
        return f"HeadShare(k={self.k}, cap={self.cap}, name={self.name!r})"
