r"""The verification suite (``ldpopt verify``): the papers' claims as checks that say exactly what
they checked.

Details: docs/experiments.md, section `ldpopt.verify`.
"""

from .. import _deprecated
from .equivalences import EQUIVALENCES, certificate_metrics, check_equivalence
from .instances import LIKELIHOOD_MAX_D, instance
from .report import failures, findings, summary
from .result import ClaimResult, decide
from .runner import run

# the underscore names are re-exported for benchmarks/bench_solvers.py (``x as x`` marks a re-export)
from .tolerances import _SCS_OPTS as _SCS_OPTS
from .tolerances import _gradient_scale as _gradient_scale
from .tolerances import _hessian_diag as _hessian_diag
from .tolerances import _solver_tolerance as _solver_tolerance

_instance = instance  # the old private name (tests, benchmarks)

_deprecated.install({"ldpopt.verify.claims": "ldpopt.verify.equivalences"})  # its name before, one release

__all__ = [
    "EQUIVALENCES",
    "LIKELIHOOD_MAX_D",
    "ClaimResult",
    "certificate_metrics",
    "check_equivalence",
    "decide",
    "failures",
    "findings",
    "instance",
    "run",
    "summary",
]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "EXIT_FAIL": "ldpopt.verify.report",
    "EXIT_NOT_REFEREED": "ldpopt.verify.report",
    "EXIT_OK": "ldpopt.verify.report",
    "EXIT_USAGE": "ldpopt.verify.report",
    "KKT_TOL": "ldpopt.verify.tolerances",
    "MC_MAX_D": "ldpopt.verify.instances",
    "SOLVER_MAX_D": "ldpopt.verify.instances",
    "check_mle_formulas": "ldpopt.verify.equivalences",
    "exit_code": "ldpopt.verify.report",
    "not_refereed_rows": "ldpopt.verify.report",
    "render_json": "ldpopt.verify.report",
    "render_text": "ldpopt.verify.report",
    "simplex_kkt": "ldpopt.verify.tolerances",
    "true_histogram": "ldpopt.verify.instances",
})
