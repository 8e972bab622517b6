"""Mechanisms designed for a workload: McKenna et al.'s LDP matrix mechanism (PVLDB 2020), an
ε-LDP strategy chosen by projected gradient descent, returned as a frequency oracle.

Notes: docs/notes/design.md, "ldpopt.design"."""

from __future__ import annotations

from . import workloads
from .compare import compare
from .exact import LDPCheck, exp_lower, verify_ldp
from .linalg import reconstruction
from .optimize import Design, design, objective, per_value_error, project_columns
from .oracle import DesignedOracle

__all__ = ["Design", "DesignedOracle", "LDPCheck", "compare", "design", "exp_lower", "objective", "per_value_error",
           "project_columns", "reconstruction", "verify_ldp", "workloads"]
