r"""The verification suite (``ldpopt verify``): the papers' claims as checks that say exactly what
they checked.

Layout (one concern per module):

* :mod:`.result` — :class:`ClaimResult`, one row: claim, instance as run, referee, metric/unit,
  value op tolerance, verdict ∈ {holds, fails, not refereed (why)}; full-precision JSON.
* :mod:`.instances` — deterministic true histograms, simulated estimates, referee size limits.
* :mod:`.tolerances` — tolerances from stated accuracies: float64 rounding, solver stopping
  criteria, Monte-Carlo standard errors (floored at rounding); the frequency resolution 1/(10 d).
* :mod:`.equivalences` — the equivalence claims declared as data (:data:`EQUIVALENCES`) and their referees:
  the solver-free certificate of :mod:`ldpopt.problems.check.certificate` (any d) and cvxpy (small d).
* :mod:`.montecarlo` — bias, variance and order claims from seeded repetitions.
* :mod:`.runner` — the grid (:func:`run`); :mod:`.report` — summary, text/JSON, exit codes.
  The command-line options live in :mod:`ldpopt.cli.verify`.

Exit codes of ``ldpopt verify``: 0 every refereed row of a claim expected to hold holds; 1 some
such row fails; 2 usage or input error; 3 (only with ``--require-referee``) nothing fails but an
expected claim could not be refereed somewhere. A referee failure (solver error, infeasible,
inaccurate, size limit) is "not refereed", listed with why, and never gives 1 by itself.

No top-level cvxpy import here: the solver referee imports it when used.
"""

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
