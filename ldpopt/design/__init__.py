"""Mechanisms designed for a workload: McKenna et al.'s LDP matrix mechanism (PVLDB 2020), an
ε-LDP strategy chosen by projected gradient descent, returned as a frequency oracle.

Notes: docs/notes/design.md, "ldpopt.design"."""

from __future__ import annotations

from .. import _deprecated
from . import workloads
from .compare import compare
from .exact import LDPCheck, verify_ldp
from .linalg import reconstruction
from .optimize import Design, design, objective
from .oracle import DesignedOracle

__all__ = ["Design", "DesignedOracle", "LDPCheck", "compare", "design", "objective", "reconstruction", "verify_ldp", "workloads"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "exp_lower": "ldpopt.design.exact",
    "per_value_error": "ldpopt.design.optimize",
    "project_columns": "ldpopt.design.optimize",
})
