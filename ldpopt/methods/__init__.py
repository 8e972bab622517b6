"""Closed-form post-processing methods of Wang et al. and Jia & Gong, behind one registry.

>>> import ldpopt
>>> f = ldpopt.postprocess(estimate, "norm-sub")          # doctest: +SKIP
>>> ldpopt.methods.available()                           # Table-1 metadata as a DataFrame
"""

from __future__ import annotations

from .. import _deprecated
from .registry import (
    MethodInfo,
    ProblemStatement,
    available,
    get,
    names,
    parameters,
    postprocess,
    register,
    resolve,
    unregister,
)

# isort: off
# registration order is the order of names(): the closed forms, then the iterative and fitted methods
from . import baseline, normalize, mle  # noqa: F401  (register the closed forms)
from . import deployments  # noqa: F401  (registers clip-round, nnls-round: what deployments release)
from . import wiener, shrink  # noqa: F401  (the ordered-domain Wiener filters; empirical-Bayes shrinkage)
from . import em  # noqa: F401  (registers "em")
from . import bayes  # noqa: F401  (registers power, power-ns, calibrate)
# isort: on

__all__ = ["MethodInfo", "ProblemStatement", "available", "get", "names", "parameters", "postprocess",
           "register", "resolve", "unregister"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "FAMILIES": "ldpopt.methods.registry",
})
