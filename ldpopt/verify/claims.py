"""Deprecated: moved to :mod:`ldpopt.verify.equivalences`; this path keeps working for one release."""

from .._deprecated import moved

moved(globals(), "ldpopt.verify.equivalences")
