"""Closed-form post-processing methods of Wang et al. and Jia & Gong, behind one registry.

>>> import ldpopt
>>> f = ldpopt.postprocess(estimate, "norm-sub")          # doctest: +SKIP
>>> ldpopt.methods.available()                           # Table-1 metadata as a DataFrame
"""

from __future__ import annotations

from . import baseline, bayes, em, mle, normalize  # noqa: F401  (register the closed forms)
from .registry import MethodInfo, available, get, postprocess, register

__all__ = ["MethodInfo", "available", "get", "postprocess", "register"]
