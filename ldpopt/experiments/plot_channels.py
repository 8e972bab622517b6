"""Deprecated: moved to :mod:`ldpopt.experiments.figures.channels`; this path keeps working for one release."""

from .._deprecated import moved

moved(globals(), "ldpopt.experiments.figures.channels")
