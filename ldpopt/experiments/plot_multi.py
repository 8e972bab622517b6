"""Deprecated: moved to :mod:`ldpopt.experiments.figures.multi`; this path keeps working for one release."""

from .._deprecated import moved

moved(globals(), "ldpopt.experiments.figures.multi")
