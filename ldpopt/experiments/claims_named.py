"""Deprecated: moved to :mod:`ldpopt.experiments.claims.named`; this path keeps working for one release."""

from .._deprecated import moved

moved(globals(), "ldpopt.experiments.claims.named")
