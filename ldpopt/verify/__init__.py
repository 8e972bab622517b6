r"""The verification suite (``ldpopt verify``): the papers' claims as checks that say exactly what
they checked.

Details: docs/experiments.md, section `ldpopt.verify`.
"""

from .. import _deprecated
from .equivalences import EQUIVALENCES, certificate_metrics, check_equivalence, check_mle_formulas
from .instances import LIKELIHOOD_MAX_D, MC_MAX_D, SOLVER_MAX_D, instance, true_histogram
from .report import (
    EXIT_FAIL,
    EXIT_NOT_REFEREED,
    EXIT_OK,
    EXIT_USAGE,
    exit_code,
    failures,
    findings,
    not_refereed_rows,
    render_json,
    render_text,
    summary,
)
from .result import ClaimResult, decide
from .runner import run

# KKT_TOL and simplex_kkt are public; the underscore names are re-exported for
# benchmarks/bench_solvers.py (``x as x`` marks a re-export).
from .tolerances import _SCS_OPTS as _SCS_OPTS
from .tolerances import KKT_TOL, simplex_kkt
from .tolerances import _gradient_scale as _gradient_scale
from .tolerances import _hessian_diag as _hessian_diag
from .tolerances import _solver_tolerance as _solver_tolerance

_instance = instance  # the old private name (tests, benchmarks)

_deprecated.install({"ldpopt.verify.claims": "ldpopt.verify.equivalences"})  # its name before, one release

__all__ = [
    "EQUIVALENCES",
    "EXIT_FAIL",
    "EXIT_NOT_REFEREED",
    "EXIT_OK",
    "EXIT_USAGE",
    "KKT_TOL",
    "LIKELIHOOD_MAX_D",
    "MC_MAX_D",
    "SOLVER_MAX_D",
    "ClaimResult",
    "certificate_metrics",
    "check_equivalence",
    "check_mle_formulas",
    "decide",
    "exit_code",
    "failures",
    "findings",
    "instance",
    "not_refereed_rows",
    "render_json",
    "render_text",
    "run",
    "simplex_kkt",
    "summary",
    "true_histogram",
]
