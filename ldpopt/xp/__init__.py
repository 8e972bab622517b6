"""Closed-form post-processing on an array namespace: the same code on numpy arrays (the host) or on
CuPy arrays (a GPU), so that counts aggregated on the device are post-processed there without a
copy. :mod:`.forms`: Norm, Norm-Mul, Base-Pos, Base-Cut, Norm-Sub, MLE-Apx; :mod:`.cut`: Norm-Cut,
Norm-Hyb; :mod:`.mle`: the exact GRR MLE and the binomial EM; :mod:`.check`: ldpopt's check of a
simplex closed form. Each equals its ``ldpopt.methods`` / ``ldpopt.problems`` counterpart on numpy
(``tests/test_xp.py``, ``tests/test_xp_check.py``), so this folder sits one floor above both.

Notes: docs/notes/devices.md, "ldpopt.xp.forms"."""

#: the four modules are the interface (``from ldpopt.xp import forms``), outside the API listing as
#: they were under kernels/ (docs/devices.md lists them)
__all__: list[str] = []
